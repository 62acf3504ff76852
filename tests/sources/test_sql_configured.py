"""``sql_database`` / ``sql_table`` arguments from configuration, and
``remove_nullability_adapter``, as dlt 1.31 (tests/fixtures/sources/sql_configured.json,
differential programs p472/p473).

loadstone read only the credentials from configuration: ``backend = "pyarrow"`` under
``[sources.sql_database]`` in config.toml was ignored (the rows came as dicts, typed by the
normalizer); and ``remove_nullability_adapter`` made every column nullable, where dlt takes
the database's word away (a primary key stays NOT NULL).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import loadstone
from loadstone.sources.sql_database import remove_nullability_adapter, sql_database, sql_table

DLT = json.loads(
    (Path(__file__).resolve().parents[1] / "fixtures/sources/sql_configured.json").read_text()
)


def _pages(resource: Any) -> list[list[object]]:
    """What iterating the resource yields: [type name, rows of a page or keys of a row]."""
    return [
        [type(page).__name__, getattr(page, "num_rows", None) or len(page)] for page in resource
    ]


@pytest.fixture
def configured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    path = tmp_path / "cfg.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            "create table a (id integer primary key, v text);"
            "insert into a values (1, 'x'), (2, 'y'), (3, 'z');"
            "create table b (k text primary key); insert into b values ('q');"
        )
    monkeypatch.setenv("SOURCES__SQL_DATABASE__CREDENTIALS", f"sqlite:///{path}")
    monkeypatch.setenv("SOURCES__SQL_DATABASE__BACKEND", "pyarrow")
    monkeypatch.setenv("SOURCES__SQL_DATABASE__CHUNK_SIZE", "2")
    return f"sqlite:///{path}"


def test_the_source_takes_backend_and_chunk_size_from_configuration(configured: str) -> None:
    resources = sql_database().resources
    assert {n: _pages(r) for n, r in resources.items()} == DLT["source_backend_and_chunk_size"]
    assert _pages(sql_table(table="a")) == DLT["table_backend_and_chunk_size"]


def test_the_tables_section_wins_and_code_wins_over_both(
    configured: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCES__SQL_DATABASE__A__BACKEND", "sqlalchemy")
    assert _pages(sql_table(table="a")) == DLT["table_section_wins"]
    assert _pages(sql_table(table="a", backend="pandas", chunk_size=5)) == DLT["code_wins"]


def test_table_names_come_from_configuration(
    configured: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCES__SQL_DATABASE__TABLE_NAMES", '["b"]')
    assert sorted(sql_database().resources) == DLT["table_names"]


@pytest.mark.parametrize("backend", ["sqlalchemy", "pyarrow"])
def test_nullability_removed_leaves_primary_keys_not_null(tmp_path: Path, backend: str) -> None:
    path = tmp_path / "n.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            "create table a (id integer primary key, v text not null, w text);"
            "insert into a values (1, 'x', null), (2, 'y', 'q');"
            "create table b (k text primary key not null, n int not null);"
            "insert into b values ('q', 1);"
        )
    pipeline = loadstone.pipeline(
        f"nonull_{backend}",
        destination=loadstone.destinations.duckdb(str(tmp_path / "out.duckdb")),
        dataset_name="d",
        pipelines_dir=str(tmp_path / "pipelines"),
    )
    pipeline.run(
        sql_database(
            f"sqlite:///{path}", backend=backend, table_adapter_callback=remove_nullability_adapter
        )
    )
    got = {
        name: {
            c: [v.get("data_type"), v.get("nullable"), v.get("primary_key")]
            for c, v in pipeline.default_schema.get_table(name)["columns"].items()
            if not c.startswith("_dlt")
        }
        for name in ("a", "b")
    }
    assert got == DLT["nullability_removed"][backend]


@pytest.mark.parametrize("whole", [None, "sqlite:///elsewhere.db"])
def test_credentials_come_from_their_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, whole: str | None
) -> None:
    """dlt 1.31 reads the credentials' parts one by one too
    (``SOURCES__SQL_DATABASE__CREDENTIALS__DATABASE``, differential program p1440): with
    them alone, or over a connection string, whose part they replace."""
    path = tmp_path / "parts.db"
    with sqlite3.connect(path) as conn:
        conn.executescript("create table a (id integer primary key); insert into a values (1);")
    if whole is not None:
        monkeypatch.setenv("SOURCES__SQL_DATABASE__CREDENTIALS", whole)
    monkeypatch.setenv("SOURCES__SQL_DATABASE__CREDENTIALS__DRIVERNAME", "sqlite")
    monkeypatch.setenv("SOURCES__SQL_DATABASE__CREDENTIALS__DATABASE", str(path))
    assert sorted(sql_database().resources) == ["a"]
    assert list(sql_table(table="a")) == [{"id": 1}]
