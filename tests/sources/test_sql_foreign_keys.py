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


def test_unnamed_foreign_keys_keep_their_reflected_order(tmp_path: Path) -> None:
    """SQLite's keys have no names: the joined reference lists them in the order SQLite
    reflects them on every reflection. SQLAlchemy holds them in a set, whose order varies:
    dlt 1.31 gives ``[other_id, parent_id]`` in some runs and ``[parent_id, other_id]`` in
    others, so the stored schema changed between runs of the same program."""
    import sqlite3

    import sqlalchemy as sa

    from loadstone.sources.sql_database.foreign_keys import table_references

    db = tmp_path / "fk.db"
    with sqlite3.connect(db) as conn:
        conn.executescript(
            "CREATE TABLE parent (id INTEGER PRIMARY KEY);"
            "CREATE TABLE child (id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES"
            " parent(id), other_id INTEGER REFERENCES parent(id));"
        )
    engine = sa.create_engine(f"sqlite:///{db}")
    kept = []  # the tables stay alive, so the sets get new addresses each time
    for _ in range(40):
        table = sa.Table("child", sa.MetaData(), autoload_with=engine)
        kept.append(table)
        assert table_references(table) == [
            {
                "referenced_table": "parent",
                "referenced_columns": ["id", "id"],
                "columns": ["other_id", "parent_id"],
            }
        ]
    engine.dispose()
