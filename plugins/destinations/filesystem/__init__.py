"""The filesystem destination: Parquet / JSONL / CSV files, Delta and Iceberg tables in a bucket.

``destination="filesystem"`` writes the normalized tables of each package under
``<bucket_url>/<dataset>/`` in dlt 1.31's layout (``<table>/<load_id>.<file_id>.<ext>``, the
``_dlt_loads`` / ``_dlt_version`` / ``_dlt_pipeline_state`` records as JSONL files, an ``init``
marker), so a tool that reads dlt's layout reads ours. ``table_format="delta"`` or
``"iceberg"`` makes each table a lakehouse table instead, committed once per package.

Modules, one idea each: ``configuration`` (settings and where they come from), ``layout``
(file paths from dlt's placeholders), ``file_formats`` (Parquet, JSONL, CSV writers),
``records`` (the bookkeeping files), ``tables`` (what the schema says per table),
``delta`` and ``iceberg`` (table formats), ``reader`` (DuckDB over the files for
``pipeline.dataset()``), ``client`` (the loader).
"""

from __future__ import annotations

from loadstone.destinations.contract import Capabilities, Destination, LazyClient
from loadstone.hookspecs import hookimpl

CAPABILITIES = Capabilities(
    max_identifier_length=None,
    max_column_identifier_length=None,
    has_case_sensitive_identifiers=True,
    casefold="keep",
    preferred_naming="snake_case",
    # the spec table's profile (dlt prefers jsonl); the loader's own default is parquet
    # (issue 15), set in configuration.py
    preferred_loader_file_format="jsonl",
    supported_loader_file_formats=("jsonl", "parquet", "csv"),
    # upsert is the default of a merge; Iceberg also runs an explicit delete-insert
    supported_merge_strategies=("upsert",),
    supports_transactions=False,
    can_be_staging=True,  # the staging destination of dlt's warehouses (staging="filesystem")
    supports_ddl_transactions=False,
    supports_truncate_command=False,
    keeps_nested_arrow_types=True,
    merge_needs_table_format=True,
)


FILESYSTEM = Destination(
    name="filesystem",
    capabilities=CAPABILITIES,
    client_class=LazyClient("loadstone.plugins.destinations.filesystem.client", "FilesystemClient"),
    description="files (parquet, jsonl, csv) or Delta / Iceberg tables in a folder or bucket",
)


@hookimpl
def loadstone_destinations() -> list[Destination]:
    """The filesystem destination (it replaces the profile-only entry of ``profiles``)."""
    return [FILESYSTEM]
