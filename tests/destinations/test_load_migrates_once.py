"""A package's schema changes are applied once, inside the load, on every SQL destination.

The pipeline used to migrate the dataset before ``load_package``, which migrated it again in
its transaction: every catalog read and ``_dlt_version`` check ran twice per package.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from postgres_support import drop_datasets, unique_dataset

import loadstone
from loadstone.plugins.destinations.duckdb.client import DuckDBClient
from loadstone.plugins.destinations.postgres.client import PostgresClient

ITEMS = [{"id": 1, "pets": [{"name": "a"}]}, {"id": 2, "extra": "x", "pets": []}]


def _count_migrations(monkeypatch: pytest.MonkeyPatch, client_class: type) -> list[int]:
    calls: list[int] = []
    migrate = client_class._migrate

    def counted(self: Any, *args: Any) -> list[str]:
        calls.append(1)
        return migrate(self, *args)

    monkeypatch.setattr(client_class, "_migrate", counted)
    return calls


@pytest.fixture
def pg_dataset(postgres_url: str) -> Iterator[str]:
    name = unique_dataset()
    yield name
    drop_datasets(postgres_url, name)


def test_duckdb_migrates_once_per_package(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    calls = _count_migrations(monkeypatch, DuckDBClient)
    pipe = loadstone.pipeline(
        pipeline_name="once",
        destination=loadstone.destinations.duckdb(str(tmp_path / "once.duckdb")),
        pipelines_dir=str(tmp_path / "pipelines"),
    )
    pipe.run(ITEMS, table_name="users")
    pipe.run(ITEMS, table_name="users")
    assert len(calls) == 2


def test_postgres_migrates_once_per_package(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, postgres_url: str, pg_dataset: str
) -> None:
    calls = _count_migrations(monkeypatch, PostgresClient)
    pipe = loadstone.pipeline(
        pipeline_name="once",
        destination=loadstone.destinations.postgres(credentials=postgres_url),
        dataset_name=pg_dataset,
        pipelines_dir=str(tmp_path / "pipelines"),
    )
    pipe.run(ITEMS, table_name="users")
    pipe.run(ITEMS, table_name="users")
    assert len(calls) == 2
