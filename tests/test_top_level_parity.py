"""The top-level names dlt users touch that loadstone provides (``dir(dlt)`` in dlt 1.31:
``Dataset``, ``Relation``, ``TSecretValue``, ``TSecretStrValue``, ``version`` beside the
pipeline, source and configuration names)."""

from __future__ import annotations

from pathlib import Path

import pytest

import loadstone as dlt

#: names of dlt 1.31's ``dir(dlt)`` that loadstone provides with the same meaning
DLT_NAMES = [
    "Dataset",
    "dataset",
    "Pipeline",
    "Relation",
    "Schema",
    "TSecretStrValue",
    "TSecretValue",
    "attach",
    "config",
    "current",
    "destinations",
    "mark",
    "pipeline",
    "resource",
    "run",
    "secrets",
    "source",
    "sources",
    "transformer",
    "version",
]


def test_dlts_names_are_there() -> None:
    assert [name for name in DLT_NAMES if name not in dir(dlt)] == []


def test_version_is_a_module_with_the_version() -> None:
    # dlt: dlt.version is a module; dlt.version.__version__ == "1.31.0"
    assert dlt.version.__version__ == dlt.__version__
    assert dlt.version.PKG_NAME == "loadstone"


def test_dataset_and_relation_are_what_a_pipeline_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    pipeline = dlt.pipeline(
        "top", destination="duckdb", dataset_name="ds", pipelines_dir=str(tmp_path / "pl")
    )
    pipeline.run([{"a": 1}], table_name="t")
    dataset = pipeline.dataset()
    assert isinstance(dataset, dlt.Dataset)
    assert isinstance(dataset["t"], dlt.Relation)


def test_dataset_reads_what_a_pipeline_loaded_without_the_pipeline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # dlt 1.31: dlt.dataset(dlt.destinations.duckdb(path), "ds") reads the pipeline's tables
    monkeypatch.chdir(tmp_path)
    pipeline = dlt.pipeline(
        "reader", destination="duckdb", dataset_name="ds", pipelines_dir=str(tmp_path / "pl")
    )
    pipeline.run([{"a": 1}, {"a": 2}], table_name="t")
    dataset = dlt.dataset(dlt.destinations.duckdb(str(tmp_path / "reader.duckdb")), "ds")
    assert isinstance(dataset, dlt.Dataset)
    assert sorted(row[0] for row in dataset["t"].fetchall()) == [1, 2]
    assert dataset.row_counts().fetchall() == [("t", 2)]
    named = dlt.dataset(
        dlt.destinations.duckdb(str(tmp_path / "reader.duckdb")), "ds", schema="reader"
    )
    assert len(named["t"].fetchall()) == 2


def test_dataset_by_destination_name_opens_its_default_location(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # dlt 1.31: dlt.dataset("duckdb", "ds") opens ./duckdb.duckdb (the destination's name)
    monkeypatch.chdir(tmp_path)
    pipeline = dlt.pipeline(
        "duckdb", destination="duckdb", dataset_name="ds", pipelines_dir=str(tmp_path / "pl")
    )
    pipeline.run([{"a": 1}], table_name="t")
    assert (tmp_path / "duckdb.duckdb").exists()
    assert dlt.dataset("duckdb", "ds").row_counts().fetchall() == [("t", 1)]
