"""``loadstone.dataset(destination, name)`` reads the schema the dataset's loads stored, as
dlt 1.31's ``dlt.dataset()`` does: its name, tables and their columns (observed under dlt
1.31 by differential program p270: ``ds.schema.name`` is the pipeline's schema, its tables
those the pipeline made)."""

from __future__ import annotations

from pathlib import Path

import loadstone as dlt


def _loaded(tmp_path: Path) -> str:
    path = str(tmp_path / "shared.duckdb")
    pipe = dlt.pipeline(
        "writer", destination=dlt.destinations.duckdb(path), dataset_name="ds",
        pipelines_dir=str(tmp_path / "pl"),
    )  # fmt: skip
    pipe.run([{"a": 1, "n": {"x": [1, 2]}}], table_name="t")
    return path


def test_the_newest_stored_schema_is_the_datasets(tmp_path: Path) -> None:
    ds = dlt.dataset(dlt.destinations.duckdb(_loaded(tmp_path)), "ds")
    assert ds.schema.name == "writer"
    assert {"t", "t__n__x"} <= set(ds.schema.tables)
    assert ds.schema.tables["t__n__x"]["parent"] == "t"


def test_a_schema_named_is_read_from_the_destination(tmp_path: Path) -> None:
    ds = dlt.dataset(dlt.destinations.duckdb(_loaded(tmp_path)), "ds", schema="writer")
    assert sorted(ds.schema.tables["t"]["columns"]) == ["_dlt_id", "_dlt_load_id", "a"]


def test_a_dataset_that_holds_nothing_has_an_empty_schema_of_its_name(tmp_path: Path) -> None:
    ds = dlt.dataset(dlt.destinations.duckdb(str(tmp_path / "empty.duckdb")), "nothing")
    assert ds.schema.name == "nothing"
    assert ds.schema.data_table_names() == []
