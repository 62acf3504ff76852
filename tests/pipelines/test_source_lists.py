"""``run([...])`` of a list that holds sources: what dlt 1.31 does is the compat scenario
``sources_and_resources_in_one_list``; these are the cases around it."""

from __future__ import annotations

from pathlib import Path

import pytest

import loadstone as dlt
from loadstone.exceptions import PipelineStepFailed


def _pipeline(tmp_path: Path) -> dlt.Pipeline:
    return dlt.pipeline(
        "lists",
        destination=dlt.destinations.duckdb(str(tmp_path / "lists.duckdb")),
        dataset_name="d",
        pipelines_dir=str(tmp_path / "pipelines"),
    )


def test_two_sources_of_one_name_load_the_rows_of_both(tmp_path: Path) -> None:
    @dlt.source
    def numbers(n: int):
        return dlt.resource([{"n": n}], name="numbers")

    pipeline = _pipeline(tmp_path)
    pipeline.run([numbers(1), numbers(2)])
    assert sorted(pipeline.dataset()["numbers"].select("n").fetchall()) == [(1,), (2,)]


def test_a_source_listed_with_plain_rows_is_refused_and_nothing_loads(tmp_path: Path) -> None:
    @dlt.source
    def one():
        return dlt.resource([{"a": 1}], name="a")

    pipeline = _pipeline(tmp_path)
    with pytest.raises(PipelineStepFailed, match="may hold only sources and resources"):
        pipeline.run([one(), [{"b": 2}]])
    assert not (tmp_path / "lists.duckdb").exists()  # not even created


def test_the_dataset_lists_the_other_schemas_tables_last_and_reads_them(tmp_path: Path) -> None:
    @dlt.source
    def alpha():
        return dlt.resource([{"a": 1}], name="a_rows")

    @dlt.source
    def beta():
        return dlt.resource([{"b": 1}, {"b": 2}], name="b_rows")

    pipeline = _pipeline(tmp_path)
    pipeline.run([beta(), alpha()])
    dataset = pipeline.dataset()
    assert pipeline.default_schema_name == "alpha"
    # dlt 1.31: the default schema's tables, then the other schemas' data tables
    assert [t for t in dataset.tables if not t.startswith("_dlt")] == ["a_rows", "b_rows"]
    assert {"a_rows", "b_rows", "_dlt_loads"} <= set(dataset.stored_tables)
    assert sorted(dataset["b_rows"].select("b").fetchall()) == [(1,), (2,)]


def test_a_set_value_loads_as_a_list_in_sorted_order(tmp_path: Path) -> None:
    """dlt refuses a set (not JSON serializable); loadstone loads it as a list, sorted so that
    each member keeps its _dlt_list_idx from one process to the next (docs/migrating.md)."""
    pipeline = _pipeline(tmp_path)
    pipeline.run([{"id": 1, "tags": {"b", "c", "a"}, "ids": frozenset({3, 1, 2})}], table_name="t")
    tags = pipeline.dataset()["t__tags"].select("value", "_dlt_list_idx").order_by("_dlt_list_idx")
    assert tags.fetchall() == [("a", 0), ("b", 1), ("c", 2)]
    ids = pipeline.dataset()["t__ids"].select("value", "_dlt_list_idx").order_by("_dlt_list_idx")
    assert ids.fetchall() == [(1, 0), (2, 1), (3, 2)]
