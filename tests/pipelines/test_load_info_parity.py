"""``LoadInfo`` and ``PipelineTrace`` read as dlt's: wording, members, steps one by one.

The expected texts are dlt 1.31's, observed with the same programs (``import dlt``), with
the times, load ids and paths of this test put in. Where loadstone differs on purpose the
test says so (``destination_type`` names loadstone's factory).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

import loadstone as dlt
from loadstone.runtime.load_info import LoadInfo, PackageInfo, StepInfo
from loadstone.runtime.trace import PipelineTrace

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "pipeline"
T0 = 1_795_637_398.0
UTC0 = dt.datetime.fromtimestamp(T0, dt.timezone.utc)


def _info(location: str = "/data/p4.duckdb") -> LoadInfo:
    package = PackageInfo(
        load_id="1795637398.2894907",
        schema_name="p4",
        state="loaded",
        row_counts={"users": 2, "users__tags": 2},
        new_tables=["users", "users__tags"],
        new_columns={"users": ["id", "_dlt_id"]},
        state_table="_dlt_pipeline_state",
    )
    return LoadInfo(
        pipeline_name="p4",
        destination_name="duckdb",
        dataset_name="ds",
        destination_location=location,
        packages=[package],
        steps={"load": StepInfo("load", T0, T0 + 0.09, ["1795637398.2894907"], rows=4)},
        first_run=True,
    )


#: dlt 1.31's ``str(load_info)`` for one loaded package on DuckDB
DLT_STR = """\
Pipeline p4 load step finished in 0.09 seconds
1 load package(s) were loaded to destination duckdb and into dataset ds
The duckdb destination used duckdb:////data/p4.duckdb location to store data
Load package 1795637398.2894907 is LOADED and contains no failed jobs"""


def test_str_and_asstr_are_dlts_wording() -> None:
    info = _info()
    assert str(info) == DLT_STR
    assert info.asstr(verbosity=0) == DLT_STR
    assert info.asstr(verbosity=1) == DLT_STR  # dlt: the same four lines
    detailed = info.asstr(verbosity=2).splitlines()
    assert detailed[:5] == [*DLT_STR.splitlines(), "Package details:"]
    assert detailed[5] == (
        "The package with load id 1795637398.2894907 for schema p4 is in LOADED state. "
        "It updated schema for 2 tables."
    )
    assert "Jobs details:" in detailed
    assert "Job: _dlt_pipeline_state, table: _dlt_pipeline_state in completed_jobs." in detailed
    assert "Rows loaded per table:" in detailed  # loadstone's figures come last
    # what `loadstone run` prints: dlt's lines, then loadstone's figures
    assert info.with_figures().splitlines()[:4] == DLT_STR.splitlines()
    assert "Rows loaded per table:" in info.with_figures()


def test_members_users_read() -> None:
    info = _info()
    assert info.destination_name == "duckdb"
    # dlt: 'dlt.destinations.duckdb' (loadstone names its own factory)
    assert info.destination_type == "loadstone.destinations.duckdb"
    assert info.destination_displayable_credentials == "duckdb:////data/p4.duckdb"
    assert info.staging_name is None and info.staging_type is None
    assert info.first_run is True
    assert info.loads_ids == ["1795637398.2894907"]
    assert list(info.metrics) == info.loads_ids
    (metric,) = info.metrics["1795637398.2894907"]
    assert metric["started_at"] == UTC0
    assert metric["dataset_name"] == "ds"
    package = info.load_packages[0]
    assert package.state == "loaded"
    assert sorted(package.jobs) == ["completed_jobs", "failed_jobs", "new_jobs", "started_jobs"]
    tables = sorted(job.job_file_info.table_name for job in package.jobs["completed_jobs"])
    assert tables == ["_dlt_pipeline_state", "users", "users__tags"]  # dlt's three jobs
    assert {job.state for job in package.jobs["completed_jobs"]} == {"completed_jobs"}
    assert info.pipeline is None
    owner = object()
    assert LoadInfo("p", "duckdb", "ds", pipeline=owner).pipeline is owner


def test_a_location_that_is_a_url_is_shown_as_it_is() -> None:
    info = _info("postgresql://loadstone:***@127.0.0.1:5432/loadstone")
    assert info.destination_displayable_credentials == (
        "postgresql://loadstone:***@127.0.0.1:5432/loadstone"
    )


def test_info_round_trips_through_its_trace_form() -> None:
    info = _info()
    again = LoadInfo.from_dict(info.to_trace())
    assert str(again) == str(info)
    assert again.row_counts == info.row_counts
    assert again.load_packages[0].jobs == info.load_packages[0].jobs


def _steps_trace() -> PipelineTrace:
    """A trace of ``extract()``, ``normalize()``, ``load()`` called one by one."""
    load_id = "1795637398.2894907"

    def step(name: str, start: float, end: float, counts: dict[str, int]) -> dict[str, object]:
        return StepInfo(name, start, end, [load_id], row_counts=counts).asdict()

    info = _info()
    info.pipeline_name = "p7"
    trace = info.to_trace()  # what the trace of a load holds, then the steps and times
    trace.update(
        pipeline_name="p7",
        started_at=T0,
        kind="steps",
        finished_at=T0 + 0.38,
        steps={
            "extract": step("extract", T0, T0 + 0.05, {"t": 1}),
            "normalize": step(
                "normalize", T0 + 0.05, T0 + 0.08, {"t": 1, "_dlt_pipeline_state": 1}
            ),
            "load": step("load", T0 + 0.08, T0 + 0.37, {}),
        },
    )
    return PipelineTrace(trace)


def test_trace_of_steps_one_by_one_reads_as_dlts() -> None:
    trace = _steps_trace()
    assert [s.step for s in trace.steps] == ["extract", "normalize", "load"]
    assert trace.last_pipeline_step_trace("load").step == "load"
    assert trace.last_pipeline_step_trace("extract").step == "extract"
    assert trace.last_pipeline_step_trace("run") is None  # dlt: None
    text = str(trace)
    assert text == trace.asstr(verbosity=0)
    expected_start = f"""\
Run started at {UTC0} and COMPLETED in 0.38 seconds with 3 steps.
Step extract COMPLETED in 0.05 seconds.

Load package 1795637398.2894907 is EXTRACTED and NOT YET LOADED to the destination and \
contains no failed jobs

Step normalize COMPLETED in 0.03 seconds.
Normalized data for the following tables:
- t: 1 row(s)
- _dlt_pipeline_state: 1 row(s)

Load package 1795637398.2894907 is NORMALIZED and NOT YET LOADED to the destination and \
contains no failed jobs

Step load COMPLETED in 0.29 seconds.
Pipeline p7 load step finished in 0.29 seconds
1 load package(s) were loaded to destination duckdb and into dataset ds"""
    assert text.startswith(expected_start)
    assert text.endswith("is LOADED and contains no failed jobs")
    load_step = trace.last_pipeline_step_trace("load")
    assert isinstance(load_step.step_info, LoadInfo)
    assert trace.last_normalize_info.row_counts == {"t": 1, "_dlt_pipeline_state": 1}


def test_trace_of_run_ends_with_a_run_step_holding_the_load_info() -> None:
    trace = _steps_trace()
    trace["kind"] = "run"
    steps = trace.steps
    assert [s.step for s in steps] == ["extract", "normalize", "load", "run"]
    assert {type(s).__name__ for s in steps} == {"PipelineStepTrace"}  # dlt 1.31's (p1242)
    assert steps[-1].elapsed == pytest.approx(0.38)
    assert str(steps[-1]).startswith("Step run COMPLETED in 0.38 seconds.\nPipeline p7 load step")
    assert str(trace).startswith(
        f"Run started at {UTC0} and COMPLETED in 0.38 seconds with 4 steps."
    )


def test_a_failed_run_says_failed() -> None:
    trace = _steps_trace()
    trace["error"] = "PipelineStepFailed: boom"
    assert " and FAILED in 0.38 seconds with 3 steps." in str(trace).splitlines()[0]


# --- the same through a pipeline -------------------------------------------------------------


@pytest.fixture
def pipeline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dlt.Pipeline:
    monkeypatch.chdir(tmp_path)
    return dlt.pipeline(
        "parity", destination="duckdb", dataset_name="ds", pipelines_dir=str(tmp_path / "pl")
    )


def _users() -> object:
    @dlt.resource(name="users")
    def users() -> object:
        yield [{"id": 1, "tags": ["a", "b"]}, {"id": 2, "tags": []}]

    return users()


def test_a_run_reports_as_dlt(pipeline: dlt.Pipeline, tmp_path: Path) -> None:
    info = pipeline.run(_users())
    lines = str(info).splitlines()
    assert len(lines) == 4  # dlt's four lines, nothing else
    assert lines[0].startswith("Pipeline parity load step finished in ")
    assert lines[1] == "1 load package(s) were loaded to destination duckdb and into dataset ds"
    assert lines[2] == (
        f"The duckdb destination used duckdb:///{tmp_path / 'parity.duckdb'} location to store data"
    )
    assert lines[3] == f"Load package {info.loads_ids[0]} is LOADED and contains no failed jobs"
    assert info.first_run is True
    jobs = info.load_packages[0].jobs["completed_jobs"]
    # dlt names each job's file format (insert_values on DuckDB); loadstone loads Parquet
    formats = {j.job_file_info.table_name: j.job_file_info.file_format for j in jobs}
    assert formats == {"users": "parquet", "users__tags": "parquet", "_dlt_pipeline_state": None}
    assert sorted(j.job_file_info.table_name for j in jobs) == [
        "_dlt_pipeline_state",
        "users",
        "users__tags",
    ]
    trace = pipeline.last_trace
    assert trace is not None
    assert [s.step for s in trace.steps] == ["extract", "normalize", "load", "run"]
    assert trace.last_pipeline_step_trace("run") is not None
    # dlt: the first run's normalize counts the pipeline state's row
    assert dict(trace.last_normalize_info.row_counts) == {
        "_dlt_pipeline_state": 1,
        "users": 2,
        "users__tags": 2,
    }
    again = pipeline.run([{"a": 2}], table_name="t")
    assert again.first_run is False
    assert dict(pipeline.last_trace.last_normalize_info.row_counts) == {"t": 1}


def test_steps_one_by_one_leave_a_trace(pipeline: dlt.Pipeline) -> None:
    pipeline.extract([{"a": 1}], table_name="t")
    assert [s.step for s in pipeline.last_trace.steps] == ["extract"]
    pipeline.normalize()
    assert [s.step for s in pipeline.last_trace.steps] == ["extract", "normalize"]
    info = pipeline.load()
    trace = pipeline.last_trace
    assert trace is not None
    assert [s.step for s in trace.steps] == ["extract", "normalize", "load"]
    assert info.first_run is True
    assert trace.last_pipeline_step_trace("run") is None
    assert dict(trace.last_normalize_info.row_counts) == {"t": 1, "_dlt_pipeline_state": 1}
    assert str(trace).startswith("Run started at ")


def test_trace_steps_have_dlts_times_and_infos(pipeline: dlt.Pipeline) -> None:
    """dlt 1.31: every time of a trace is a pendulum DateTime (step times too, so
    ``finished_at - started_at`` works), an extract / normalize step's ``step_info`` is its
    ExtractInfo / NormalizeInfo, and ``step_exception`` is None for a step that succeeded."""
    import pendulum

    pipeline.run([{"a": 1}], table_name="t")
    trace = pipeline.last_trace
    steps = trace.steps
    assert isinstance(trace.started_at, pendulum.DateTime)
    assert all(isinstance(s.started_at, pendulum.DateTime) for s in steps)
    assert all(isinstance(s.finished_at - s.started_at, dt.timedelta) for s in steps)
    assert [type(s.step_info).__name__ for s in steps] == [
        "ExtractInfo",
        "NormalizeInfo",
        "LoadInfo",
        "LoadInfo",
    ]
    assert [s.step_exception for s in steps] == [None] * 4


@dlt.resource(name="bad")
def _bad() -> Any:
    """A resource that fails after its first row."""
    yield {"a": 1}
    raise ValueError("boom")


def test_a_failed_runs_trace_holds_the_errors_text_as_step_exception(
    pipeline: dlt.Pipeline,
) -> None:
    """dlt 1.31: the failed step and the run step carry ``str(exception)`` (no class name)."""

    with pytest.raises(dlt.PipelineStepFailed) as failed:
        pipeline.run(_bad())
    steps = pipeline.last_trace.steps
    assert [s.step for s in steps] == ["extract", "run"]
    assert [s.step_exception for s in steps] == [str(failed.value)] * 2


def test_load_info_names_its_pipeline(pipeline: dlt.Pipeline) -> None:
    assert pipeline.run([{"a": 1}], table_name="t").pipeline is pipeline


def test_trace_of_a_load_step_shows_its_load_info(pipeline: dlt.Pipeline) -> None:
    pipeline.extract([{"a": 1}], table_name="t")
    pipeline.normalize()
    pipeline.load()
    text = str(pipeline.last_trace)
    assert "1 load package(s) were loaded to destination duckdb and into dataset ds" in text


def _loaded_package() -> PackageInfo:
    """A package as the load step records it: one file, its size, when it was made and
    loaded, the schema update of its first load."""
    return PackageInfo(
        load_id="1795637398.2894907",
        schema_name="p4",
        state="loaded",
        row_counts={"users": 2},
        files=["/pkg/normalized/users/c00000-a0-0001.parquet"],
        new_tables=["users"],
        file_sizes={"/pkg/normalized/users/c00000-a0-0001.parquet": 875},
        created_at=T0,
        completed_at=T0 + 0.5,
        schema_update=[{"name": "users", "columns": []}, {"name": "_dlt_loads", "columns": []}],
    )


def test_a_packages_text_is_dlts_wording_with_its_jobs() -> None:
    assert str(_loaded_package()).splitlines() == [
        "The package with load id 1795637398.2894907 for schema p4 is in LOADED state. "
        f"It updated schema for 2 tables. The package was LOADED at {UTC0 + dt.timedelta(0, 0.5)}.",
        "Jobs details:",
        "Job: c00000-a0-0001.parquet, table: users in completed_jobs. File type: parquet, "
        f"size: 875B. Started on: {UTC0} and completed in 0.50 seconds.",
    ]


def test_a_packages_asdict_lists_its_jobs_and_schema_update_as_dlt() -> None:
    data = _loaded_package().asdict()
    (job,) = data["jobs"]
    assert job["job_id"] == "c00000-a0-0001.parquet" and job["table_name"] == "users"
    assert job["file_size"] == 875 and job["file_format"] == "parquet"
    assert job["state"] == "completed_jobs" and job["created_at"] == UTC0
    assert data["completed_at"] == UTC0 + dt.timedelta(0, 0.5)
    assert [table["name"] for table in data["tables"]] == ["users", "_dlt_loads"]
    assert data["schema_migrated"] is True


def test_the_trace_form_keeps_the_package_details() -> None:
    package = _loaded_package()
    assert PackageInfo.from_dict(package.to_trace()) == package


def test_a_packages_schema_update_is_dlts_tables_by_name(pipeline: dlt.Pipeline) -> None:
    """dlt 1.31 (differential program p601): ``schema_update`` maps each table the package
    changed to its partial schema; a table that only gained a column holds that column."""
    first = pipeline.run([{"id": 1, "n": {"x": [1]}}], table_name="t").load_packages[0]
    assert sorted(first.schema_update) == [
        "_dlt_loads", "_dlt_pipeline_state", "_dlt_version", "t", "t__n__x"
    ]  # fmt: skip
    assert list(first.schema_update["t"]["columns"]) == ["id", "_dlt_load_id", "_dlt_id"]
    assert first.schema_update["t"]["columns"]["id"] == {
        "name": "id", "data_type": "bigint", "nullable": True
    }  # fmt: skip
    second = pipeline.run([{"id": 2, "z": "q"}], table_name="t").load_packages[0]
    assert second.schema_update == {
        "t": {
            "columns": {"z": {"name": "z", "data_type": "text", "nullable": True}},
            "write_disposition": "append",
            "name": "t",
            "resource": "t",
            "x-normalizer": {"seen-data": True},
        }
    }
    (table,) = second.asdict()["tables"]
    assert [column["name"] for column in table["columns"]] == ["z"]  # dlt's asdict() too
    third = pipeline.run([{"id": 3}], table_name="t").load_packages[0]
    assert third.schema_update == {}


def test_a_failed_step_names_its_pipeline_and_info_as_dlt(pipeline: dlt.Pipeline) -> None:
    """dlt 1.31 (differential program p620): ``PipelineStepFailed.step_info`` is the failed
    step's info (``ExtractInfo``, ``NormalizeInfo``) and ``.pipeline`` the pipeline."""

    with pytest.raises(dlt.PipelineStepFailed) as failed:
        pipeline.run(_bad())
    assert failed.value.step == "extract" and failed.value.pipeline is pipeline
    assert type(failed.value.step_info).__name__ == "ExtractInfo"
    pipeline.run([{"id": 1}], table_name="t", columns={"id": {"nullable": False}})
    with pytest.raises(dlt.PipelineStepFailed) as failed:
        pipeline.run([{"id": None}], table_name="t")
    assert failed.value.step == "normalize" and failed.value.pipeline is pipeline
    assert type(failed.value.step_info).__name__ == "NormalizeInfo"


def test_extract_data_info_names_the_kind_of_a_lists_first_item(pipeline: dlt.Pipeline) -> None:
    """dlt 1.31 (differential program p629): a list of dicts is ``dict`` data, of ints
    ``int``; an empty list stays ``list``."""
    kinds = [
        pipeline.extract(data, table_name="t").extract_data_info[0]["data_type"]
        for data in ([{"a": 1}], [1, 2], ({"a": 1},), [], [[{"a": 1}]])
    ]
    assert kinds == ["dict", "int", "dict", "list", "list"]


def test_trace_and_info_members_read_as_dlts(pipeline: dlt.Pipeline) -> None:
    """dlt 1.31 (differential program p628): members a program reads beside the counts."""
    info = pipeline.run([{"a": 1}], table_name="t")
    assert info.environment is None
    trace = pipeline.last_trace
    assert trace.engine_version == 2 and trace.resolved_config_values == []


def test_a_trace_loaded_as_data_makes_dlts_trace_tables(pipeline: dlt.Pipeline) -> None:
    """dlt's documented ``run([pipeline.last_trace], table_name="_trace")`` (differential
    program p630): one ``_trace`` row with dlt's columns, a ``_trace__steps`` row per step,
    nested tables dlt makes too (was: the saved JSON, with tables named after load ids)."""
    recorded = json.loads((FIXTURES / "trace_as_data_dlt.json").read_text())
    info = pipeline.run([{"id": 1, "tags": ["a", "b"]}], table_name="t")
    pipeline.run([info], table_name="_load_info")
    pipeline.run([pipeline.last_trace], table_name="_trace")
    tables = [t for t in pipeline.default_schema.data_table_names() if t.startswith("_trace")]
    assert set(tables) <= set(recorded["tables"])
    ds = pipeline.dataset()
    assert ds["_trace"].columns == recorded["columns"]["_trace"]
    assert [s for (s,) in ds["_trace__steps"].select("step").fetchall()] == recorded["steps"]
    assert set(ds["_trace__steps"].columns) <= set(recorded["columns"]["_trace__steps"])
