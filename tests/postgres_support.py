"""Helpers of the PostgreSQL tests: a dataset of their own, a pipeline into it, the dlt fixtures."""

from __future__ import annotations

import gzip
import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg

import loadstone

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "postgres"


def fixture(case: str, naming: str) -> dict[str, Any]:
    """What dlt 1.31 made for ``case`` with ``naming`` (recorded by fixtures/postgres/record.py)."""
    return json.loads(gzip.decompress((FIXTURES / f"{case}__{naming}.json.gz").read_bytes()))


def dataset_name(case: str, naming: str) -> str:
    """The dataset name the recorder used (every convention keeps it as it is)."""
    return f"{case}_{naming.replace('_', '')}"


def unique_dataset(prefix: str = "t") -> str:
    return f"{prefix}_{uuid.uuid4().hex[:10]}"


@contextmanager
def connection(url: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(url, autocommit=True) as conn:
        yield conn


def drop_datasets(url: str, *datasets: str) -> None:
    with connection(url) as conn:
        for name in datasets:
            for schema in (name, f"{name}_staging"):
                conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def pipeline(
    url: str,
    dataset: str,
    tmp_path: Path,
    naming: str | None = None,
    name: str = "pg",
    pipelines_dir: Path | None = None,
) -> Any:
    destination = loadstone.destinations.postgres(credentials=url, naming_convention=naming)
    return loadstone.pipeline(
        pipeline_name=name,
        destination=destination,
        dataset_name=dataset,
        pipelines_dir=str(pipelines_dir or tmp_path / "pipelines"),
    )


def rows(url: str, sql: str) -> list[tuple[Any, ...]]:
    with connection(url) as conn:
        return conn.execute(sql).fetchall()
