"""``backend_kwargs`` of ``sql_table`` / ``sql_database`` reach the backend, as in dlt 1.31.

The same probes (``tests/compat/backend_kwargs_probes.py``) ran under dlt against the
tests' PostgreSQL; its answers are in ``tests/fixtures/sql_database/dlt_backend_kwargs.json``
(``tests/compat/record_backend_kwargs.py``). ``pyarrow`` takes ``tz``, ``pandas`` takes
``pandas.read_sql``'s options, ``sqlalchemy`` ignores them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import locations
import pytest

import loadstone
from loadstone.sources.sql_database import sql_database, sql_table
from tests.compat.backend_kwargs_probes import CASES, TABLE, create_table, outcome

RECORDED: dict[str, Any] = json.loads(
    (locations.FIXTURES / "sql_database" / "dlt_backend_kwargs.json").read_text()
)["outcome"]


@pytest.fixture(scope="module")
def table_url(postgres_url: str) -> str:
    create_table(postgres_url)
    return postgres_url


@pytest.mark.parametrize("case", sorted(CASES))
def test_backend_kwargs_reach_the_backend_as_in_dlt(table_url: str, case: str) -> None:
    assert outcome(sql_table, table_url, case) == RECORDED[case]


def test_a_time_zone_given_to_pyarrow_loads_the_same_instants(
    table_url: str, tmp_path: Path
) -> None:
    pipeline = loadstone.pipeline(
        "bk_tz",
        destination=loadstone.destinations.duckdb(str(tmp_path / "bk.duckdb")),
        pipelines_dir=str(tmp_path),
    )
    source = sql_database(
        table_url, table_names=[TABLE], backend="pyarrow", backend_kwargs={"tz": "Asia/Tokyo"}
    )
    pipeline.run(source)
    with pipeline.sql_client() as client:
        rows = client.execute_sql(f"SELECT id, epoch(ts) FROM {TABLE} ORDER BY id")
    assert [tuple(r) for r in rows] == [(1, 1704096000.0), (2, None)]
