"""Arguments of ``sql_database`` that dlt 1.31 refuses when the source is made, refused the
same way (the message is dlt's, observed by running the same call under dlt 1.31)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from loadstone.sources.sql_database import sql_database


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
