"""What a ``type_adapter_callback`` changes: the column's hints, not how its values are read.

dlt 1.31's outcomes (tests/fixtures/sources/sql_type_adapter.json, recorded by running the
same program under dlt, differential program p455): a ``sa.Date`` given for a SQLite
``DATETIME`` loads dates (loadstone read the column as dates and failed on the stored text
``2024-04-12 08:00:00``); a ``sa.Text()`` given for a ``DATE`` loads its text.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pytest
import sqlalchemy as sa

import loadstone
from loadstone.sources.sql_database import sql_table

DLT = json.loads(
    (Path(__file__).resolve().parents[1] / "fixtures/sources/sql_type_adapter.json").read_text()
)


def _date_class_for_datetime(sql_type: Any) -> Any:
    return sa.Date if isinstance(sql_type, sa.DateTime) else sql_type


def _text_for_date(sql_type: Any) -> Any:
    return sa.Text() if isinstance(sql_type, sa.Date) else sql_type


ADAPTERS: dict[str, Callable[[Any], Any]] = {
    "date_class_for_datetime": _date_class_for_datetime,
    "text_for_date": _text_for_date,
}


def _source_db(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        conn.executescript(
            "create table t (id integer primary key, email varchar(100) not null,"
            " bal numeric(10,2), day date, at datetime, flag boolean, ratio real);"
            "insert into t values (1, 'a@b', 10.25, '2024-04-12', '2024-04-12 08:00:00', 1, 0.5);"
            "insert into t values (2, 'c@d', 99.999, null, '2024-04-13 09:00:00', 0, null);"
        )
    return f"sqlite:///{path}"


@pytest.mark.parametrize("backend", ["sqlalchemy", "pyarrow"])
@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_adapted_columns_load_as_under_dlt(tmp_path: Path, backend: str, adapter: str) -> None:
    url = _source_db(tmp_path / "src.db")
    pipeline = loadstone.pipeline(
        f"adapter_{backend}",
        destination=loadstone.destinations.duckdb(str(tmp_path / "out.duckdb")),
        dataset_name="d",
        pipelines_dir=str(tmp_path / "pipelines"),
    )
    table = sql_table(
        url,
        table="t",
        backend=backend,
        reflection_level="full_with_precision",
        type_adapter_callback=ADAPTERS[adapter],
    )
    pipeline.run(table)
    with duckdb.connect(str(tmp_path / "out.duckdb"), read_only=True) as conn:
        columns = conn.execute(
            "select column_name, data_type from information_schema.columns where "
            "table_schema = 'd' and table_name = 't' and column_name in ('day', 'at') "
            "order by ordinal_position"
        ).fetchall()
        rows = conn.execute(
            'select cast("day" as varchar), cast("at" as varchar) from d.t order by id'
        ).fetchall()
    expected = DLT[f"{backend}_{adapter}"]
    assert dict(columns) == expected["columns"]
    assert [list(r) for r in rows] == expected["rows"]


def test_no_type_adapter_is_called_at_minimal(tmp_path: Path) -> None:
    """dlt 1.31 reflects no types at ``minimal``, so it has none to adapt (seen: no call)."""
    url = _source_db(tmp_path / "src.db")
    seen: list[object] = []
    table = sql_table(url, table="t", reflection_level="minimal", type_adapter_callback=seen.append)
    assert len(list(table)) == 2
    assert seen == []
