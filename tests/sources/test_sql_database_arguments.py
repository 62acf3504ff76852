"""Arguments of ``sql_database`` that dlt 1.31 refuses when the source is made, refused the
same way (the message is dlt's, observed by running the same call under dlt 1.31)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import loadstone
from loadstone.sources.sql_database import sql_database, sql_table


@pytest.mark.parametrize("table_names", [None, []])
def test_deferred_reflection_without_table_names_is_refused(
    tmp_path: Path, table_names: list[str] | None
) -> None:
    path = tmp_path / "src.db"
    with sqlite3.connect(path) as conn:
        conn.execute("create table orders (id integer primary key)")
    with pytest.raises(ValueError) as refused:
        sql_database(f"sqlite:///{path}", table_names=table_names, defer_table_reflect=True)
    assert str(refused.value) == "You must pass `table_names` to defer table reflection"


def test_deferred_reflection_with_table_names_makes_their_resources(tmp_path: Path) -> None:
    path = tmp_path / "src.db"
    with sqlite3.connect(path) as conn:
        conn.execute("create table orders (id integer primary key)")
    source = sql_database(f"sqlite:///{path}", table_names=["orders"], defer_table_reflect=True)
    assert list(source.resources) == ["orders"]


@pytest.mark.parametrize(
    ("level", "keys"),
    [
        # dlt 1.31's outcome (sqlalchemy backend): the type before primary_key when reflected,
        # after it when the type comes from the data
        ("minimal", ["name", "nullable", "primary_key", "data_type"]),
        ("full", ["name", "nullable", "data_type", "primary_key"]),
        ("full_with_precision", ["name", "nullable", "data_type", "primary_key"]),
    ],
)
def test_a_key_columns_hint_keys_come_in_dlts_order(
    tmp_path: Path, level: str, keys: list[str]
) -> None:
    """A printed column schema shows its keys in dlt's order."""
    path = tmp_path / "k.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (id INTEGER NOT NULL PRIMARY KEY, s TEXT)")
        conn.execute("INSERT INTO t VALUES (1, 'a')")
    pipeline = loadstone.pipeline(
        "key_order",
        destination=loadstone.destinations.duckdb(str(tmp_path / "k.duckdb")),
        dataset_name="d",
        pipelines_dir=str(tmp_path / "pipelines"),
    )
    pipeline.run(sql_table(f"sqlite:///{path}", table="t", reflection_level=level))
    assert list(pipeline.default_schema.get_table("t")["columns"]["id"]) == keys
