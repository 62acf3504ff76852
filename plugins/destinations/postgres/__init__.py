"""PostgreSQL: a real server destination (capability profile + loader).

A dataset is a PostgreSQL schema; every name is quoted and qualified ``"dataset"."table"``,
so ``sql_cs_v1``'s ``"Deal"`` and ``"deal"`` are two columns, as PostgreSQL keeps quoted
identifiers apart. Identifiers are at most 63 characters (dlt's shortening, applied by the
core from :data:`CAPABILITIES`).

Credentials, the keys dlt reads (``credentials.py``): ``postgres("postgresql://u:p@h:5432/db")``
or fields (``database``, ``username``, ``password``, ``host``, ``port``, ``connect_timeout``)
from code, ``[destination.postgres.credentials]`` in ``secrets.toml`` or env
``DESTINATION__POSTGRES__CREDENTIALS`` (a connection string) /
``DESTINATION__POSTGRES__CREDENTIALS__PASSWORD`` (one field).

Loading is ``COPY ... FROM STDIN`` of the normalized Parquet (``copy.py``), one transaction
per package with ``_dlt_loads`` last; types as dlt 1.31 makes them (``sql.py``).
"""

from __future__ import annotations

from loadstone.destinations.contract import Capabilities, Destination, LazyClient
from loadstone.hookspecs import hookimpl

CAPABILITIES = Capabilities(
    max_identifier_length=63,
    max_column_identifier_length=63,
    has_case_sensitive_identifiers=True,
    casefold="lower",
    preferred_naming="snake_case",
    preferred_loader_file_format="insert_values",
    supported_loader_file_formats=("insert_values", "csv", "parquet"),
    supported_merge_strategies=("delete-insert", "upsert", "scd2", "insert-only"),
    timestamp_precision=6,
    decimal_precision=(38, 9),
    wei_precision=(156, 78),
    supports_transactions=True,
    supports_ddl_transactions=True,
)


POSTGRES = Destination(
    name="postgres",
    capabilities=CAPABILITIES,
    client_class=LazyClient("loadstone.plugins.destinations.postgres.client", "PostgresClient"),
    description="PostgreSQL server (COPY loads, one transaction per package)",
)


@hookimpl
def loadstone_destinations() -> list[Destination]:
    """The PostgreSQL destination."""
    return [POSTGRES]
