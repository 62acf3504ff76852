"""``resolve_foreign_keys=True`` gives each table the ``references`` of its foreign keys,
as dlt 1.31: one reference per table pointed at (keys to the same table joined), when the
table is reflected or, deferred, with its first rows.

The programs of ``tests/compat/foreign_key_probes.py`` ran under dlt on the tests'
PostgreSQL; its answers are in ``tests/fixtures/sql_database/dlt_foreign_keys.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import locations
import pytest

import loadstone
from loadstone.sources.sql_database import sql_database, sql_table
from tests.compat.foreign_key_probes import references_outcome

RECORDED: dict[str, Any] = json.loads(
    (locations.FIXTURES / "sql_database" / "dlt_foreign_keys.json").read_text()
)["outcome"]


@pytest.fixture(scope="module")
def outcome(postgres_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    workdir: Path = tmp_path_factory.mktemp("foreign_keys")
    return references_outcome(loadstone, sql_database, sql_table, postgres_url, workdir)


@pytest.mark.parametrize("case", sorted(RECORDED))
def test_foreign_keys_become_references_as_in_dlt(outcome: dict[str, Any], case: str) -> None:
    assert outcome[case] == RECORDED[case]
