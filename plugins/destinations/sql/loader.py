"""The loader the SQL destinations share: DDL, migration and the package transaction.

DuckDB and PostgreSQL load a package the same way: in one transaction, migrate the dataset
(create the dataset, the system tables and the schema's tables, add missing columns, record
the ``_dlt_version`` row), load every table through the shared write dispositions
(``merge.py``), write the ``_dlt_pipeline_state`` row and, last, the ``_dlt_loads`` row. A
failure rolls all of it back and is reported as the package's :class:`LoadFailed` (or
:class:`LoadRefused` when the database blames the data). That skeleton lives here once.

What differs per database stays in its client: how SQL runs (``execute``, ``first``), how a
transaction opens (``transaction``), how the catalog is read (``dataset_columns``), how the
files get into a table (``file_source``, ``insert_files``) and the driver's error classes;
column types and type comparison come from the client's :class:`Dialect`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import ClassVar, Generic

from loadstone import config
from loadstone.destinations.contract import (
    SYSTEM_TABLES,
    ClosesOnExit,
    Destination,
    LoadFileSpec,
    LoadRequest,
    Row,
    SchemaVersionRow,
    StateDict,
)
from loadstone.exceptions import DestinationSchemaMismatch, LoadFailed, LoadRefused
from loadstone.plugins.destinations.sql import bookkeeping, merge
from loadstone.plugins.destinations.sql.dialect import Dialect, quote
from loadstone.plugins.destinations.sql.merge import SourceT
from loadstone.plugins.destinations.sql.names import ClientNames
from loadstone.plugins.destinations.tables import TableModel
from loadstone.schema import Column, Schema
from loadstone.schema.stored import TStoredSchema

#: ``{column key: (name, type)}`` of one table, keys as the database compares names
TableColumns = dict[str, tuple[str, str]]
#: ``{table key: TableColumns}`` of a dataset
Catalog = dict[str, TableColumns]


class SqlLoader(ClientNames, ClosesOnExit, Generic[SourceT]):
    """What the DuckDB and PostgreSQL clients share (see module docstring)."""

    dialect: Dialect
    #: the driver's base error (a failed package) and its errors that blame the data
    driver_error: ClassVar[type[Exception]]
    data_errors: ClassVar[tuple[type[Exception], ...]]
    #: how ``replace`` loads (``merge.REPLACE_STRATEGIES``); a client may configure it
    replace_strategy: str = merge.REPLACE_STRATEGIES[0]
    #: dlt's ``create_indexes``: a column hinted ``unique`` gets a UNIQUE constraint (so a
    #: second row of its value fails the package); each client reads its setting
    create_indexes: bool = False

    # --- what each database does its own way -------------------------------------------

    def execute(self, sql: str, params: Sequence[object] | None = None) -> None:
        """Run one statement (``?`` placeholders)."""
        raise NotImplementedError

    def first(self, sql: str, params: Sequence[object] | None = None) -> Row | None:
        """The first row of a query, or None."""
        raise NotImplementedError

    def qualified(self, table: str, staging: bool = False) -> str:
        raise NotImplementedError

    def dataset_columns(self, staging: bool = False) -> Catalog:
        """Every table's columns and their types, in one catalog query."""
        raise NotImplementedError

    def ensure_dataset(self, staging: bool = False) -> list[str]:
        """Create the dataset (or its staging dataset) unless it exists; the DDL run."""
        raise NotImplementedError

    def table_exists(self, table: str) -> bool:
        raise NotImplementedError

    def transaction(self) -> contextlib.AbstractContextManager[object]:
        """Commit what runs inside, or roll it back when it raises."""
        raise NotImplementedError

    def file_source(self, table: str, spec: LoadFileSpec) -> SourceT:
        """The load files of one table of a request, as ``insert_files`` reads them."""
        raise NotImplementedError

    def insert_files(
        self,
        table: str,
        target: str,
        columns: Sequence[tuple[str, str]],
        source: SourceT,
        ordered: bool,
    ) -> None:
        raise NotImplementedError

    def catalog_key(self, name: str) -> str:
        """A name as the catalog keys it (a database that folds names compares folded)."""
        return name

    @contextlib.contextmanager
    def _package_resources(
        self, model: TableModel, sources: Mapping[str, SourceT]
    ) -> Iterator[None]:
        """Settings that hold while one package loads (none by default)."""
        yield

    def _load_tables(
        self,
        model: TableModel,
        sources: Mapping[str, SourceT],
        load_id: str,
        current: list[str | None],
    ) -> None:
        """Every table of the package, by the shared write dispositions."""
        merge.load_tables(self, model, sources, load_id, current, self.replace_strategy)

    # --- DDL and migration -------------------------------------------------------------

    def existing_columns(self, table: str, staging: bool = False) -> TableColumns | None:
        """The columns of a table in the dataset, or None if it is absent."""
        return self.dataset_columns(staging).get(self.catalog_key(table))

    def ensure_table(
        self,
        table: str,
        columns: Sequence[Column],
        staging: bool = False,
        known: Catalog | None = None,
    ) -> list[str]:
        """Create the table, or add its missing columns; fail on a column of another type.

        Columns added by ``ALTER TABLE ADD COLUMN`` are nullable: DuckDB cannot add a NOT
        NULL column, and a table created by someone else may already hold rows. ``known`` is
        :meth:`dataset_columns` when the caller ensures many tables (else it is looked up).
        """
        if known is None:
            existing = self.existing_columns(table, staging)
        else:
            existing = known.get(self.catalog_key(table))
        if existing is None:
            return [self._create_table(table, columns, staging)]
        target = self.qualified(table, staging)
        statements: list[str] = []
        for col in columns:
            expected = self.dialect.column_type(col, table)
            found = existing.get(self.catalog_key(col.name))
            if found is None:
                sql = f"ALTER TABLE {target} ADD COLUMN {quote(col.name)} {expected}"
                if self.dialect.unique_on_add:
                    sql += self._constraint(col)
                self.execute(sql)
                statements.append(sql)
            elif not self.dialect.types_compatible(found[1], expected):
                raise DestinationSchemaMismatch(
                    f"{self.dataset_name}.{table}",
                    found[0],
                    found[1],
                    self.dialect.type_name(expected),
                )
        return statements

    def _create_table(self, table: str, columns: Sequence[Column], staging: bool) -> str:
        parts = []
        for col in columns:
            ddl = f"{quote(col.name)} {self.dialect.column_type(col, table)}"
            if col.nullable is False:
                ddl += " NOT NULL"
            parts.append(ddl + self._constraint(col))
        sql = f"CREATE TABLE {self.qualified(table, staging)} ({', '.join(parts)})"
        self.execute(sql)
        return sql

    def _constraint(self, col: Column) -> str:
        """`` UNIQUE`` for a column hinted unique when the client creates indexes, as dlt
        1.31 does on PostgreSQL (its default) and on DuckDB (when asked); a merge stages its
        rows without them (``merge.py``)."""
        return " UNIQUE" if self.create_indexes and col.unique else ""

    def _migrate(
        self, model: TableModel, version: SchemaVersionRow, loading: Collection[str] | None = None
    ) -> list[str]:
        """The dataset brought to the schema (tables from ``model``; ``version`` is the
        ``_dlt_version`` row). ``loading``: the tables a package writes; a table no data
        reached yet (one added through the schema's API) then waits for its first rows, as
        in dlt 1.31, and one the dataset has still gets its new columns. Without it (an
        explicit ``update_stored_schema``) every table is made."""
        statements = self.ensure_dataset()
        known = self.dataset_columns()
        for name, cols in SYSTEM_TABLES.items():
            columns = [c.as_column(self.ident(c.name)) for c in cols]
            statements += self.ensure_table(self.system_table(name), columns, known=known)
        for table in sorted(model.data_tables(), key=model.depth):  # parents first
            columns = model.columns_for_destination(table)
            waits = loading is not None and not model.seen_data(table) and table not in loading
            waits = waits and self.catalog_key(table) not in known
            if columns and not waits:
                statements += self.ensure_table(table, columns, known=known)
                statements += self._fill_root_key(model, table, known)
        bookkeeping.record_version(self, version)
        return statements

    def _fill_root_key(self, model: TableModel, table: str, known: Catalog) -> list[str]:
        """Give the rows of a nested table that had no root key column theirs.

        A nested table made under ``replace`` or ``append`` has no ``_dlt_root_id``; when its
        root turns to ``merge`` the column is added, and a merge deletes a root row's nested
        rows by it: rows left without one would stay beside their replacements. Their root is
        their parent (a child of the root) or their parent's root (dlt 1.31 fails that load:
        DuckDB cannot add the NOT NULL column)."""
        existing = known.get(self.catalog_key(table))
        root_key, parent = model.root_key(table), model.parent(table)
        parent_key = model.parent_key(table)
        if existing is None or root_key is None or parent is None or parent_key is None:
            return []
        if self.catalog_key(root_key) in existing:
            return []
        target, rk, pk = self.qualified(table), quote(root_key), quote(parent_key)
        if model.parent(parent) is None:
            source = pk
        else:
            parent_root, parent_row = model.root_key(parent), model.row_key(parent)
            if parent_root is None or parent_row is None:
                return []
            source = (
                f"(SELECT p.{quote(parent_root)} FROM {self.qualified(parent)} AS p "
                f"WHERE p.{quote(parent_row)} = {target}.{pk})"
            )
        sql = f"UPDATE {target} SET {rk} = {source} WHERE {rk} IS NULL"
        self.execute(sql)
        return [sql]

    # --- the contract ------------------------------------------------------------------

    def initialize_storage(self) -> None:
        """Create the dataset if it does not exist."""
        self.ensure_dataset()

    def update_stored_schema(self, schema: Schema | None = None) -> list[str]:
        """Migrate the dataset to ``schema`` (default: the client's) in one transaction."""
        schema = schema if schema is not None else self.schema
        version = SchemaVersionRow.of(schema)
        self._adopt_naming(schema)
        with self.transaction():
            return self._migrate(TableModel(schema, self), version)

    def load_package(self, request: LoadRequest) -> None:
        """Load one package atomically (see module docstring); a loaded package is skipped."""
        self._adopt_naming(request.schema, request.naming)
        if self.is_package_loaded(request.load_id):
            return
        version = SchemaVersionRow.of(request.schema)
        model = TableModel(request.schema, self)
        sources = {table: self.file_source(table, spec) for table, spec in request.tables.items()}
        current: list[str | None] = [None]
        with self._package_resources(model, sources):
            try:
                with self.transaction():
                    self._write_package(request, model, sources, version, current)
                    # the commit can fail too (out of memory writing a wide table): it is
                    # reported like any other failure of the package
                    current[0] = None
            except self.driver_error as exc:
                raise self._load_error(request.load_id, current[0], sources, exc) from exc

    def _write_package(
        self,
        request: LoadRequest,
        model: TableModel,
        sources: Mapping[str, SourceT],
        version: SchemaVersionRow,
        current: list[str | None],
    ) -> None:
        """A package's statements in its open transaction, ``_dlt_loads`` last (``current``
        names the table being written, for the error)."""
        self._migrate(model, version, request.tables)
        self._load_tables(model, sources, request.load_id, current)
        if request.pipeline_state is not None:
            current[0] = self.system_table("_dlt_pipeline_state")
            bookkeeping.insert_state(self, request)
        current[0] = self.system_table("_dlt_loads")
        bookkeeping.insert_load(self, request.load_id, version)

    def _load_error(
        self,
        load_id: str,
        table: str | None,
        sources: Mapping[str, SourceT],
        exc: Exception,
    ) -> LoadFailed:
        """The package's error: the table being written, its files, the database's reason
        (its first error: a later statement fails only because the transaction is aborted)."""
        exc = _first_error(exc, self.driver_error)
        source = sources.get(table) if table is not None else None
        files = [str(f) for f in source.files] if source is not None else []
        text = str(exc).strip()
        reason = text.splitlines()[0] if text else type(exc).__name__
        # a value the database cannot convert or a constraint the rows break: in the data
        error = LoadRefused if isinstance(exc, self.data_errors) else LoadFailed
        return error(load_id, table, reason, files)

    def is_package_loaded(self, load_id: str) -> bool:
        return bookkeeping.is_package_loaded(self, load_id)

    def get_stored_schema(self, schema_name: str) -> TStoredSchema | None:
        return bookkeeping.stored_schema(self, schema_name)

    def get_stored_state(self, pipeline_name: str) -> StateDict | None:
        return bookkeeping.stored_state(self, pipeline_name)


def configured_create_indexes(destination: Destination, kind: str, default: bool) -> bool:
    """``create_indexes`` from the factory's arguments, else ``[destination.<name>]`` (or
    the destination type's section), else dlt's default for the destination."""
    keys = dict.fromkeys(
        [f"destination.{destination.name}.create_indexes", f"destination.{kind}.create_indexes"]
    )
    return config.get_bool(list(keys), default, explicit=destination.config.get("create_indexes"))


def _first_error(
    error: BaseException, kind: type[BaseException] | tuple[type[BaseException], ...]
) -> Exception:
    """The first database error of the chain ``error`` ends: a statement that ran while the
    first failure was handled fails with "transaction aborted", which is not the cause."""
    first, at, seen = error, error.__context__, {id(error)}
    while at is not None and id(at) not in seen:
        seen.add(id(at))
        if isinstance(at, kind):
            first = at
        at = at.__context__
    assert isinstance(first, Exception)
    return first
