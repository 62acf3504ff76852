"""``table_format="iceberg"``: each table an Iceberg table at ``<bucket_url>/<dataset>/<table>``.

The catalog is pyiceberg's SQL catalog on SQLite by default, in memory: the bucket is the
source of truth, and each table is registered from its newest metadata file before a load,
so nothing beside the bucket has to survive between runs. Any catalog pyiceberg supports is
used instead when ``[destination.filesystem] iceberg_catalog`` gives its properties (for
instance ``{type = "sql", uri = "sqlite:////var/lib/catalog.db"}`` or a REST catalog); the
namespace is the dataset name.

One commit per table per package: every snapshot carries ``loadstone.load_id`` in its
summary, and a table that already has a snapshot of the package's load id is skipped on a
retry. Dispositions: append, replace (overwrite), merge as upsert (``Table.upsert`` on the
root's primary key, on ``_dlt_id`` for nested tables: as in dlt, elements of a nested list
that shrank stay) or delete-insert (a delete of the rows ``delete_insert.py`` selects, for
nested tables through their root, and an append of the rows that come, in one transaction).
New columns are added with ``union_by_name`` before the data commit.

Appends of Parquet files whose columns the table has in the same types (or adds, in the same
commit, in the file's type) are registered with ``add_files`` after a byte copy into the
table's ``data/`` folder: their rows never pass through the loader (only their footers are
read, for the schema and for statistics).
"""

from __future__ import annotations

import contextlib
import logging
import uuid
import warnings
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from loadstone.plugins.destinations.filesystem.arrow_data import (
    empty_table,
    file_schema,
    format_schema,
    naive_columns,
    read_table,
)
from loadstone.storage.filesystem import FilesystemCredentials, is_local, put_file_atomic

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyiceberg.table import Table, Transaction

    from loadstone.plugins.destinations.filesystem.client_view import (
        ClientView as FilesystemClient,
    )
    from loadstone.plugins.destinations.filesystem.delete_insert import KeyMatch, Replacement
    from loadstone.plugins.destinations.filesystem.tables import TablePlan

LOAD_ID_PROPERTY = "loadstone.load_id"


class _NoMissingStatistics(logging.Filter):
    """Drops pyiceberg's "PyArrow statistics missing for column N" warnings: the normalizer
    writes its Parquet files without statistics (they are read whole), so ``add_files``
    would print one line per column per file on every append (dlt's runs print none); the
    table simply records no column bounds for those files."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("PyArrow statistics missing")


@contextlib.contextmanager
def _quiet_missing_statistics() -> Iterator[None]:
    log = logging.getLogger("pyiceberg.io.pyarrow")
    quiet = _NoMissingStatistics()
    log.addFilter(quiet)
    try:
        yield
    finally:
        log.removeFilter(quiet)


def io_properties(credentials: FilesystemCredentials) -> dict[str, str]:
    """dlt's credential keys as pyiceberg FileIO properties."""
    mapping = {
        "aws_access_key_id": "s3.access-key-id",
        "aws_secret_access_key": "s3.secret-access-key",
        "aws_session_token": "s3.session-token",
        "region_name": "s3.region",
        "endpoint_url": "s3.endpoint",
    }
    return {mapping[k]: v for k, v in credentials.as_dict().items() if k in mapping}


class IcebergWriter:
    """Commits the tables of one package to Iceberg tables of one dataset."""

    def __init__(self, client: FilesystemClient) -> None:
        self.client = client
        self.catalog = self._catalog()
        self.namespace = client.dataset_name

    def _catalog(self) -> Catalog:
        from pyiceberg.catalog import load_catalog

        config = self.client.config
        properties = {**io_properties(config.credentials), **dict(config.iceberg_catalog)}
        return load_catalog(config.iceberg_catalog_name, **properties)

    def _in_memory(self) -> bool:
        return str(self.client.config.iceberg_catalog.get("uri", "")).endswith(":memory:")

    def _location(self, table: str) -> str:
        url = self.client.table_url(table)
        return f"file://{url}" if is_local(url) else url

    def open(self, table: str) -> Table | None:
        from pyiceberg.exceptions import NoSuchTableError

        identifier = (self.namespace, table)
        self.catalog.create_namespace_if_not_exists(self.namespace)
        try:
            return self.catalog.load_table(identifier)
        except NoSuchTableError:
            pass
        metadata = self._newest_metadata(table) if self._in_memory() else None
        if metadata is None:
            return None
        return self.catalog.register_table(identifier, metadata)

    def _newest_metadata(self, table: str) -> str | None:
        """The newest ``metadata/NNNNN-<uuid>.metadata.json`` of a table in the bucket."""
        fs = self.client.fs
        folder = f"{self.client.dataset_path}/{table}/metadata"
        if not fs.exists(folder):
            return None
        found = [p for p in fs.ls(folder, detail=False) if p.endswith(".metadata.json")]
        if not found:
            return None
        newest = max(found, key=lambda p: int(Path(p).name.split("-", 1)[0]))
        location = self._location(table)
        return f"{location}/metadata/{Path(newest).name}"

    def read(self, table: str, columns: Sequence[str] | None = None) -> pa.Table | None:
        """The table's rows (only ``columns`` it has, when given), None without a table."""
        opened = self.open(table)
        if opened is None:
            return None
        if columns is None:
            return opened.scan().to_arrow()
        present = set(opened.schema().as_arrow().names)
        return opened.scan(selected_fields=tuple(c for c in columns if c in present)).to_arrow()

    def commit(
        self,
        plan: TablePlan,
        files: Sequence[Path],
        load_id: str,
        replacement: Replacement | None = None,
    ) -> None:
        """One catalog commit: schema evolution and the data of the package together
        (``replacement``: a delete-insert's rows to remove and add, instead of ``files``).

        Only the files' footers are read to decide; rows are read when they must be written.
        """
        table = self.open(plan.name)
        if table is not None and _has_load(table, load_id):
            return  # this package's snapshot is already in the table
        if replacement is not None:
            self._replace_rows(plan, table, replacement, {LOAD_ID_PROPERTY: load_id})
            return
        if not files and (plan.write_disposition != "replace" or table is None):
            return
        properties = {LOAD_ID_PROPERTY: load_id}
        stored = None if table is None else table.schema().as_arrow()
        naive = naive_columns(plan.columns, stored)
        schema = (
            file_schema(files, "iceberg", naive)
            if files
            else empty_table(plan.columns, naive).schema
        )
        if table is None:
            table = self.catalog.create_table(
                (self.namespace, plan.name), schema=schema, location=self._location(plan.name)
            )
        direct = plan.write_disposition == "append" and self._files_fit(table, files, naive)
        data = (
            None
            if direct
            else (read_table(files, "iceberg", naive) or empty_table(plan.columns, naive))
        )
        with table.transaction() as transaction:
            with transaction.update_schema() as update:
                update.union_by_name(schema)
            if data is None:
                with _quiet_missing_statistics():
                    transaction.add_files(
                        self._copy_files(table, files), snapshot_properties=properties
                    )
            elif plan.write_disposition == "replace":
                transaction.overwrite(data, snapshot_properties=properties)
            elif plan.write_disposition == "merge":
                self._merge(transaction, plan, data, properties)
            else:
                transaction.append(data, snapshot_properties=properties)

    def _merge(
        self, transaction: Transaction, plan: TablePlan, data: pa.Table, properties: dict[str, str]
    ) -> None:
        keys = list(plan.primary_key) if plan.is_root else ["_dlt_id"]
        if not keys:  # a merge without a key appends, as in dlt
            transaction.append(data, snapshot_properties=properties)
        else:
            transaction.upsert(
                data,
                join_cols=keys,
                when_matched_update_all=plan.merge_strategy != "insert-only",
                snapshot_properties=properties,
            )

    def _replace_rows(
        self,
        plan: TablePlan,
        table: Table | None,
        replacement: Replacement,
        properties: dict[str, str],
    ) -> None:
        """Delete-insert in one transaction: delete the selected rows, append the new ones."""
        rows = replacement.rows if replacement.rows is not None else None
        condition = _condition(replacement.remove)
        if (rows is None or rows.num_rows == 0) and (table is None or condition is None):
            return
        if table is None:
            assert rows is not None
            table = self.catalog.create_table(
                (self.namespace, plan.name),
                schema=format_schema(rows.schema, "iceberg"),
                location=self._location(plan.name),
            )
        with table.transaction() as transaction:
            if rows is not None:
                with transaction.update_schema() as update:
                    update.union_by_name(format_schema(rows.schema, "iceberg"))
            if condition is not None:
                with warnings.catch_warnings():  # "did not match any records" is expected
                    warnings.simplefilter("ignore", UserWarning)
                    transaction.delete(condition, snapshot_properties=properties)
            if rows is not None and rows.num_rows:
                transaction.append(rows, snapshot_properties=properties)

    def _files_fit(self, table: Table, files: Sequence[Path], naive: Collection[str]) -> bool:
        """True when every file column is a table column of the same type, or a new column
        the commit adds in the file's type (the format holds every type as it is)."""
        if not files:
            return False
        current = {f.name: f.type for f in table.schema().as_arrow()}
        for source in files:
            for field in pq.read_schema(source):
                wanted = format_schema(pa.schema([field]), "iceberg", naive)[0].type
                if wanted != field.type:
                    return False
                if field.name in current and not _same_type(current[field.name], field.type):
                    return False
        return True

    def _copy_files(self, table: Table, files: Sequence[Path]) -> list[str]:
        """Byte copies of ``files`` in the table's ``data/`` folder, as catalog locations."""
        folder = table.name()[-1]
        location = self._location(folder)
        paths = []
        for source in files:
            name = f"{uuid.uuid4().hex}-{Path(source).name}"
            target = f"{self.client.dataset_path}/{folder}/data/{name}"
            put_file_atomic(self.client.fs, str(source), target)
            paths.append(f"{location}/data/{name}")
        return paths


def _condition(matches: Sequence[KeyMatch]) -> Any:
    """A pyiceberg filter selecting the rows whose keys are in any of ``matches``."""
    from pyiceberg.expressions import And, EqualTo, In, Or

    clauses: list[Any] = []
    for match in matches:
        rows = match.values.to_pylist()
        if not rows:
            continue
        if len(match.columns) == 1:
            (column,) = match.columns
            # pyiceberg's In takes (term, values) at run time; its annotations disagree
            clauses.append(In(column, [r[column] for r in rows]))  # type: ignore[call-arg, arg-type]
            continue
        for row in rows:
            # as In: EqualTo takes (term, value) at run time
            pairs = [EqualTo(c, row[c]) for c in match.columns]  # type: ignore[call-arg, arg-type]
            clauses.append(pairs[0] if len(pairs) == 1 else And(*pairs))
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else Or(*clauses)


def _same_type(table_type: Any, file_type: pa.DataType) -> bool:
    if table_type is None:
        return False
    if pa.types.is_large_string(table_type) and pa.types.is_string(file_type):
        return True
    return bool(table_type == file_type)


def _has_load(table: Table, load_id: str) -> bool:
    for snapshot in table.snapshots():
        summary = snapshot.summary
        if summary is not None and summary.additional_properties.get(LOAD_ID_PROPERTY) == load_id:
            return True
    return False
