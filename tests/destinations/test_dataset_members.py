"""dlt 1.31's members of ``pipeline.dataset()`` and its relations (``schema``, ``schemas``,
``load_ids()``, ``latest_load_id()``, ``loads_table()``, ``sql_client``,
``destination_client``, ``is_same_dataset``; ``columns_schema``, ``schema``, ``filter``,
``from_loads``, ``with_load_id_col``, ``to_sql``, ``query_dialect``, ``head``) answer as
dlt's: one program (fixtures/dataset/members_program.py) ran under dlt 1.31 on DuckDB and
PostgreSQL (dlt_members.json, recorded by record_members.py) and runs here under loadstone;
each of its outcomes is one test."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from postgres_support import drop_datasets, unique_dataset

import loadstone

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "dataset"
RECORDED: dict[str, dict[str, Any]] = json.loads((FIXTURES / "dlt_members.json").read_text())
OUTCOMES = sorted(RECORDED["duckdb"])


def _program() -> Any:
    spec = importlib.util.spec_from_file_location(
        "members_program", FIXTURES / "members_program.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(destination: Any, dataset: str, tmp: Path) -> dict[str, Any]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LOADSTONE_HOME", str(tmp / "home"))
        answers = _program().members(loadstone, destination, dataset, str(tmp / "pipelines"))
    # through JSON, as the fixture was written: tuples become lists
    return dict(json.loads(json.dumps(answers, default=str)))


@pytest.fixture(scope="module")
def duckdb_answers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("members_duckdb")
    return _run(loadstone.destinations.duckdb(str(tmp / "members.duckdb")), "ds", tmp)


@pytest.fixture(scope="module")
def postgres_answers(
    tmp_path_factory: pytest.TempPathFactory, postgres_url: str
) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("members_postgres")
    dataset = unique_dataset("members")
    try:
        yield _run(loadstone.destinations.postgres(credentials=postgres_url), dataset, tmp)
    finally:
        drop_datasets(postgres_url, dataset)


@pytest.mark.parametrize("outcome", OUTCOMES)
def test_duckdb_member_answers_as_dlt(duckdb_answers: dict[str, Any], outcome: str) -> None:
    assert duckdb_answers[outcome] == RECORDED["duckdb"][outcome]


@pytest.mark.parametrize("outcome", OUTCOMES)
def test_postgres_member_answers_as_dlt(postgres_answers: dict[str, Any], outcome: str) -> None:
    assert postgres_answers[outcome] == RECORDED["postgres"][outcome]
