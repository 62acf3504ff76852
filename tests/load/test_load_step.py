"""The load step on its own: normalized packages of a working folder are loaded into a
DuckDB file without a pipeline, and a package already committed is not loaded twice."""

from __future__ import annotations

from pathlib import Path

import duckdb

from loadstone.extract.resource_hints import TableHints
from loadstone.extract.step import ExtractContext, ExtractStep
from loadstone.load.step import LoadContext, LoadStep
from loadstone.normalize.step import NormalizeStep, NormalizeStepContext
from loadstone.runtime.recorder import StepRecorder
from loadstone.runtime.target import DestinationTarget, resolve_destination
from loadstone.runtime.working_folder import WorkingFolder
from loadstone.storage.load_package import LOADED, list_packages


def _normalized(tmp_path: Path) -> tuple[WorkingFolder, DestinationTarget, Path]:
    database = tmp_path / "solo.duckdb"
    destination = resolve_destination("duckdb").configured(credentials=str(database))
    folder = WorkingFolder(tmp_path / "pipelines", "solo")
    folder.open()
    target = DestinationTarget(destination, "solo", lambda: "solo_data")
    recorder = StepRecorder(None)
    rows = [{"id": 1}, {"id": 2}]
    ExtractStep(ExtractContext(folder, target, recorder)).extract(rows, "items", TableHints(), None)
    NormalizeStep(NormalizeStepContext(folder, target, recorder)).normalize_pending()
    return folder, target, database


def test_the_load_step_loads_normalized_packages_without_a_pipeline(tmp_path: Path) -> None:
    folder, target, database = _normalized(tmp_path)

    info = LoadStep(LoadContext(folder, target, StepRecorder(None))).load_pending()

    assert [p.state for p in info.packages] == [LOADED]
    assert info.dataset_name == "solo_data" and info.destination_location == str(database)
    assert [p.state for p in list_packages(folder.packages_dir)] == [LOADED]
    with duckdb.connect(str(database)) as conn:
        assert conn.execute("SELECT id FROM solo_data.items ORDER BY id").fetchall() == [
            (1,),
            (2,),
        ]
    assert folder.state["_local"]["first_run"] is False


def test_a_package_the_destination_committed_is_skipped(tmp_path: Path) -> None:
    folder, target, database = _normalized(tmp_path)
    step = LoadStep(LoadContext(folder, target, StepRecorder(None)))
    [package] = list_packages(folder.packages_dir)
    first = step.load_package(package, StepRecorder(None).begin("load"))
    assert not first.skipped
    package.set_state("normalized")  # as a kill between the commit and the switch leaves it
    again = step.load_package(package, StepRecorder(None).begin("load"))
    assert again.skipped
    with duckdb.connect(str(database)) as conn:
        assert conn.execute("SELECT count(*) FROM solo_data.items").fetchall() == [(2,)]
