"""A query adapter's ``text(...)`` query read by the ``pyarrow`` backend, as dlt 1.31 reads it.

Such a query has no column types, so SQLite returns the stored text of a ``DATETIME``
(``2024-05-01 00:00:00``); dlt parses it into the reflected timestamp column (its outcome
in tests/fixtures/sources/sql_text_query.json, differential program p469). loadstone left
the text in the page and the normalizer refused it (``string values cannot be stored as
timestamp``), so the run failed.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import duckdb
import sqlalchemy as sa

import loadstone
from loadstone.sources.sql_database import sql_table

DLT = json.loads(
    (Path(__file__).resolve().parents[1] / "fixtures/sources/sql_text_query.json").read_text()
)


def _text_query(query: Any, table: Any) -> Any:
    return sa.text("select id, name, updated from items order by updated")


def test_a_text_query_loads_its_timestamps_as_under_dlt(tmp_path: Path) -> None:
    path = tmp_path / "src.db"
    with sqlite3.connect(path) as conn:
        conn.execute(
            "create table items (id integer primary key, name text, price numeric(8,2),"
            " cat_id integer, updated datetime not null)"
        )
        rows = [
            (i, f"it{i}", f"{i}.25", 1 + i % 2, f"2024-05-{i:02d} 00:00:00") for i in range(1, 7)
        ]
        rows.append((15, "new", "1.00", 2, "2024-06-01 00:00:00"))
        conn.executemany("insert into items values (?,?,?,?,?)", rows)
    pipeline = loadstone.pipeline(
        "text_query",
        destination=loadstone.destinations.duckdb(str(tmp_path / "out.duckdb")),
        dataset_name="d",
        pipelines_dir=str(tmp_path / "pipelines"),
    )
    pipeline.run(
        sql_table(
            f"sqlite:///{path}",
            table="items",
            backend="pyarrow",
            query_adapter_callback=_text_query,
        )
    )
    with duckdb.connect(str(tmp_path / "out.duckdb"), read_only=True) as conn:
        columns = conn.execute(
            "select column_name, data_type, is_nullable from information_schema.columns where "
            "table_schema = 'd' and table_name = 'items' and column_name not like '_dlt%' "
            "order by ordinal_position"
        ).fetchall()
        loaded = conn.execute(
            "select id, name, cast(updated as varchar) from d.items order by id"
        ).fetchall()
    assert [list(c) for c in columns] == DLT["columns"]
    assert [list(r) for r in loaded] == DLT["rows"]
