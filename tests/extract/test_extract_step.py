"""The extract step on its own: a working folder, a destination target, a recorder -- no
pipeline -- and a package comes out, with the schema and state the folder keeps."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from loadstone.extract.resource_hints import TableHints
from loadstone.extract.step import ExtractContext, ExtractStep
from loadstone.runtime.recorder import StepRecorder
from loadstone.runtime.target import DestinationTarget, resolve_destination
from loadstone.runtime.working_folder import WorkingFolder
from loadstone.storage.load_package import EXTRACTED, iter_pending


def _context(tmp_path: Path) -> ExtractContext:
    folder = WorkingFolder(tmp_path / "pipelines", "solo")
    folder.open()
    target = DestinationTarget(resolve_destination("duckdb"), "solo", lambda: "solo_data")
    return ExtractContext(folder, target, StepRecorder(None))


def test_the_extract_step_writes_a_package_without_a_pipeline(tmp_path: Path) -> None:
    context = _context(tmp_path)
    result = ExtractStep(context).extract(
        [{"id": 1}, {"id": 2}], "items", TableHints(write_disposition="append"), None
    )
    assert result.items == 2
    packages = list(iter_pending(context.folder.packages_dir))
    assert [p.state for p in packages] == [EXTRACTED]
    assert packages[0].extracted_tables() == ["items"]
    # the folder names the schema and saved it, with the state stamped for the target
    assert context.folder.state["default_schema_name"] == "solo"
    assert (context.folder.schemas_dir / "solo.schema.json").is_file()
    assert context.folder.state["dataset_name"] == "solo_data"
    assert "extract" in context.recorder.steps


def test_a_package_started_is_reported_to_the_context(tmp_path: Path) -> None:
    started: list[tuple[str, str]] = []
    context = attrs.evolve(_context(tmp_path), on_package=lambda s, i: started.append((s, i)))
    result = ExtractStep(context).extract([{"a": 1}], "t", TableHints(), None)
    assert started == [("extract", result.package.load_id)]


def test_the_context_is_frozen(tmp_path: Path) -> None:
    context = _context(tmp_path)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        context.recorder = StepRecorder(None)  # type: ignore[misc]
