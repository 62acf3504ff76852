"""DuckDB loads a package's finished files while the rest is still being normalized.

:meth:`DuckDBClient.begin_package` opens the package's one transaction; each batch of
finished files (:class:`~loadstone.destinations.overlap.FinishedFiles`, from the load's
thread) is appended inside it: a table is created, or gets the columns the batch's schema
added (``ALTER TABLE ... ADD COLUMN``, before the files that need them), then one
``INSERT ... SELECT`` reads the batch's files of that table. Only tables whose rows simply
append (the ``append`` disposition, nested tables included) go in early; a merge or replace
needs the whole package, so its files wait for :meth:`DuckDBOverlappedLoad.finish`, which
migrates to the package's final schema (from the catalog the transaction kept up to date, not
read again), loads every file not appended yet, the state row and the ``_dlt_loads`` row, and
commits, as ``load_package`` does in one go. Nothing is visible
before that COMMIT, so a process killed at any moment leaves the database as it was.

The tables must end as a load after normalize makes them: a table created early has the
columns known then, in schema order, and later columns are added at its end. That is the
schema's order, as a normalizer only ever appends columns to a table (its first-seen
order); ``finish`` checks it against the final schema (names, types, NOT NULL) and, should it
differ, rolls back and loads the package the ordinary way.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from loadstone.destinations.contract import LoadFileSpec, LoadRequest, SchemaVersionRow, load_files
from loadstone.exceptions import DestinationSchemaMismatch
from loadstone.plugins.destinations.duckdb.parquet_source import ParquetSource
from loadstone.plugins.destinations.duckdb.sql import quote
from loadstone.plugins.destinations.tables import TableModel

if TYPE_CHECKING:
    from loadstone.destinations.overlap import FinishedFiles
    from loadstone.exceptions import LoadFailed
    from loadstone.naming import NamingConvention
    from loadstone.plugins.destinations.sql.dialect import Dialect
    from loadstone.plugins.destinations.sql.loader import Catalog
    from loadstone.schema import Column, Schema

#: a column as a table got it: (name, DuckDB type, NOT NULL)
MadeColumn = tuple[str, str, bool]


class DuckDBLoading(Protocol):
    """What this module uses of ``client.DuckDBClient`` (named by protocol: the client
    imports this module)."""

    dialect: Dialect
    dataset_name: str

    @property
    def driver_error(self) -> type[Exception]: ...

    def ident(self, name: str) -> str: ...
    def table_ident(self, name: str) -> str: ...
    def execute(self, sql: str, params: Sequence[object] | None = None) -> None: ...
    def begin(self) -> None: ...
    def commit(self) -> None: ...
    def ensure_dataset(self, staging: bool = False) -> list[str]: ...
    def dataset_columns(self, staging: bool = False) -> Catalog: ...
    def catalog_key(self, name: str) -> str: ...
    def qualified(self, table: str, staging: bool = False) -> str: ...
    def _setting(self, name: str) -> str: ...
    def _create_table(self, table: str, columns: Sequence[Column], staging: bool) -> str: ...
    def insert_files(
        self,
        table: str,
        target: str,
        columns: Sequence[tuple[str, str]],
        source: ParquetSource,
        ordered: bool,
    ) -> None: ...
    def keep_catalog(self, catalog: Catalog | None) -> None: ...
    def _limit_memory(
        self, model: TableModel, sources: Mapping[str, ParquetSource], threads: int | None = None
    ) -> None: ...
    def _restore_memory_limit(self) -> None: ...
    def _adopt_naming(
        self, schema: Schema | None, naming: NamingConvention | None = None
    ) -> None: ...
    def load_package(self, request: LoadRequest) -> None: ...
    def _package_resources(
        self, model: TableModel, sources: Mapping[str, ParquetSource], threads: int | None = None
    ) -> contextlib.AbstractContextManager[None]: ...
    def _write_package(
        self,
        request: LoadRequest,
        model: TableModel,
        sources: Mapping[str, ParquetSource],
        version: SchemaVersionRow,
        current: list[str | None],
    ) -> None: ...
    def _load_error(
        self,
        load_id: str,
        table: str | None,
        sources: Mapping[str, ParquetSource],
        exc: Exception,
    ) -> LoadFailed: ...
    def _rollback(self) -> None: ...


class DuckDBOverlappedLoad:
    """One package's transaction, open while the package is normalized."""

    def __init__(self, client: DuckDBLoading, load_id: str) -> None:
        self.client = client
        self.load_id = load_id
        #: DuckDB's threads, restored once normalize no longer needs the cores
        self._cores = int(client._setting("threads"))
        client.begin()
        client.execute("SET threads = 1")
        self._open = True
        #: whether DuckDB runs on one thread for now (``_cores`` restored by the last batch)
        self._one_thread = True
        #: ``{table key: {column key: (name, type)}}`` as this transaction sees it
        self._catalog = client.dataset_columns()
        if not self._catalog:  # a dataset with a table exists: no need to ask
            client.ensure_dataset()
        #: the column keys each table had before this load (absent: it is new)
        self._before = {table: set(columns) for table, columns in self._catalog.items()}
        #: the columns this load gave each table, in order
        self._made: dict[str, list[MadeColumn]] = {}
        #: the files appended so far (real paths)
        self._appended: set[str] = set()
        self._widest = 0

    # -- while normalize runs ----------------------------------------------------------
    def append(self, batch: Sequence[FinishedFiles], last: bool = False) -> None:
        """Append the batch's files of every table that appends (see module docstring).

        While normalize runs its workers take the cores, so DuckDB inserts on one thread
        (on two, the load took 1.4-2 CPU s more of 10 at 20k GitHub events, its threads
        waiting for cores, and finished no sooner); the ``last`` batch has them all.
        """
        if last:
            self._restore_threads()
        model = TableModel(batch[-1].schema(), self.client)
        by_table: dict[str, list[Path]] = {}
        for finished in batch:
            for table, files in finished.tables.items():
                by_table.setdefault(table, []).extend(files)
        early = {t: p for t, p in by_table.items() if self._appends(model, t) and p}
        self._limit_memory(model, early)
        for table, paths in early.items():
            self._ensure(model, table)
            columns = [
                (c.name, self.client.dialect.column_type(c, table))
                for c in model.typed_columns(table)
            ]
            source = ParquetSource.from_spec(table, paths)
            self.client.insert_files(table, self.client.qualified(table), columns, source, False)
            self._appended.update(os.path.realpath(p) for p in paths)

    def _appends(self, model: TableModel, table: str) -> bool:
        return (
            table in model.tables
            and model.disposition(table) == "append"
            and bool(model.typed_columns(table))
        )

    def _limit_memory(self, model: TableModel, tables: dict[str, list[Path]]) -> None:
        """DuckDB's memory capped by the widest table so far, as a whole package's load."""
        widest = max((len(model.typed_columns(t)) for t in tables), default=0)
        if widest > self._widest:
            self._widest = widest
            threads = 1 if self._one_thread else self._cores
            self.client._limit_memory(model, {t: ParquetSource(t, ()) for t in tables}, threads)

    def _ensure(self, model: TableModel, table: str) -> None:
        """Create ``table`` or add the columns it lacks, as the migration would."""
        client, key = self.client, self.client.catalog_key(table)
        columns = model.columns_for_destination(table)
        existing = self._catalog.get(key)
        if existing is None:
            client._create_table(table, columns, staging=False)
            made = [self._made_column(c, table, c.nullable is False) for c in columns]
            self._made[table] = made
            self._catalog[key] = {client.catalog_key(n): (n, t) for n, t, _ in made}
            return
        for column in columns:
            expected = client.dialect.column_type(column, table)
            found = existing.get(client.catalog_key(column.name))
            if found is None:
                client.execute(
                    f"ALTER TABLE {client.qualified(table)} ADD COLUMN {quote(column.name)} {expected}"
                )
                existing[client.catalog_key(column.name)] = (column.name, expected)
                self._made.setdefault(table, []).append((column.name, expected, False))
            elif not client.dialect.types_compatible(found[1], expected):
                # the ordinary load reports it (finish loads that way after this failure)
                raise DestinationSchemaMismatch(
                    f"{client.dataset_name}.{table}", found[0], found[1], expected
                )

    def _made_column(self, column: Column, table: str, not_null: bool) -> MadeColumn:
        return (column.name, self.client.dialect.column_type(column, table), not_null)

    # -- once the package is normalized -------------------------------------------------
    def finish(self, request: LoadRequest) -> None:
        """Load the rest and commit; the ordinary load if the early tables differ."""
        client = self.client
        self._restore_threads()
        client._adopt_naming(request.schema, request.naming)
        model = TableModel(request.schema, client)
        if not self._as_ordinary(model):
            self.abort()
            client.load_package(request)
            return
        version = SchemaVersionRow.of(request.schema)
        sources = {t: ParquetSource.from_spec(t, self._rest(s)) for t, s in request.tables.items()}
        current: list[str | None] = [None]
        try:
            with client._package_resources(model, sources, self._cores):
                # the migration starts from the catalog this transaction kept up to date
                client.keep_catalog({t: dict(c) for t, c in self._catalog.items()})
                client._write_package(request, model, sources, version, current)
                current[0] = None
                client.commit()
                self._open = False
        except client.driver_error as exc:
            self.abort()
            raise client._load_error(request.load_id, current[0], sources, exc) from exc
        except BaseException:
            self.abort()
            raise

    def _rest(self, spec: LoadFileSpec) -> list[Path]:
        """A table's files not appended yet."""
        return [f for f in load_files(spec) if os.path.realpath(f) not in self._appended]

    def _as_ordinary(self, model: TableModel) -> bool:
        """Whether every table this load changed has the columns, in the order, types and
        nullability, that migrating to ``model`` after normalize gives it so far."""
        for table, made in self._made.items():
            if table not in model.tables:
                return False
            before = self._before.get(self.client.catalog_key(table))
            columns = model.columns_for_destination(table)
            if before is None:
                expected = [self._made_column(c, table, c.nullable is False) for c in columns]
            else:
                key = self.client.catalog_key
                new = [c for c in columns if key(c.name) not in before]
                expected = [self._made_column(c, table, False) for c in new]
            if made != expected[: len(made)]:
                return False
        return True

    def _restore_threads(self) -> None:
        if self._one_thread:
            self.client.execute(f"SET threads = {self._cores}")
            self._one_thread = False

    def abort(self) -> None:
        """Roll back what this load did (once; nothing to do after a commit)."""
        self.client.keep_catalog(None)
        if self._open:
            self._open = False
            self.client._rollback()
        self._restore_threads()
        self.client._restore_memory_limit()
