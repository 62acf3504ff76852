"""dlt 1.31's members of ``pipeline.sql_client()`` that loadstone lacked (differential
programs p852, p853): ``execute_many``, ``capabilities``, ``with_staging_dataset()``; and
``pipeline.get_load_package_state(load_id)``. dlt's outcomes are in
fixtures/dataset/dlt_sql_client_members.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import loadstone as dlt
from loadstone.exceptions import PackageNotFound

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "dataset"
DLT: dict[str, Any] = json.loads((FIXTURES / "dlt_sql_client_members.json").read_text())


@pytest.fixture
def pipeline(tmp_path: Path) -> dlt.Pipeline:
    p = dlt.pipeline(
        "sc",
        destination=dlt.destinations.duckdb(str(tmp_path / "sc.duckdb")),
        dataset_name="d",
        pipelines_dir=str(tmp_path / "pl"),
    )
    p.run([{"a": 1}], table_name="t")
    return p


def _lists(answer: object) -> object:
    return json.loads(json.dumps(answer))  # tuples as lists, as the fixture holds them


def test_execute_many_answers_with_each_batchs_last_statement(pipeline: dlt.Pipeline) -> None:
    with pipeline.sql_client() as c:
        assert c.execute_many([]) == DLT["execute_many_empty"]
        assert c.execute_many(["CREATE TABLE d.x (a BIGINT)"]) == DLT["execute_many_ddl"]
        assert _lists(c.execute_many(["SELECT 1", "SELECT 2"])) == DLT["execute_many_last_answers"]
        inserted = c.execute_many(["INSERT INTO d.x VALUES (1)", "INSERT INTO d.x VALUES (%s)"], 5)
        assert _lists(inserted) == DLT["execute_many_with_args"]
        c.execute_many(["INSERT INTO d.x VALUES (7);", "INSERT INTO d.x VALUES (8);"])
        assert _lists(c.execute_sql("SELECT a FROM d.x ORDER BY a")) == DLT["ids_after"]


def test_capabilities_are_the_destinations(pipeline: dlt.Pipeline) -> None:
    with pipeline.sql_client() as c:
        assert c.capabilities == pipeline.destination.capabilities
        assert c.capabilities.max_identifier_length == 65536


def test_with_staging_dataset_works_on_the_staging_dataset_then_returns(
    pipeline: dlt.Pipeline,
) -> None:
    with pipeline.sql_client() as c:
        with c.with_staging_dataset() as staged:
            assert staged is c
            assert c.dataset_name == DLT["staging_dataset_name"]
            assert c.fully_qualified_dataset_name() == DLT["staging_qualified"]
            assert c.has_dataset() is DLT["staging_has_dataset_before_create"]
            c.create_dataset()
            assert c.has_dataset()
            c.execute_sql(f"CREATE TABLE {c.make_qualified_table_name('st')} (a INT)")
        assert c.dataset_name == DLT["dataset_name_after"]
        assert c.execute_sql("SELECT count(*) FROM d_staging.st") == [(0,)]


def test_a_package_state_carries_the_pipeline_state_row_of_a_state_change(
    pipeline: dlt.Pipeline,
) -> None:
    first = pipeline.get_load_package_state(pipeline.list_completed_load_packages()[0])
    assert sorted(first) == DLT["package_state_keys"]
    assert sorted(first["pipeline_state"]) == DLT["pipeline_state_keys"]
    assert first["pipeline_state"]["pipeline_name"] == "sc"
    info = pipeline.run([{"a": 2}], table_name="t")
    second = pipeline.get_load_package_state(info.loads_ids[0])
    assert sorted(second) == DLT["package_state_keys_without_state_change"]


def test_an_unknown_package_has_no_state(pipeline: dlt.Pipeline) -> None:
    with pytest.raises(PackageNotFound):
        pipeline.get_load_package_state("123.456")


def test_execute_many_answers_as_duckdb_answers_the_batchs_text(pipeline: dlt.Pipeline) -> None:
    """dlt 1.31 sends a batch as one SQL text, and DuckDB answers with the last statement
    that has rows: ``SELECT 7`` then an UPDATE answers [(7,)], where loadstone answered the
    UPDATE's count (differential program p1116)."""
    with pipeline.sql_client() as c:
        assert c.execute_many(["SELECT 7", "UPDATE d.t SET a = a + 1"]) == [[(7,)]]
        assert c.execute_sql("SELECT a FROM d.t") == [(2,)]  # the UPDATE ran
