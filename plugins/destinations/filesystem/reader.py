"""``pipeline.dataset()`` on a bucket: an in-memory DuckDB with one view per table.

Files are read where they lie (``read_parquet`` / ``read_json`` / ``read_csv`` over the
listed files, union by name because files of one table may have different columns); files of
a load id without its ``_dlt_loads`` record are left out, so a half-written load is never
seen. Remote buckets are reached through the same fsspec filesystem the loader writes with
(DuckDB's ``register_filesystem``), so no DuckDB extension has to be downloaded. Delta and
Iceberg tables are read by their own libraries into Arrow, and the bookkeeping records are
small JSON files read into Arrow as well.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import duckdb
import pyarrow as pa

from loadstone.destinations.query_results import quote_identifier as _quote
from loadstone.plugins.destinations.filesystem.read_types import csv_text_columns, typed_select
from loadstone.plugins.destinations.filesystem.records import LOADS, STATE, VERSION
from loadstone.plugins.destinations.filesystem.tables import (
    is_system_table,
    plan_table,
    table_model,
)
from loadstone.schema import Schema
from loadstone.storage.filesystem import is_local

if TYPE_CHECKING:
    from loadstone.plugins.destinations.filesystem.client_view import (
        ClientView as FilesystemClient,
    )


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class DatasetReader:
    """The views of one dataset folder, built once per client (a load resets them)."""

    def __init__(self, client: FilesystemClient) -> None:
        self.client = client
        self.connection = duckdb.connect(":memory:")
        self.connection.execute("SET TimeZone = 'UTC'")
        self._local = is_local(client.config.bucket_url)
        if not self._local:
            self.connection.register_filesystem(client.fs)
        self._tables: list[str] = []
        self.connection.execute(f"CREATE SCHEMA {_quote(client.dataset_name)}")
        self._build()

    def table_names(self) -> list[str]:
        return sorted(self._tables)

    def close(self) -> None:
        self.connection.close()

    def _path(self, relative: str) -> str:
        full = f"{self.client.dataset_path}/{relative}"
        if self._local:
            return full
        protocol = self.client.fs.protocol
        protocol = protocol if isinstance(protocol, str) else protocol[0]
        return f"{protocol}://{full}"

    def _build(self) -> None:
        client = self.client
        completed = client.records.completed_loads()
        schema = self._schema()
        model = table_model(schema)
        for name in model.tables:
            if is_system_table(name):
                continue
            plan = plan_table(
                model, name, client.config.loader_file_format, client.config.table_format
            )
            if plan.table_format:
                self._table_format_view(name, plan.table_format)
                continue
            files = [
                self._path(rel)
                for rel, load_id in client.table_files(name, schema.name if schema else "")
                if load_id is None or load_id in completed
            ]
            if files:
                text_columns = csv_text_columns(plan.columns)
                shape = client.config.csv_format
                names = None if shape.include_header else [c.name for c in plan.columns]
                select = _scan(plan.file_format, files, text_columns, shape.delimiter, names)
                found = {
                    str(row[0]): str(row[1])
                    for row in self.connection.execute(f"DESCRIBE {select}").fetchall()
                }
                self._view(name, typed_select(select, plan.file_format, plan.columns, found))
        for folder in (LOADS, VERSION, STATE):
            rows = client.records.system_rows(folder)
            if folder == LOADS:
                rows = [r for r in rows if r.get("load_id") in completed]
            if rows:
                # the folders are named as dlt names the tables
                self._arrow_view(folder, pa.Table.from_pylist(rows))

    def _schema(self) -> Schema | None:
        """The newest schema the dataset recorded (its JSON read once, here), else the
        client's."""
        name = self.client._schema_name()
        stored = self.client.records.newest_schema(name) if name else None
        return Schema.from_dict(stored, bump_version=False) if stored else self.client.schema

    def _view(self, name: str, select: str) -> None:
        self.connection.execute(
            f"CREATE VIEW {_quote(self.client.dataset_name)}.{_quote(name)} AS {select}"
        )
        self._tables.append(name)

    def _arrow_view(self, name: str, table: pa.Table) -> None:
        alias = f"__arrow_{len(self._tables)}"
        self.connection.register(alias, table)
        self._view(name, f"SELECT * FROM {alias}")

    def _table_format_view(self, name: str, table_format: str) -> None:
        table = self.client.table_writer(table_format).read(name)
        if table is not None:
            self._arrow_view(name, table)


def _scan(
    file_format: str,
    files: list[str],
    text_columns: list[str],
    delimiter: str = ",",
    names: list[str] | None = None,
) -> str:
    """The SELECT over ``files``; CSV text columns are read as text, not guessed, with the
    configured delimiter; a CSV without header is read with the table's column ``names``."""
    listed = "[" + ", ".join(_literal(f) for f in files) + "]"
    if file_format == "parquet":
        return f"SELECT * FROM read_parquet({listed}, union_by_name = true)"
    if file_format == "jsonl":
        return (
            f"SELECT * FROM read_json({listed}, format = 'newline_delimited', union_by_name = true)"
        )
    types = ", ".join(f"{_literal(c)}: 'VARCHAR'" for c in text_columns)
    typed = f", types = {{{types}}}" if types else ""
    shape = f", delim = {_literal(delimiter)}"
    if names is not None:
        listed_names = ", ".join(_literal(n) for n in names)
        shape += f", header = false, names = [{listed_names}]"
        return f"SELECT * FROM read_csv({listed}{shape}{typed})"
    return f"SELECT * FROM read_csv({listed}, union_by_name = true, header = true{shape}{typed})"
