"""dlt 1.31's Pipeline members loadstone had lacked, behaving as dlt's (outcomes taken from
dlt 1.31 run as a black box): has_data, list_completed_load_packages,
get_load_package_info, sync_schema, naming, local state values, activate/deactivate."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import loadstone as dlt
from loadstone import current
from loadstone.exceptions import PackageNotFound, PipelineNotActive


def test_has_data_and_the_completed_packages_follow_the_steps() -> None:
    pipe = dlt.pipeline("members", destination="duckdb")
    assert pipe.has_data is False
    assert pipe.list_completed_load_packages() == []
    pipe.extract([{"id": 1}], table_name="t")
    assert pipe.has_data is True
    [load_id] = pipe.list_extracted_load_packages()
    assert pipe.get_load_package_info(load_id).state == "extracted"
    assert pipe.get_load_package_info(load_id).schema_name == "members"
    pipe.normalize()
    assert pipe.get_load_package_info(load_id).state == "normalized"
    pipe.load()
    assert pipe.list_completed_load_packages() == [load_id]
    info = pipe.get_load_package_info(load_id)
    assert (info.state, info.load_id) == ("loaded", load_id)
    assert dlt.attach("members").has_data is True
    # the first load created the system tables: dlt 1.31 lists them in its schema update
    assert sorted(info.schema_update) == ["_dlt_loads", "_dlt_pipeline_state", "_dlt_version", "t"]
    second = pipe.run([{"id": 2, "v": "x"}], table_name="t").loads_ids[0]
    assert sorted(pipe.get_load_package_info(second).schema_update) == ["t"]


def test_an_unknown_load_id_is_not_found() -> None:
    pipe = dlt.pipeline("unknown_id", destination="duckdb")
    with pytest.raises(PackageNotFound, match="load_id=nope"):
        pipe.get_load_package_info("nope")


def test_sync_schema_creates_the_tables_and_then_changes_nothing() -> None:
    pipe = dlt.pipeline("syncing", destination="duckdb")
    pipe.extract([{"id": 1}], table_name="t")
    pipe.normalize()
    assert "t" in pipe.sync_schema()
    pipe.load()
    assert pipe.sync_schema() == {}


def test_naming_is_the_default_schemas_convention_in_the_destination() -> None:
    pipe = dlt.pipeline("named", destination="duckdb")
    assert pipe.naming.name() == "snake_case"
    assert (pipe.STATE_FILE, pipe.DEFAULT_DATASET_SUFFIX) == ("state.json", "_dataset")


def test_local_state_values_are_read_and_set_as_dlt_does() -> None:
    pipe = dlt.pipeline("local_vals", destination="duckdb")
    pipe.run([{"a": 1}], table_name="t")
    assert pipe.get_local_state_val("first_run") is False
    pipe.set_local_state_val("x_custom", 5)
    assert pipe.get_local_state_val("x_custom") == 5
    assert dlt.attach("local_vals").get_local_state_val("x_custom") == 5
    with pytest.raises(KeyError):
        pipe.get_local_state_val("nope")


def test_local_state_keeps_the_folder_the_pipeline_was_made_in() -> None:
    """dlt 1.31's ``initial_cwd`` (differential program p622): read by programs that find
    their files again from a later working directory."""
    pipe = dlt.pipeline("local_cwd", destination="duckdb")
    assert pipe.get_local_state_val("initial_cwd") == os.path.abspath(os.getcwd())


def test_the_pipeline_made_last_is_the_active_one() -> None:
    first = dlt.pipeline("active_a", destination="duckdb")
    assert first.is_active
    first.deactivate()
    assert not first.is_active
    with pytest.raises(PipelineNotActive, match="active_a"):
        first.deactivate()
    first.activate()
    second = dlt.pipeline("active_b", destination="duckdb")
    assert (first.is_active, second.is_active) == (False, True)
    assert current.pipeline() is second
    with pytest.raises(PipelineNotActive):
        first.deactivate()


def test_pipeline_called_without_arguments_is_the_active_one() -> None:
    """dlt 1.31 (p759): ``dlt.pipeline()`` gives the pipeline made last; with any argument,
    or with none active, it makes one."""
    made = dlt.pipeline("active_c", destination="duckdb", dataset_name="c_data")
    assert dlt.pipeline() is made
    assert dlt.pipeline(destination="duckdb") is not made
    made.activate()
    made.deactivate()
    assert dlt.pipeline() is not made


def test_staging_failed_jobs_extracted_files_and_the_destination_client() -> None:
    pipe = dlt.pipeline("extras", destination="duckdb")
    assert pipe.staging is None
    with pytest.raises(PackageNotFound):
        pipe.list_failed_jobs_in_package("nope")
    pipe.extract([{"id": 1}], table_name="t")
    assert len(pipe.list_extracted_resources()) >= 1
    pipe.normalize()
    pipe.load()
    [load_id] = pipe.list_completed_load_packages()
    assert pipe.list_failed_jobs_in_package(load_id) == []
    assert pipe.list_extracted_resources() == []
    with pipe.destination_client() as client:
        assert client.is_package_loaded(load_id)


def test_the_working_folders_are_strings_as_dlt_gives_them(tmp_path: Path) -> None:
    pipe = dlt.pipeline("folders", destination="duckdb", pipelines_dir=str(tmp_path / "pipes"))
    assert pipe.pipelines_dir == str(tmp_path / "pipes")
    assert pipe.working_dir == os.path.join(pipe.pipelines_dir, "folders")
    assert pipe.working_dir.startswith(pipe.pipelines_dir)  # dlt programs use str methods


def test_an_extracted_packages_jobs_are_its_tables() -> None:
    """dlt 1.31 (p261): get_load_package_info of an extracted package lists a new job per
    extracted table, the state's too."""
    pipe = dlt.pipeline("extracted_jobs", destination="duckdb")
    pipe.extract([dlt.resource([{"i": 1}], name="r1"), dlt.resource([{"j": 2}], name="r2")])
    [load_id] = pipe.list_extracted_load_packages()
    jobs = pipe.get_load_package_info(load_id).jobs["new_jobs"]
    assert sorted(j.job_file_info.table_name for j in jobs) == ["_dlt_pipeline_state", "r1", "r2"]


def test_schema_names_are_in_name_order_as_dlts() -> None:
    """dlt 1.31 (differential program p613): ``schema_names`` and the state's list are in
    name order, whichever schema loaded first (the default one stays the first)."""
    pipe = dlt.pipeline("zeta", destination="duckdb")
    pipe.run([{"a": 1}], table_name="t")
    pipe.run([{"a": 1}], table_name="u", schema=dlt.Schema("mid"))
    pipe.run([{"a": 1}], table_name="v", schema=dlt.Schema("alpha"))
    assert pipe.schema_names == pipe.state["schema_names"] == ["alpha", "mid", "zeta"]
    assert pipe.default_schema_name == "zeta"
