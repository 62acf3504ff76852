"""Capability profiles: every destination of the spec table, with exactly its limits."""

from __future__ import annotations

import pytest

import loadstone
from loadstone.destinations.contract import Capabilities
from loadstone.exceptions import DestinationNotSupported
from loadstone.plugin_manager import destination_names, get_destination
from loadstone.schema import Schema

ALL = ("delete-insert", "upsert", "scd2")
NO_UPSERT = ("delete-insert", "scd2")

# the spec table capabilities.md (shared/spec), row by row:
# name: (max ident, max column, case-sensitive, folds to, preferred naming, formats, merge)
SPEC_TABLE = {
    # insert-only too: dlt 1.31 loads it into duckdb (tests/fixtures/compat/insert_only_merge.json)
    "duckdb": (
        65536,
        65536,
        False,
        "keep",
        "snake_case",
        ("insert_values", "parquet"),
        (*ALL, "insert-only"),
    ),
    "motherduck": (65536, 65536, False, "keep", "snake_case", ("parquet",), ALL),
    # insert-only too: dlt 1.31 loads it into postgres (differential programs p443/p444)
    "postgres": (
        63,
        63,
        True,
        "lower",
        "snake_case",
        ("insert_values", "csv"),
        (*ALL, "insert-only"),
    ),
    "redshift": (127, 127, False, "lower", "snake_case", ("insert_values",), NO_UPSERT),
    "snowflake": (255, 255, True, "upper", "snake_case", ("jsonl", "parquet"), ALL),
    "bigquery": (1024, 300, True, "keep", "snake_case", ("jsonl", "parquet"), ALL),
    "athena": (255, 255, False, "lower", "s3_tables", ("parquet",), ALL),
    "databricks": (255, 255, False, "lower", "snake_case", ("parquet",), ALL),
    "mssql": (128, 128, False, "keep", "snake_case", ("insert_values",), ALL),
    "synapse": (128, 128, False, "keep", "snake_case", ("insert_values",), NO_UPSERT),
    "clickhouse": (255, 255, True, "keep", "snake_case", ("jsonl", "parquet"), NO_UPSERT),
    "dremio": (255, 255, False, "keep", "snake_case", ("parquet",), NO_UPSERT),
    "weaviate": (200, 1024, False, "keep", "weaviate", ("jsonl",), ("upsert",)),
    "qdrant": (200, 1024, True, "keep", "snake_case", ("jsonl", "parquet"), ("upsert",)),
    "lancedb": (200, 1024, True, "keep", "snake_case", ("jsonl", "parquet"), ("upsert",)),
    "filesystem": (None, None, True, "keep", "snake_case", ("jsonl", "parquet"), ("upsert",)),
    "spark": (128, 767, False, "lower", "snake_case", ("parquet",), ("delete-insert",)),
}


def test_every_destination_of_the_spec_table_is_registered() -> None:
    assert set(SPEC_TABLE) <= set(destination_names())


@pytest.mark.parametrize("name", sorted(SPEC_TABLE))
def test_profile_limits_equal_the_spec_table(name: str) -> None:
    ident, column, sensitive, fold, naming, formats, merge = SPEC_TABLE[name]
    caps = get_destination(name).capabilities
    assert caps.max_identifier_length == ident
    assert caps.max_column_identifier_length == column
    assert caps.has_case_sensitive_identifiers is sensitive
    assert caps.casefold == fold
    assert caps.preferred_naming == naming
    assert caps.preferred_loader_file_format == formats[0]
    assert set(formats) <= set(caps.supported_loader_file_formats)
    assert caps.supported_merge_strategies == merge


#: destinations that load for real (their profiles are still checked against the spec table)
LOADERS = {"duckdb", "filesystem", "postgres", "spark"}


@pytest.mark.parametrize("name", sorted(set(SPEC_TABLE) - LOADERS))
def test_profile_only_destination_refuses_to_load_with_a_clear_error(name: str) -> None:
    destination = get_destination(name)
    with pytest.raises(DestinationNotSupported) as raised:
        destination.require_loader()
    assert f"{name!r} has a capability profile but no loader yet" in str(raised.value)
    assert "available loaders: destination, duckdb" in str(raised.value)  # sink, then duckdb


def test_client_of_a_profile_only_destination_raises_before_any_work() -> None:
    with pytest.raises(DestinationNotSupported):
        get_destination("snowflake").client(Schema("s"), "dataset")


def test_destination_not_supported_is_a_loadstone_error() -> None:
    assert issubclass(DestinationNotSupported, loadstone.LoadstoneError)


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_destinations_with_a_loader(name: str) -> None:
    destination = get_destination(name)
    assert destination.has_loader
    destination.require_loader()


def test_case_insensitive_convention_output_is_folded_upper_on_snowflake() -> None:
    caps = get_destination("snowflake").capabilities
    assert caps.fold_identifier("deal_flow") == "DEAL_FLOW"


def test_case_sensitive_convention_output_is_kept_on_a_case_sensitive_destination() -> None:
    caps = get_destination("snowflake").capabilities
    assert caps.fold_identifier("Deal_Flow", case_sensitive_convention=True) == "Deal_Flow"


def test_fold_lower_on_postgres_and_keep_on_duckdb() -> None:
    assert get_destination("postgres").capabilities.fold_identifier("DealFlow") == "dealflow"
    assert get_destination("duckdb").capabilities.fold_identifier("DealFlow") == "DealFlow"


def test_case_sensitive_convention_on_case_insensitive_destination_is_a_collision_risk() -> None:
    assert get_destination("duckdb").capabilities.case_collision_risk(True)
    assert not get_destination("duckdb").capabilities.case_collision_risk(False)
    assert not get_destination("snowflake").capabilities.case_collision_risk(True)


def test_capabilities_reject_an_unknown_casefold() -> None:
    with pytest.raises(ValueError):
        Capabilities(10, 10, True, "sideways")  # type: ignore[arg-type]


def test_factory_configures_duckdb_path_and_naming() -> None:
    destination = loadstone.destinations.duckdb("shop.duckdb", naming_convention="sql_cs_v1")
    assert destination.name == "duckdb"
    assert destination.config["credentials"] == "shop.duckdb"
    assert destination.naming_convention == "sql_cs_v1"


def test_factory_exists_for_profile_only_destinations() -> None:
    destination = loadstone.destinations.snowflake()
    assert destination.name == "snowflake"
    assert destination.capabilities.casefold == "upper"
    assert not destination.has_loader


def test_factory_can_rename_a_destination() -> None:
    assert loadstone.destinations.duckdb(destination_name="warehouse").name == "warehouse"


def test_unknown_factory_is_an_attribute_error_listing_destinations() -> None:
    with pytest.raises(AttributeError, match="duckdb"):
        loadstone.destinations.no_such_destination  # noqa: B018 - the attribute access is the test
