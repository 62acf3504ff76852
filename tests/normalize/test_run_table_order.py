"""The tables and columns a first run adds, in dlt 1.31's order (the Schema probes of
``tests/schema/test_schema_object_dlt.py`` compare the whole schema with dlt's recording):
roots in the order they got their first page, the state table, then nested tables; a column declared
without a type that no row fills stays in the schema as an incomplete column, and creates
nothing at the destination."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

import loadstone as dlt


@dlt.resource(primary_key="id", columns={"note": {"nullable": True, "description": "never"}})
def users() -> Any:
    yield [{"id": 1, "tags": [{"t": "x"}]}]


@dlt.resource
def empties() -> Any:
    yield [{"nothing": None}]


def _run(tmp_path: Path) -> Any:
    pipe = dlt.pipeline(
        "order",
        destination=dlt.destinations.duckdb(str(tmp_path / "order.duckdb")),
        dataset_name="ds",
        pipelines_dir=str(tmp_path / "pipelines"),
    )
    pipe.run([users(), empties()])
    return pipe


def test_roots_in_resource_order_then_state_then_nested(tmp_path: Path) -> None:
    schema = _run(tmp_path).default_schema
    assert list(schema.tables) == [
        "_dlt_version",
        "_dlt_loads",
        "users",
        "empties",
        "_dlt_pipeline_state",
        "users__tags",
    ]


def test_an_untyped_hint_column_stays_incomplete_and_is_not_created(tmp_path: Path) -> None:
    schema = _run(tmp_path).default_schema
    assert dict(schema.get_table_columns("users", include_incomplete=True)["note"]) == {
        "name": "note",
        "nullable": True,
        "description": "never",
    }
    with duckdb.connect(str(tmp_path / "order.duckdb")) as conn:
        columns = conn.execute(
            "select column_name from information_schema.columns "
            "where table_schema = 'ds' and table_name = 'users' order by ordinal_position"
        ).fetchall()
    assert [c[0] for c in columns] == ["id", "_dlt_load_id", "_dlt_id"]
