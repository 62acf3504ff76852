"""Capability profiles of the destinations that have no loader in loadstone yet.

Each profile is the row of ``../shared/spec/capabilities.md`` for that system (the limits
dlt 1.x declares), so the core can fit identifiers for, say, snowflake before a snowflake
loader exists; asking one of them to *load* raises ``DestinationNotSupported`` before any
work. DuckDB's, PostgreSQL's, the filesystem's and Spark's profiles live with their
loaders (``loadstone.plugins.destinations.duckdb``, ``...postgres``, ``...filesystem``,
``...spark``).

Where the spec lists two file formats ("jsonl / parquet") the first is the preferred one.
``None`` as a length means "no fixed limit" (filesystem paths, the Spark catalog).
"""

from __future__ import annotations

from loadstone.destinations.contract import Capabilities, Destination
from loadstone.hookspecs import hookimpl

_ALL_MERGE = ("delete-insert", "upsert", "scd2")
_NO_UPSERT = ("delete-insert", "scd2")


def _profile(
    name: str,
    max_ident: int | None,
    max_column: int | None,
    case_sensitive: bool,
    casefold: str,
    formats: tuple[str, ...],
    merge: tuple[str, ...],
    naming: str = "snake_case",
    description: str = "",
    **extra: object,
) -> Destination:
    capabilities = Capabilities(
        max_identifier_length=max_ident,
        max_column_identifier_length=max_column,
        has_case_sensitive_identifiers=case_sensitive,
        casefold=casefold,  # type: ignore[arg-type]  # spec table values
        preferred_naming=naming,
        preferred_loader_file_format=formats[0],
        supported_loader_file_formats=formats,
        supported_merge_strategies=merge,
        **extra,  # type: ignore[arg-type]  # spec table values
    )
    return Destination(name=name, capabilities=capabilities, description=description)


#: name -> profile, one per row of the spec table (qdrant and lancedb share a row).
PROFILES: dict[str, Destination] = {
    d.name: d
    for d in (
        _profile(
            "motherduck",
            65536,
            65536,
            False,
            "keep",
            ("parquet",),
            _ALL_MERGE,
            supports_ddl_transactions=True,
        ),
        _profile(
            "redshift",
            127,
            127,
            False,
            "lower",
            ("insert_values",),
            _NO_UPSERT,
            supports_transactions=False,
            supported_staging_file_formats=("jsonl", "parquet"),
        ),
        _profile(
            "snowflake",
            255,
            255,
            True,
            "upper",
            ("jsonl", "parquet"),
            _ALL_MERGE,
            timestamp_precision=9,
            supported_staging_file_formats=("jsonl", "parquet", "csv"),
        ),
        _profile(
            "bigquery",
            1024,
            300,
            True,
            "keep",
            ("jsonl", "parquet"),
            _ALL_MERGE,
            supports_transactions=False,
            supported_staging_file_formats=("parquet", "jsonl"),
        ),
        _profile(
            "athena",
            255,
            255,
            False,
            "lower",
            ("parquet",),
            _ALL_MERGE,
            naming="s3_tables",
            supports_transactions=False,
            timestamp_precision=3,
            supported_staging_file_formats=("parquet", "model"),
        ),
        _profile(
            "databricks",
            255,
            255,
            False,
            "lower",
            ("parquet",),
            _ALL_MERGE,
            supports_transactions=False,
            supported_staging_file_formats=("jsonl", "parquet"),
        ),
        _profile(
            "mssql", 128, 128, False, "keep", ("insert_values",), _ALL_MERGE, timestamp_precision=7
        ),
        _profile(
            "synapse",
            128,
            128,
            False,
            "keep",
            ("insert_values",),
            _NO_UPSERT,
            timestamp_precision=7,
            supported_staging_file_formats=("parquet",),
        ),
        _profile(
            "clickhouse",
            255,
            255,
            True,
            "keep",
            ("jsonl", "parquet"),
            _NO_UPSERT,
            supports_transactions=False,
            supported_staging_file_formats=("parquet", "jsonl"),
        ),
        _profile(
            "dremio",
            255,
            255,
            False,
            "keep",
            ("parquet",),
            _NO_UPSERT,
            supports_transactions=False,
            supported_staging_file_formats=("jsonl", "parquet", "model"),
        ),
        _profile(
            "weaviate",
            200,
            1024,
            False,
            "keep",
            ("jsonl",),
            ("upsert",),
            naming="weaviate",
            description="class names start upper case (weaviate's own naming, not a plugin yet)",
            supports_transactions=False,
        ),
        _profile(
            "qdrant",
            200,
            1024,
            True,
            "keep",
            ("jsonl", "parquet"),
            ("upsert",),
            supports_transactions=False,
        ),
        _profile(
            "lancedb",
            200,
            1024,
            True,
            "keep",
            ("jsonl", "parquet"),
            ("upsert",),
            supports_transactions=False,
        ),
    )
}


@hookimpl
def loadstone_destinations() -> list[Destination]:
    """Every profile-only destination."""
    return list(PROFILES.values())
