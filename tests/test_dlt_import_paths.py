"""A dlt program ports by its imports alone: ``from dlt.X import Y`` -> ``from loadstone.X import
Y`` (issue 36, docs/migrating.md "Import paths").

The names below are what dlt 1.31's docs and examples import beside ``dlt``; each must be
loadstone's own object. The programs of ``tests/dlt_import_programs.py`` were run under dlt
1.31 (``tests/compat/record_import_paths.py``); ported, they load the same tables and state.
"""

from __future__ import annotations

import datetime as dt
import importlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import duckdb
import pendulum
import pytest

import loadstone
from loadstone.config_specs import ConnectionStringCredentials, CredentialsConfiguration
from loadstone.exceptions import InvalidConnectionString
from loadstone.extract.resource import Resource
from loadstone.extract.source import Source
from tests.dlt_import_programs import PROGRAMS, port, run_program

FIXTURE = Path(__file__).parent / "fixtures" / "import_paths" / "dlt_outcomes.json"
DLT = json.loads(FIXTURE.read_text(encoding="utf-8"))["outcomes"]

#: loadstone's module for each dlt path -> the names a dlt program imports from it
PATHS: dict[str, list[str]] = {
    "loadstone.common": ["pendulum", "json", "logger"],
    "loadstone.common.json": ["dumps", "dumpb", "loads", "loadb", "dump", "load"],
    "loadstone.common.logger": ["info", "warning", "error", "debug", "exception", "LOGGER"],
    "loadstone.common.utils": ["uniq_id", "uniq_id_base64", "digest128", "digest256"],
    "loadstone.common.libs.pydantic": ["DltConfig"],
    "loadstone.common.libs.pyarrow": ["pyarrow"],
    "loadstone.common.libs.pandas": ["pandas"],
    "loadstone.common.configuration.exceptions": [
        "ConfigFieldMissingException", "ConfigValueCannotBeCoercedException",
    ],
    "loadstone.common.normalizers.naming": ["NamingConvention"],
    "loadstone.common.normalizers.naming.snake_case": ["NamingConvention"],
    "loadstone.common.normalizers.naming.sql_cs_v1": ["NamingConvention"],
    "loadstone.common.normalizers.naming.sql_ci_v1": ["NamingConvention"],
    "loadstone.common.normalizers.naming.direct": ["NamingConvention"],
    "loadstone.common.normalizers.naming.duck_case": ["NamingConvention"],
    "loadstone.pipeline": ["Pipeline"],
    "loadstone.pipeline.pipeline": ["Pipeline"],
    "loadstone.common.storages.fsspec_filesystem": ["FileItemDict", "FileItem"],
    "loadstone.sources.helpers.transform": [
        "take_first", "skip_first", "pivot", "add_row_hash_to_table",
    ],
    "loadstone.common.typing": [
        "TDataItem", "TDataItems", "DictStrAny", "DictStrStr", "StrAny", "StrStr",
        "StrStrStr", "TSecretValue", "TSecretStrValue", "TAnyDateTime", "TColumnNames",
        "TLoaderFileFormat", "TTableHintTemplate", "TSortOrder", "TFun", "AnyFun",
        "ConfigValue", "SecretValue",
    ],
    "loadstone.common.schema": [
        "Schema", "TColumnSchema", "TTableSchema", "TTableSchemaColumns", "TStoredSchema",
        "TSchemaTables", "DataValidationError",
    ],
    "loadstone.common.schema.typing": [
        "TColumnSchema", "TTableSchema", "TTableSchemaColumns", "TWriteDisposition",
        "TWriteDispositionConfig", "TWriteDispositionDict", "TDataType", "TColumnHint",
        "TColumnNames", "TSchemaContract", "TSchemaContractDict", "TSchemaEvolutionMode",
        "TStoredSchema", "TTableReference", "TAnySchemaColumns", "TTableFormat",
        "TPartialTableSchema", "TSchemaTables", "C_DLT_ID", "C_DLT_LOAD_ID",
        "LOADS_TABLE_NAME", "VERSION_TABLE_NAME", "PIPELINE_STATE_TABLE_NAME",
    ],
    "loadstone.common.pipeline": [
        "ExtractInfo", "LoadInfo", "LoadPackageInfo", "NormalizeInfo", "StepInfo",
        "SupportsPipeline", "get_dlt_pipelines_dir",
    ],
    "loadstone.common.destination": [
        "Destination", "DestinationCapabilitiesContext", "TLoaderFileFormat",
    ],
    "loadstone.common.destination.exceptions": [
        "DestinationException", "DestinationIncompatibleLoaderFileFormatException",
        "DestinationTerminalException", "UnknownDestinationModule",
    ],
    "loadstone.common.configuration": ["configspec", "ConfigFieldMissingException"],
    "loadstone.common.time": ["ensure_pendulum_datetime", "ensure_pendulum_date"],
    "loadstone.common.configuration.specs": [
        "BaseConfiguration", "CredentialsConfiguration", "ConnectionStringCredentials",
        "configspec",
    ],
    "loadstone.common.exceptions": [
        "DltException", "MissingDependencyException", "PipelineStateNotAvailable",
        "ResourceNameNotAvailable", "SourceSectionNotAvailable", "ValueErrorWithKnownValues",
    ],
    "loadstone.extract": ["DltResource", "DltSource", "Incremental", "with_hints", "defer"],
    "loadstone.extract.exceptions": [
        "ResourceExtractionError", "DltResourceException", "ExtractorException",
        "CurrentSourceNotAvailable", "CurrentSourceSchemaNotAvailable",
    ],
    "loadstone.sources": [
        "DltResource", "DltSource", "TDataItem", "TDataItems", "incremental", "credentials",
    ],
    "loadstone.sources.credentials": [
        "ConnectionStringCredentials", "CredentialsConfiguration", "BaseConfiguration",
        "configspec",
    ],
    "loadstone.pipeline.exceptions": [
        "PipelineStepFailed", "CannotRestorePipelineException", "PipelineNotActive", "LoadInfo",
        "InvalidPipelineName", "PipelineConfigMissing",
    ],
    "loadstone.common.schema.exceptions": [
        "DataValidationError", "SchemaException", "CannotCoerceColumnException",
        "CannotCoerceNullException", "UnboundColumnException", "TableNotFound",
        "SchemaIdentifierNormalizationCollision", "TablePropertiesConflictException",
    ],
    "loadstone.common.schema.utils": [
        "new_table", "new_column", "get_columns_names_with_prop", "has_table_seen_data",
        "get_first_column_name_with_prop", "get_nested_tables", "get_root_table",
    ],
    "loadstone.normalize.exceptions": ["NormalizeJobFailed", "NormalizeException"],
    "loadstone.destinations.exceptions": [
        "DestinationException", "DestinationTerminalException",
    ],
    "loadstone": ["TCredentials", "common", "extract", "normalize", "load"],
}  # fmt: skip


@pytest.mark.parametrize("module", sorted(PATHS))
def test_every_dlt_path_imports_with_the_names_programs_take_from_it(module: str) -> None:
    imported = importlib.import_module(module)
    missing = [name for name in PATHS[module] if not hasattr(imported, name)]
    assert missing == []


def test_the_common_pendulum_counts_in_utc_on_a_machine_of_another_zone() -> None:
    """dlt 1.31's ``pendulum.now()`` is in UTC once dlt is imported, with TZ=Europe/Berlin too."""
    program = "from loadstone.common import pendulum; print(pendulum.now().timezone_name)"
    done = subprocess.run(
        [sys.executable, "-c", program],
        env={**os.environ, "TZ": "Europe/Berlin"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "UTC"


def test_the_names_are_loadstones_own_objects() -> None:
    from loadstone.common import pendulum as common_pendulum
    from loadstone.common.schema import Schema
    from loadstone.extract import DltResource, DltSource
    from loadstone.sources import incremental

    assert common_pendulum is pendulum
    assert (DltResource, DltSource) == (Resource, Source)
    from loadstone.pipeline import Pipeline
    from loadstone.pipeline.pipeline import Pipeline as module_pipeline

    assert Pipeline is module_pipeline is loadstone.Pipeline
    assert callable(loadstone.pipeline) and not isinstance(loadstone.pipeline, type(loadstone))
    assert incremental is loadstone.sources.Incremental
    assert loadstone.TCredentials is CredentialsConfiguration
    assert Schema is loadstone.Schema


def test_loadstone_pipeline_stays_the_function_after_its_exceptions_path_is_imported() -> None:
    """``dlt.pipeline(...)`` and ``from dlt.pipeline.exceptions import ...`` in one program."""
    program = (
        "import loadstone as dlt\n"
        "from loadstone.pipeline.exceptions import PipelineStepFailed\n"
        "import loadstone.pipeline.exceptions\n"
        "print(callable(dlt.pipeline), PipelineStepFailed is dlt.PipelineStepFailed)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["True", "True"]


@pytest.mark.parametrize("name", ["pendulum_values", "typed_resource", "schema_and_info"])
def test_a_ported_program_loads_the_tables_and_state_dlt_loads(name: str, tmp_path: Path) -> None:
    assert run_program(port(PROGRAMS[name]), tmp_path) == DLT[name]


def test_ensure_pendulum_datetime_and_date_coerce_as_dlts(tmp_path: Path) -> None:
    """19 values (ISO strings, dates, datetimes naive and aware, epoch numbers, junk) in UTC
    and in a zone: the same values, or the same error classes."""
    assert run_program(port(PROGRAMS["time_coercions"]), tmp_path) == DLT["time_coercions"]


def test_ported_credentials_specs_answer_as_dlts(tmp_path: Path) -> None:
    assert run_program(port(PROGRAMS["credentials"]), tmp_path) == DLT["credentials"]


def test_except_pipeline_step_failed_catches_a_failing_resource_as_in_dlt(tmp_path: Path) -> None:
    """The failure and the tables equal dlt's (the state is not compared: loadstone keeps an
    empty section for the source that failed, dlt none)."""
    loaded = run_program(port(PROGRAMS["step_failed"]), tmp_path)
    assert (loaded["outcome"], loaded["tables"]) == (
        DLT["step_failed"]["outcome"],
        DLT["step_failed"]["tables"],
    )


def test_a_pendulum_duration_is_refused_at_extract_as_in_dlt(tmp_path: Path) -> None:
    """Both refuse it at extract and load nothing; loadstone's cause is its one-line
    ``ExtractError`` (item, table, type), dlt's a ``TypeError`` of its JSON writer."""
    loaded = run_program(port(PROGRAMS["pendulum_duration"]), tmp_path)
    assert loaded["tables"] == DLT["pendulum_duration"]["tables"] == {}
    assert loaded["outcome"] == {**DLT["pendulum_duration"]["outcome"], "cause": "ExtractError"}


def test_an_incremental_keeps_pendulum_values_with_the_row_hashes_dlt_keeps(
    tmp_path: Path,
) -> None:
    """The row at the last value holds pendulum DateTimes in three zones, a Date and a Time:
    its hash is dlt's, so either tool deduplicates the rows the other kept."""
    state = run_program(port(PROGRAMS["pendulum_values"]), tmp_path)["state"]
    dlt_state = DLT["pendulum_values"]["state"]
    path = ("pendulum_values", "resources", "events", "incremental", "updated_at")
    for key in path:
        state, dlt_state = state[key], dlt_state[key]
    assert state["unique_hashes"] == dlt_state["unique_hashes"]


def test_connection_string_credentials_open_a_sql_database(tmp_path: Path) -> None:
    from loadstone.sources.sql_database import sql_database

    with sqlite3.connect(tmp_path / "shop.db") as conn:
        conn.execute("create table items (id integer primary key, added date)")
        conn.execute("insert into items values (1, ?)", [dt.date(2024, 1, 1).isoformat()])
    credentials = ConnectionStringCredentials(f"sqlite:///{tmp_path / 'shop.db'}")
    pipeline = loadstone.pipeline(
        "sql_creds",
        destination=loadstone.destinations.duckdb(str(tmp_path / "out.duckdb")),
        pipelines_dir=str(tmp_path / "pipelines"),
        dataset_name="d",
    )
    pipeline.run(sql_database(credentials=credentials))
    with duckdb.connect(str(tmp_path / "out.duckdb"), read_only=True) as conn:
        assert conn.execute("select id from d.items").fetchall() == [(1,)]


def test_a_bad_connection_string_is_refused_without_repeating_it() -> None:
    with pytest.raises(InvalidConnectionString) as refused:
        ConnectionStringCredentials("postgresql//loader:hunter2@host/db")
    assert "hunter2" not in str(refused.value)


#: a custom convention as dlt's docs write one, in a module beside the script
DLT_STYLE_NAMING = """
from dlt.common.normalizers.naming.snake_case import NamingConvention as SnakeCaseNamingConvention


class NamingConvention(SnakeCaseNamingConvention):
    def normalize_identifier(self, identifier: str) -> str:
        return super().normalize_identifier(identifier).replace("user", "usr")
"""


def test_a_dlt_naming_convention_beside_the_script_ports_by_its_imports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Named by its top-level module (``SCHEMA__NAMING=my_naming``, as in dlt 1.31: p755)."""
    (tmp_path / "my_naming.py").write_text(port(DLT_STYLE_NAMING), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("SCHEMA__NAMING", "my_naming")
    pipeline = loadstone.pipeline(
        "custom_naming",
        destination=loadstone.destinations.duckdb(str(tmp_path / "n.duckdb")),
        dataset_name="d",
        pipelines_dir=str(tmp_path / "p"),
    )
    pipeline.run([{"UserId": 1, "Kids": [{"userAge": 3}]}], table_name="People")
    with duckdb.connect(str(tmp_path / "n.duckdb"), read_only=True) as conn:
        columns = conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = 'd' AND NOT starts_with(column_name, '_dlt') "
            "AND NOT starts_with(table_name, '_dlt') ORDER BY 1, 2"
        ).fetchall()
    assert columns == [("people", "usr_id"), ("people__kids", "usr_age")]


def test_new_table_and_new_column_make_dlts_dicts() -> None:
    # dlt 1.31 (p1258): the dicts and their key order
    from loadstone.common.schema.utils import new_column, new_table

    assert json.dumps(new_table("t", columns=[new_column("a", "bigint")])) == json.dumps(
        {"name": "t", "columns": {"a": {"name": "a", "nullable": True, "data_type": "bigint"}},
         "write_disposition": "append", "resource": "t"}
    )  # fmt: skip
    assert json.dumps(new_table("t", resource="r", file_format="parquet")) == json.dumps(
        {"name": "t", "columns": {}, "file_format": "parquet", "resource": "r",
         "write_disposition": "append"}
    )  # fmt: skip
    assert new_table("c", parent_table_name="t") == {"name": "c", "columns": {}, "parent": "t"}
