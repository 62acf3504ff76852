"""dlt 1.31's arguments of the pipeline's own methods, as dlt programs pass them
(found by differential programs p99 and p100 against dlt 1.31)."""

from __future__ import annotations

from pathlib import Path

import pytest

import loadstone as dlt


def _pipeline(tmp_path: Path, name: str = "steps") -> dlt.Pipeline:
    return dlt.pipeline(
        name,
        destination=dlt.destinations.duckdb(str(tmp_path / "steps.duckdb")),
        dataset_name="d",
        pipelines_dir=str(tmp_path / "pipelines"),
    )


def test_drop_starts_the_pipeline_again_and_returns_it(tmp_path: Path) -> None:
    pipeline = _pipeline(tmp_path)
    pipeline.run([{"a": 1}], table_name="t")
    assert pipeline.drop() is pipeline
    assert (pipeline.first_run, pipeline.default_schema_name, pipeline.schema_names) == (
        True,
        None,
        [],
    )
    pipeline.run([{"a": 2}], table_name="t")  # restored from the destination, then loaded
    assert sorted(pipeline.dataset()["t"].select("a").fetchall()) == [(1,), (2,)]
    other = pipeline.drop(pipeline_name="steps_copy")
    assert other is not pipeline and other.pipeline_name == "steps_copy"
    assert other.dataset_name == "d"


def test_a_pipeline_dropped_under_another_name_loads_into_the_same_duckdb_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """dlt 1.31 (p279): drop("copy") of a pipeline on the default DuckDB file (named after
    the pipeline) gives a pipeline that loads into that file, not into copy.duckdb."""
    monkeypatch.chdir(tmp_path)
    pipeline = dlt.pipeline("first", destination="duckdb", dataset_name="d")
    pipeline.run([{"a": 1}], table_name="t")
    copy = pipeline.drop(pipeline_name="copy")
    copy.run([{"a": 2}], table_name="t")
    assert sorted(p.name for p in tmp_path.glob("*.duckdb")) == ["first.duckdb"]
    assert sorted(copy.dataset()["t"].select("a").fetchall()) == [(1,), (2,)]


def test_sync_destination_to_another_dataset_keeps_it(tmp_path: Path) -> None:
    """dlt 1.31 (p282): sync_destination(dataset_name=...) switches the pipeline to that
    dataset for good: a pipeline attached afterwards names it."""
    pipeline = _pipeline(tmp_path)
    pipeline.run([{"a": 1}], table_name="t")
    pipeline.run([{"a": 2}], table_name="t", dataset_name="two")
    pipeline.sync_destination(dataset_name="d")
    attached = dlt.attach("steps", pipelines_dir=str(tmp_path / "pipelines"))
    assert (pipeline.dataset_name, attached.dataset_name) == ("d", "d")
    assert pipeline.dataset()["t"].select("a").fetchall() == [(1,)]


def test_the_steps_take_dlts_arguments(tmp_path: Path) -> None:
    pipeline = _pipeline(tmp_path)
    pipeline.extract([{"a": 1}], table_name="t")
    pipeline.normalize(workers=2)
    info = pipeline.load(workers=4, raise_on_failed_jobs=True)
    assert not info.has_failed_jobs
    pipeline.drop_pending_packages(with_partial_loads=False)
    pipeline.sync_destination(dataset_name="d")
    assert pipeline.default_schema_name == "steps"


def test_a_wrong_argument_is_a_type_error_not_a_failed_step(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match=r"Pipeline.normalize\(\) got an unexpected keyword"):
        _pipeline(tmp_path).normalize(loader_file_format="parquet")
