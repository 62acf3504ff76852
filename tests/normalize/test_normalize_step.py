"""The normalize step on its own: packages extracted into a working folder are normalized
without a pipeline, and the folder keeps the schema they evolved."""

from __future__ import annotations

from pathlib import Path

from loadstone.extract.resource_hints import TableHints
from loadstone.extract.step import ExtractContext, ExtractStep
from loadstone.normalize.step import NormalizeStep, NormalizeStepContext
from loadstone.runtime.recorder import StepRecorder
from loadstone.runtime.target import DestinationTarget, resolve_destination
from loadstone.runtime.working_folder import WorkingFolder
from loadstone.storage.load_package import NORMALIZED, iter_pending


def test_the_normalize_step_normalizes_extracted_packages_without_a_pipeline(
    tmp_path: Path,
) -> None:
    folder = WorkingFolder(tmp_path / "pipelines", "solo")
    folder.open()
    target = DestinationTarget(resolve_destination("duckdb"), "solo", lambda: "solo_data")
    recorder = StepRecorder(None)
    rows = [{"id": 1, "tags": [{"n": "a"}, {"n": "b"}]}]
    ExtractStep(ExtractContext(folder, target, recorder)).extract(rows, "items", TableHints(), None)

    done = NormalizeStep(NormalizeStepContext(folder, target, recorder)).normalize_pending()

    [package] = list(iter_pending(folder.packages_dir))
    assert done == [package.load_id]
    assert package.state == NORMALIZED
    counts = {name: t.row_count for name, t in package.normalized_tables().items()}
    assert counts == {"items": 1, "items__tags": 2}
    schema = folder.schemas["solo"]
    assert schema.has_table("items__tags") and schema.has_table(schema.state_table_name)


def test_nothing_extracted_is_nothing_normalized(tmp_path: Path) -> None:
    folder = WorkingFolder(tmp_path / "pipelines", "empty")
    folder.open()
    target = DestinationTarget(resolve_destination("duckdb"), "empty", lambda: "d")
    step = NormalizeStep(NormalizeStepContext(folder, target, StepRecorder(None)))
    assert step.normalize_pending() == []
