"""``print(pipeline.dataset())`` and ``print(dataset.table)`` read as dlt 1.31's
(differential program p642): where the dataset is and the data tables of each schema, a
relation's query and its columns with their types (the query is loadstone's SQL)."""

from __future__ import annotations

from pathlib import Path

import pytest
from postgres_support import drop_datasets, unique_dataset

import loadstone as dlt


@pytest.fixture
def pipeline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dlt.Pipeline:
    monkeypatch.chdir(tmp_path)
    p = dlt.pipeline("rs", destination="duckdb", dataset_name="drs", pipelines_dir="pl")
    p.run([{"id": 1, "l": [1], "n": {"a": 1.5}}], table_name="t")
    p.run([{"k": 1}], table_name="u")
    return p


def test_a_dataset_names_its_place_and_its_tables(pipeline: dlt.Pipeline, tmp_path: Path) -> None:
    assert str(pipeline.dataset()) == (
        f"Dataset `drs` at `duckdb[duckdb:///{tmp_path / 'rs.duckdb'}]` with schema `rs`:\n"
        "  t, t__l, u"
    )


def test_a_dataset_of_several_schemas_lists_each(pipeline: dlt.Pipeline) -> None:
    pipeline.run([{"a": 1}], table_name="zz", schema=dlt.Schema("other"))
    text = str(pipeline.dataset())
    assert text.endswith(" with schemas:\n  rs: t, t__l, u\n  other: zz")
    assert str(pipeline.dataset(schema="other")).endswith(" with schema `other`:\n  zz")


def test_a_dataset_the_destination_lacks_says_so(tmp_path: Path) -> None:
    p = dlt.pipeline("none", destination="duckdb", dataset_name="dn", pipelines_dir=str(tmp_path))
    assert str(p.dataset()).endswith("` \nDataset is not available at the destination.\n")


def test_a_relation_shows_its_query_and_typed_columns(pipeline: dlt.Pipeline) -> None:
    text = str(pipeline.dataset().t.select("id", "n__a"))
    query, columns = text.split("\nColumns:\n")
    assert query.startswith("Relation query:\n  SELECT")
    assert columns == "  id bigint\n  n__a double\n"


def test_a_postgres_dataset_hides_the_password(postgres_url: str, tmp_path: Path) -> None:
    dataset = unique_dataset("txt")
    destination = dlt.destinations.postgres(credentials=postgres_url)
    p = dlt.pipeline(
        "pgtxt", destination=destination, dataset_name=dataset, pipelines_dir=str(tmp_path)
    )
    try:
        p.run([{"a": 1}], table_name="t")
        text = str(p.dataset())
    finally:
        drop_datasets(postgres_url, dataset)
    assert ":***@" in text and text.startswith(f"Dataset `{dataset}` at `postgres[postgresql://")
    assert text.endswith(" with schema `pgtxt`:\n  t")
