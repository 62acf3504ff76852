"""The filesystem loader: one client per dataset folder ``<bucket_url>/<dataset>``.

Exactly once without transactions: every file a package writes has a name fixed by the load
id (file ids are derived from load id, table and position, not random), so a retry after a
crash rewrites the same files instead of adding new ones; a replace removes the files of
earlier loads only after this load's are written; and the ``_dlt_loads`` record is written
last. A load id without that record is invisible: ``pipeline.dataset()`` and state restoring
read only completed loads, and the pipeline retries the package. Table formats commit each
table once per package and remember the load id in the commit, so a retried package skips
the tables it already committed (``delta.py``, ``iceberg.py``).
"""

from __future__ import annotations

import hashlib
import logging
import posixpath
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from loadstone.destinations.contract import (
    ClosesOnExit,
    Destination,
    LoadFileSpec,
    LoadRequest,
    Row,
    SchemaVersionRow,
    StateDict,
)
from loadstone.exceptions import DestinationError, FilesystemConfigError, LoadFailed
from loadstone.plugins.destinations.filesystem import file_formats
from loadstone.plugins.destinations.filesystem.client_view import TableWriter
from loadstone.plugins.destinations.filesystem.configuration import (
    FilesystemConfiguration,
    check_formats,
    resolve_configuration,
)
from loadstone.plugins.destinations.filesystem.delete_insert import (
    Replacement,
    chain_order,
    is_delete_insert,
    replacements,
)
from loadstone.plugins.destinations.filesystem.layout import Layout
from loadstone.plugins.destinations.filesystem.records import DatasetRecords
from loadstone.plugins.destinations.filesystem.tables import (
    TablePlan,
    is_system_table,
    plan_refusal,
    plan_table,
    table_model,
)
from loadstone.storage.filesystem import open_filesystem, put_file_atomic, write_bytes_atomic

if TYPE_CHECKING:
    import duckdb

    from loadstone.plugins.destinations.filesystem.reader import DatasetReader
    from loadstone.plugins.destinations.tables import TableModel
    from loadstone.schema import Schema
    from loadstone.schema.stored import TStoredSchema

log = logging.getLogger(__name__)


def file_id(load_id: str, table: str, index: int) -> str:
    """A file id fixed by load id, table and position: a retry writes the same names."""
    return hashlib.sha256(f"{load_id}/{table}/{index}".encode()).hexdigest()[:10]


class FilesystemClient(ClosesOnExit):
    """Loads packages into one dataset folder of a bucket (see the module docstring)."""

    def __init__(
        self,
        destination: Destination,
        schema: Schema | None,
        dataset_name: str,
        *,
        pipeline_name: str | None = None,
        **_options: object,
    ) -> None:
        self.destination = destination
        self.schema = schema
        self.dataset_name = dataset_name
        self.pipeline_name = pipeline_name
        self.config: FilesystemConfiguration = resolve_configuration(destination)
        self.fs, bucket_path = open_filesystem(self.config.bucket_url, self.config.credentials)
        self.dataset_path = f"{bucket_path.rstrip('/')}/{dataset_name}"
        self.records = DatasetRecords(self.fs, self.dataset_path)
        self.layout = Layout(self.config.layout, self.config.extra_placeholders)
        self._reader: DatasetReader | None = None
        self._table_writers: dict[str, TableWriter] = {}

    @classmethod
    def shown_location(cls, destination: Destination) -> str | None:
        """The bucket as dlt 1.31's load info shows it: a local folder as its absolute
        ``file://`` URL (``file:///home/me/lake``), a bucket's URL as given; None without
        a bucket."""
        try:
            url = resolve_configuration(destination).bucket_url
        except FilesystemConfigError:
            return None
        if "://" in url:
            return url
        return Path(url).expanduser().absolute().as_uri()

    # --- names and places --------------------------------------------------------------

    def dataset_url(self) -> str:
        """The dataset folder as a URL (what Delta, Iceberg and DuckDB are given)."""
        from loadstone.storage.filesystem import join_url

        return join_url(self.config.bucket_url, self.dataset_name)

    def table_url(self, table: str) -> str:
        from loadstone.storage.filesystem import join_url

        return join_url(self.config.bucket_url, self.dataset_name, table)

    def _schema_name(self, schema_name: str | None = None) -> str:
        """The name files and records are kept under: the schema's (default: the client's),
        else the pipeline's."""
        if schema_name is None:
            schema_name = self.schema.name if self.schema is not None else ""
        return schema_name or self.pipeline_name or ""

    # --- the contract ------------------------------------------------------------------

    def initialize_storage(self) -> None:
        """Write the ``init`` marker of the dataset folder (nothing else)."""
        self.records.initialize()

    def update_stored_schema(self, schema: Schema | None = None) -> list[str]:
        """Record the schema version in ``_dlt_version`` when its hash is new.

        Files need no DDL; table formats evolve their schema in the commit of each package.
        """
        version = SchemaVersionRow.of(schema if schema is not None else self.schema)
        self.records.initialize()
        written = self.records.write_version(version)
        return [f"_dlt_version {version.schema_name} {version.version_hash}"] if written else []

    def is_package_loaded(self, load_id: str) -> bool:
        return self.records.is_loaded(load_id)

    def load_package(self, request: LoadRequest) -> None:
        """Write every table of the package, then its state, then (last) its load record."""
        if self.is_package_loaded(request.load_id):
            return
        version = SchemaVersionRow.of(request.schema)
        schema_name = self._schema_name(version.schema_name)
        digest = version.version_hash
        self.records.initialize()
        self.records.write_version(version)
        model = table_model(request.schema)
        decided: dict[str, dict[str, Replacement]] = {}
        for plan in self._plans(model, request.tables):
            spec = request.tables.get(plan.name) or []
            files = file_formats.list_parquet(spec) if spec else []
            refused = plan_refusal(plan, model.nested_tables(plan.name))
            if refused is not None:
                raise LoadFailed(request.load_id, plan.name, refused)
            try:
                if plan.table_format and is_delete_insert(model, plan.root):
                    if plan.root not in decided:  # the chain's first table: root as it was
                        decided[plan.root] = self._replacements(model, plan, request)
                    replaced = decided[plan.root].get(plan.name)
                    self.table_writer(plan.table_format).commit(
                        plan, files, request.load_id, replaced
                    )
                    continue
                self._load_table(plan, files, request.load_id, schema_name)
            except DestinationError:
                raise
            except Exception as error:
                raise LoadFailed(
                    request.load_id,
                    plan.name,
                    f"{type(error).__name__}: {error}",
                    [str(f) for f in files],
                ) from error
        if request.pipeline_state is not None:
            self.records.write_state(request.load_id, request.pipeline_state, digest)
        self.records.write_load(request.load_id, schema_name, digest)
        self.close()  # views made before this load would not show it

    def _plans(self, model: TableModel, tables: Mapping[str, LoadFileSpec]) -> list[TablePlan]:
        """Plans of the package's tables, plus the nested tables of replaced roots that got
        no rows this time (a replace empties them too, as in dlt; a delete-insert removes the
        rows of replaced parents from them). A delete-insert chain is committed nested tables
        first, root last (``delete_insert.py``)."""
        plans = [
            plan_table(model, name, self.config.loader_file_format, self.config.table_format)
            for name in tables
            if not is_system_table(name)
        ]
        replaced = {p.root for p in plans if p.write_disposition == "replace"}
        replaced |= {p.root for p in plans if p.table_format and is_delete_insert(model, p.root)}
        present = {p.name for p in plans}
        for name in model.tables:
            if name in present or is_system_table(name):
                continue
            plan = plan_table(model, name, self.config.loader_file_format, self.config.table_format)
            if plan.root in replaced:
                plans.append(plan)
        for plan in plans:
            check_formats(plan.file_format, plan.table_format)
        order = {
            name: index
            for root in {
                p.root for p in plans if p.table_format and is_delete_insert(model, p.root)
            }
            for index, name in enumerate(chain_order(model, root))
        }
        return sorted(plans, key=lambda p: (p.root, order[p.name]) if p.name in order else ("", 0))

    def _replacements(
        self, model: TableModel, plan: TablePlan, request: LoadRequest
    ) -> dict[str, Replacement]:
        """What a delete-insert commits to each table of ``plan``'s chain, decided from the
        package and the root table as it is before any of the chain's commits."""
        from loadstone.plugins.destinations.filesystem.arrow_data import naive_columns, read_table

        assert plan.table_format is not None
        writer = self.table_writer(plan.table_format)
        package = {}
        for table in [plan.root, *model.nested_tables(plan.root)]:
            spec = request.tables.get(table)
            naive = naive_columns(model.typed_columns(table), None)
            files = file_formats.list_parquet(spec) if spec else []
            rows = read_table(files, plan.table_format, naive) if spec else None
            if rows is not None:
                package[table] = rows
        return replacements(model, plan.root, package, writer.read, request.load_id)

    def _load_table(
        self,
        plan: TablePlan,
        files: Sequence[Path],
        load_id: str,
        schema_name: str,
    ) -> None:
        if plan.table_format is not None:
            self.table_writer(plan.table_format).commit(plan, files, load_id)
            return
        if plan.write_disposition == "merge":
            log.warning(
                "merge needs a table format on the filesystem destination; falling back to append on %s",
                plan.name,
            )
        written = self._write_files(plan, files, load_id, schema_name)
        if plan.write_disposition == "replace":
            self._remove_other_files(plan, schema_name, keep=written)

    def table_writer(self, table_format: str) -> TableWriter:
        """The Delta or Iceberg writer of this client, made once (a catalog costs ~0.1 s)."""
        if table_format not in self._table_writers:
            if table_format == "delta":
                from loadstone.plugins.destinations.filesystem.delta import DeltaWriter

                self._table_writers[table_format] = DeltaWriter(self)
            else:
                from loadstone.plugins.destinations.filesystem.iceberg import IcebergWriter

                self._table_writers[table_format] = IcebergWriter(self)
        return self._table_writers[table_format]

    def _write_files(
        self, plan: TablePlan, files: Sequence[Path], load_id: str, schema_name: str
    ) -> set[str]:
        ext = file_formats.extension(plan.file_format, self.config.compress)
        naive = file_formats.naive_columns(plan.columns)
        written: set[str] = set()
        for index, source in enumerate(files):
            relative = self.layout.path(
                schema_name, plan.name, load_id, file_id(load_id, plan.name, index), ext
            )
            target = f"{self.dataset_path}/{relative}"
            if plan.file_format == "parquet" and not file_formats.has_zoned(source, naive):
                put_file_atomic(self.fs, str(source), target)
            elif plan.file_format == "parquet":
                data = file_formats.parquet_without_zone(source, naive)
                write_bytes_atomic(self.fs, target, data)
            else:
                write_bytes_atomic(
                    self.fs,
                    target,
                    file_formats.render(
                        source,
                        plan.file_format,
                        self.config.compress,
                        [c.name for c in plan.columns],
                        naive,
                        [c.name for c in plan.columns if c.data_type == "json"],
                        self.config.csv_format,
                    ),
                )
            written.add(relative)
        return written

    def table_files(
        self, table: str, schema_name: str | None = None
    ) -> list[tuple[str, str | None]]:
        """``(relative path, load id or None)`` of every file of ``table`` in the dataset."""
        schema_name = schema_name if schema_name is not None else self._schema_name()
        pattern = self.layout.table_pattern(schema_name, table)
        folder = self.layout.table_folder(schema_name, table)
        base = f"{self.dataset_path}/{folder}".rstrip("/")
        if not self.fs.exists(base):
            return []
        found = []
        for path in self.fs.find(base):
            relative = posixpath.relpath(path, self.dataset_path)
            if posixpath.basename(relative).startswith("."):
                continue
            match = pattern.match(relative)
            if match:
                found.append((relative, match.groupdict().get("load_id")))
        return sorted(found)

    def _remove_other_files(self, plan: TablePlan, schema_name: str, keep: set[str]) -> None:
        stale = [r for r, _ in self.table_files(plan.name, schema_name) if r not in keep]
        if stale:
            self.fs.rm([f"{self.dataset_path}/{r}" for r in stale])

    def get_stored_schema(self, schema_name: str) -> TStoredSchema | None:
        return self.records.newest_schema(schema_name)

    def get_stored_state(self, pipeline_name: str) -> StateDict | None:
        """The newest state of a completed load (its ``_dlt_loads`` record exists)."""
        return self.records.newest_state(pipeline_name)

    # --- reading back ------------------------------------------------------------------

    @property
    def connection(self) -> duckdb.DuckDBPyConnection:
        """DuckDB over the dataset: one view per table, completed loads only (``reader.py``)."""
        return self._dataset_reader().connection

    def _dataset_reader(self) -> DatasetReader:
        if self._reader is None:
            from loadstone.plugins.destinations.filesystem.reader import DatasetReader

            self._reader = DatasetReader(self)
        return self._reader

    def qualified(self, table: str) -> str:
        return f'"{self.dataset_name}"."{table}"'

    def table_names(self) -> list[str]:
        return self._dataset_reader().table_names()

    def table_row_counts(self) -> dict[str, int]:
        return {
            t: int(
                (
                    self.connection.execute(f"SELECT count(*) FROM {self.qualified(t)}").fetchone()
                    or (0,)
                )[0]
            )
            for t in self.table_names()
        }

    def query_error_kind(self, error: Exception) -> str:
        """DuckDB's errors over the files, told apart as the DuckDB destination's are."""
        from loadstone.plugins.destinations.duckdb.client import error_kind

        return error_kind(error)

    def query(self, sql: str, *params: object) -> list[Row]:
        table = self.connection.sql(sql, params=list(params) or None)
        if table is None:
            return []
        arrow = table.to_arrow_table()
        return [tuple(row.values()) for row in arrow.to_pylist()]

    def use_dataset(self) -> None:
        self.connection.execute(f"SET search_path = '\"{self.dataset_name}\",main'")

    def remove_tables(self, names: Sequence[str]) -> None:
        """Remove every file of the named tables (a table format's whole folder): a refresh
        drops or empties them so (``loadstone.runtime.refresh``)."""
        for name in names:
            files = [f"{self.dataset_path}/{r}" for r, _ in self.table_files(name)]
            if files:
                self.fs.rm(files)
            folder = f"{self.dataset_path}/{name}"
            if self.fs.exists(folder):
                self.fs.rm(folder, recursive=True)
        self.close()  # the dataset's views are built again without them

    def drop_dataset(self) -> None:
        if self.fs.exists(self.dataset_path):
            self.fs.rm(self.dataset_path, recursive=True)
        self.close()

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None
