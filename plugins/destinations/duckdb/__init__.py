"""DuckDB: the embedded default destination (capability profile + loader).

The database is a file, ``<pipeline_name>.duckdb`` in the working directory unless
credentials say otherwise (factory argument ``loadstone.destinations.duckdb("x.duckdb")``,
env ``DESTINATION__DUCKDB__CREDENTIALS``, or ``[destination.duckdb] credentials`` in config).
A dataset is a DuckDB schema; every name is quoted and fully qualified.

Type mapping (``sql.duckdb_type``): text VARCHAR, double DOUBLE, bool BOOLEAN, bigint by
precision bits TINYINT/SMALLINT/INTEGER/BIGINT/HUGEINT, timestamp TIMESTAMP WITH TIME ZONE
(naive by precision: TIMESTAMP_S/_MS/TIMESTAMP/_NS), date DATE, time TIME, binary BLOB, json
JSON, decimal DECIMAL(p,s) default (38,9), and wei DECIMAL(38,0) as dlt 1.31 (a wider value
goes to the column's ``__v_text`` variant).
"""

from __future__ import annotations

from loadstone.destinations.contract import Capabilities, Destination, LazyClient
from loadstone.hookspecs import hookimpl

CAPABILITIES = Capabilities(
    max_identifier_length=65536,
    max_column_identifier_length=65536,
    has_case_sensitive_identifiers=False,
    casefold="keep",
    preferred_naming="snake_case",
    preferred_loader_file_format="insert_values",
    supported_loader_file_formats=("insert_values", "parquet", "jsonl"),
    supported_merge_strategies=("delete-insert", "upsert", "scd2", "insert-only"),
    timestamp_precision=6,
    decimal_precision=(38, 9),
    wei_precision=(38, 0),
    supports_transactions=True,
    supports_ddl_transactions=True,
)


DUCKDB = Destination(
    name="duckdb",
    capabilities=CAPABILITIES,
    client_class=LazyClient("loadstone.plugins.destinations.duckdb.client", "DuckDBClient"),
    description="embedded DuckDB database file (default destination)",
)


@hookimpl
def loadstone_destinations() -> list[Destination]:
    """The DuckDB destination."""
    return [DUCKDB]
