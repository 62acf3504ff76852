"""The DuckDB loader: one client per dataset (a DuckDB schema) of one database file.

Everything of one package happens in one DuckDB transaction (DuckDB's DDL is transactional):
schema migration, staging, the data of every table, the ``_dlt_pipeline_state`` row and, last,
the ``_dlt_loads`` row. A failure at any point rolls all of it back, so a retry loads the
package exactly once; a package whose load id is already in ``_dlt_loads`` is not loaded again.

Every name is quoted (``sql.quote``) and fully qualified ``"catalog"."dataset"."table"``.
A database file is attached with smaller row groups than DuckDB's own, so the threads of an
insert write it and the commit does not compress it on one core (``database_file.py``).
Write dispositions are the shared SQL ones (``sql/merge.py``, with :data:`sql.DIALECT`);
merges stage data in ``<dataset>_staging`` and apply it from there.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from loadstone.destinations.contract import (
    SYSTEM_TABLES,
    ClosesOnExit,
    Destination,
    LoadRequest,
    SchemaVersionRow,
    as_schema,
)
from loadstone.exceptions import (
    DestinationError,
    DestinationSchemaMismatch,
    DuckDBConnectionError,
    LoadFailed,
    LoadRefused,
)
from loadstone.plugins.destinations.duckdb.database_file import open_database_file
from loadstone.plugins.destinations.duckdb.memory import load_memory_limit, parse_size
from loadstone.plugins.destinations.duckdb.parquet_source import ParquetSource
from loadstone.plugins.destinations.duckdb.row_groups import configured_row_group_size
from loadstone.plugins.destinations.duckdb.sql import (
    DIALECT,
    duckdb_type,
    literal,
    normalize_type_name,
    qualified,
    quote,
    types_compatible,
)
from loadstone.plugins.destinations.sql import bookkeeping, merge
from loadstone.plugins.destinations.sql.names import ClientNames
from loadstone.plugins.destinations.tables import TableModel
from loadstone.schema import Column

if TYPE_CHECKING:
    pass

#: the environment variable of DuckDB's credentials (read through loadstone.config)
CREDENTIALS_ENV = "DESTINATION__DUCKDB__CREDENTIALS"


def resolve_credentials(destination: Destination, pipeline_name: str | None) -> Any:
    """Where the database is: explicit credentials, then configuration, then
    ``<pipeline_name>.duckdb`` in the working directory."""
    explicit = destination.config.get("credentials")
    if explicit is not None:
        return explicit
    configured = _configured_credentials(destination.name)
    if configured:
        return configured
    return f"{pipeline_name or 'loadstone'}.duckdb"


def _configured_credentials(name: str) -> str | None:
    """``destination.<name>.credentials`` from configuration (env
    ``DESTINATION__<NAME>__CREDENTIALS``, config.toml ...); a destination registered under
    another name also reads DuckDB's own key."""
    from loadstone import config

    keys = [f"destination.{name}.credentials", "destination.duckdb.credentials"]
    return config.get_str(keys, "") or None


def connect(
    credentials: Any, row_group_size: int | None = None
) -> tuple[duckdb.DuckDBPyConnection, bool]:
    """Open (or borrow) a connection; returns it and whether this client owns it.

    A database file loadstone opens itself is attached with ``row_group_size`` rows per row
    group (see ``database_file.py`` and ``row_groups.py``); None opens it as
    ``duckdb.connect`` does. A borrowed connection and ``:memory:`` are left as they are.
    """
    if isinstance(credentials, duckdb.DuckDBPyConnection):
        return credentials, False
    path = str(credentials)
    for prefix in ("duckdb:///", "duckdb://"):
        if path.startswith(prefix):
            path = path[len(prefix) :]
    if path != ":memory:":
        Path(path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        path = str(Path(path).expanduser())
    deadline = time.monotonic() + _lock_timeout()
    while True:
        try:
            if path == ":memory:" or row_group_size is None:
                return duckdb.connect(path), True
            return open_database_file(path, row_group_size), True
        except duckdb.IOException as error:
            # another process holds the file: wait for it (a pipeline loads for a while)
            if "lock" not in str(error).lower() or time.monotonic() >= deadline:
                raise DuckDBConnectionError(path, str(error).splitlines()[0]) from error
            time.sleep(0.2)
        except duckdb.Error as error:
            raise DuckDBConnectionError(path, str(error).splitlines()[0]) from error


#: Seconds to wait for another process to release a database file (config
#: ``destination.duckdb.lock_timeout``).
DEFAULT_LOCK_TIMEOUT = 60.0


def _lock_timeout() -> float:
    from loadstone import config

    return config.get_float(
        "destination.duckdb.lock_timeout", DEFAULT_LOCK_TIMEOUT, expected="a number of seconds"
    )


class DuckDBClient(ClientNames, ClosesOnExit):
    """Loads packages into one dataset of a DuckDB database (see module docstring)."""

    dialect = DIALECT

    def __init__(
        self,
        destination: Destination,
        schema: Any,
        dataset_name: str,
        *,
        pipeline_name: str | None = None,
        staging_dataset_name: str | None = None,
    ) -> None:
        self._bind_dataset(destination, schema, dataset_name, pipeline_name, staging_dataset_name)
        self.credentials = resolve_credentials(destination, pipeline_name)
        row_group_size = configured_row_group_size(destination.config.get("row_group_size"))
        self._conn, self._owns = connect(self.credentials, row_group_size)
        #: DuckDB's own memory limit, when the load may lower it by width (see memory.py)
        self._default_limit: int | None = None
        self._exec("SET TimeZone = 'UTC'")
        if self._owns:
            # a loader is not interactive: no progress bar on stdout
            self._exec("SET enable_progress_bar = false")
            # a configured limit holds for the whole connection; without one, each load
            # sets a limit by schema width (see memory.py), so memory stays flat in rows
            from loadstone import config

            limit = config.get_str("destination.duckdb.memory_limit", "")
            if limit:
                self._exec(f"SET memory_limit = {literal(limit)}")
            else:
                self._default_limit = parse_size(self._setting("memory_limit"))
        self.catalog: str = self._row("SELECT current_database()")[0]

    def qualified(self, table: str, staging: bool = False) -> str:
        dataset = self.staging_dataset_name if staging else self.dataset_name
        return qualified(self.catalog, dataset, table)

    # --- introspection -----------------------------------------------------------------

    def existing_columns(
        self, table: str, staging: bool = False
    ) -> dict[str, tuple[str, str]] | None:
        """``{lower name: (name, type)}`` of a table in the dataset, or None if it is absent.

        Names compare case-insensitively because DuckDB identifiers do.
        """
        return self._catalog_columns(staging, table).get(table.lower())

    def dataset_columns(self, staging: bool = False) -> dict[str, dict[str, tuple[str, str]]]:
        """``{lower table: {lower name: (name, type)}}`` of every table in the dataset.

        One query for a whole migration: asking ``information_schema`` once per table took
        5 ms a table, 2.2 s for a package of 200 nested tables.
        """
        return self._catalog_columns(staging)

    def _catalog_columns(
        self, staging: bool, table: str | None = None
    ) -> dict[str, dict[str, tuple[str, str]]]:
        """The dataset's columns from ``information_schema``, of one table or of all."""
        dataset = self.staging_dataset_name if staging else self.dataset_name
        sql = (
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_catalog = ? AND lower(table_schema) = lower(?)"
        )
        params = [self.catalog, dataset]
        if table is not None:
            sql += " AND lower(table_name) = lower(?)"
            params.append(table)
        rows = self._conn.execute(sql + " ORDER BY table_name, ordinal_position", params).fetchall()
        tables: dict[str, dict[str, tuple[str, str]]] = {}
        for name_of_table, name, type_ in rows:
            tables.setdefault(name_of_table.lower(), {})[name.lower()] = (name, type_)
        return tables

    def table_exists(self, table: str) -> bool:
        return self.existing_columns(table) is not None

    # --- DDL ---------------------------------------------------------------------------

    def _exec(self, sql: str, params: Sequence[Any] | None = None) -> None:
        self._conn.execute(sql, list(params) if params else None).fetchall()

    def first(self, sql: str, params: Sequence[Any] | None = None) -> tuple[Any, ...] | None:
        """The first row (the whole result is fetched: DuckDB 2 refuses new statements while a
        result is unfinished)."""
        found = self._conn.execute(sql, list(params) if params else None).fetchall()
        return found[0] if found else None

    def _row(self, sql: str, params: Sequence[Any] | None = None) -> tuple[Any, ...]:
        """The row of a query that always returns one (``count(*)``, a setting)."""
        row = self.first(sql, params)
        assert row is not None, sql
        return row

    def ensure_dataset(self, staging: bool = False) -> list[str]:
        dataset = self.staging_dataset_name if staging else self.dataset_name
        exists = self.first(
            "SELECT 1 FROM information_schema.schemata WHERE catalog_name = ? AND lower(schema_name) = lower(?)",
            [self.catalog, dataset],
        )
        if exists:
            return []
        sql = f"CREATE SCHEMA IF NOT EXISTS {qualified(self.catalog, dataset)}"
        self._exec(sql)
        return [sql]

    def ensure_table(
        self,
        table: str,
        columns: Sequence[Column],
        staging: bool = False,
        known: Mapping[str, dict[str, tuple[str, str]]] | None = None,
    ) -> list[str]:
        """Create the table, or add its missing columns; fail on a column of another type.

        New columns added by ALTER are nullable: DuckDB cannot add a NOT NULL column, and a
        table created by someone else may already hold rows. ``known`` is
        :meth:`dataset_columns` when the caller ensures many tables (else it is looked up).
        """
        target = self.qualified(table, staging)
        if known is None:
            existing = self.existing_columns(table, staging)
        else:
            existing = known.get(table.lower())
        statements: list[str] = []
        if existing is None:
            parts = []
            for col in columns:
                ddl = f"{quote(col.name)} {duckdb_type(col, table)}"
                if col.nullable is False:
                    ddl += " NOT NULL"
                parts.append(ddl)
            sql = f"CREATE TABLE {target} ({', '.join(parts)})"
            self._exec(sql)
            return [sql]
        for col in columns:
            expected = duckdb_type(col, table)
            found = existing.get(col.name.lower())
            if found is None:
                sql = f"ALTER TABLE {target} ADD COLUMN {quote(col.name)} {expected}"
                self._exec(sql)
                statements.append(sql)
            elif not types_compatible(found[1], expected):
                raise DestinationSchemaMismatch(
                    f"{self.dataset_name}.{table}",
                    found[0],
                    found[1],
                    normalize_type_name(expected),
                )
        return statements

    def _ensure_system_tables(
        self, known: Mapping[str, dict[str, tuple[str, str]]] | None = None
    ) -> list[str]:
        statements: list[str] = []
        for name, cols in SYSTEM_TABLES.items():
            columns = [c.as_column(self.ident(c.name)) for c in cols]
            statements += self.ensure_table(self.system_table(name), columns, known=known)
        return statements

    def _migrate(self, model: TableModel, version: SchemaVersionRow) -> list[str]:
        """The dataset brought to the schema (tables from ``model``; ``version`` is the
        ``_dlt_version`` row)."""
        statements = self.ensure_dataset()
        known = self.dataset_columns()
        statements += self._ensure_system_tables(known)
        for table in model.data_tables():
            columns = model.columns_for_destination(table)
            if columns:
                statements += self.ensure_table(table, columns, known=known)
        self._record_version(version)
        return statements

    def _record_version(self, version: SchemaVersionRow) -> bool:
        return bookkeeping.record_version(self, version)

    # --- the contract ------------------------------------------------------------------

    def initialize_storage(self) -> None:
        """Create the dataset if it does not exist."""
        self.ensure_dataset()

    def update_stored_schema(self, schema: Any = None) -> list[str]:
        """Migrate the dataset to ``schema`` (default: the client's) in one transaction."""
        schema = schema if schema is not None else self.schema
        version = SchemaVersionRow.of(schema)
        self._adopt_naming(schema)
        self._exec("BEGIN TRANSACTION")
        try:
            statements = self._migrate(TableModel(as_schema(schema), self), version)
        except BaseException:
            self._exec("ROLLBACK")
            raise
        self._exec("COMMIT")
        return statements

    def load_package(self, request: LoadRequest) -> None:
        """Load one package atomically (see module docstring); a loaded package is skipped."""
        self._adopt_naming(request.schema)
        if self.is_package_loaded(request.load_id):
            return
        version = SchemaVersionRow.of(request.schema)
        model = TableModel(as_schema(request.schema), self)
        sources = {
            table: ParquetSource.from_spec(table, spec) for table, spec in request.tables.items()
        }
        current: list[str | None] = [None]
        self._limit_memory(model, sources)
        try:
            self._load_in_transaction(request, version, model, sources, current)
        finally:
            self._restore_memory_limit()

    def _load_in_transaction(
        self,
        request: LoadRequest,
        version: SchemaVersionRow,
        model: TableModel,
        sources: Mapping[str, ParquetSource],
        current: list[str | None],
    ) -> None:
        self._exec("BEGIN TRANSACTION")
        try:
            self._migrate(model, version)
            merge.load_tables(self, model, sources, request.load_id, current)
            if request.pipeline_state is not None:
                current[0] = self.system_table("_dlt_pipeline_state")
                self._insert_state(request)
            current[0] = self.system_table("_dlt_loads")
            self._insert_load(request.load_id, version)
            # a commit can fail too (DuckDB out of memory while writing a wide table): it is
            # reported like any other failure of the package
            current[0] = None
            self._exec("COMMIT")
        except DestinationError:
            self._rollback()
            raise
        except duckdb.Error as exc:
            self._rollback()
            table = current[0]
            source = sources.get(table) if table is not None else None
            files = [str(f) for f in source.files] if source is not None else []
            # a value DuckDB cannot convert or a constraint the rows break: in the data
            refused = isinstance(exc, duckdb.DataError | duckdb.IntegrityError)
            error = LoadRefused if refused else LoadFailed
            raise error(request.load_id, table, str(exc).splitlines()[0], files) from exc
        except BaseException:
            self._rollback()
            raise

    def _rollback(self) -> None:
        """Roll the package back; settings a load changed are not transactional, so reset."""
        try:
            self._exec("ROLLBACK")
        except duckdb.TransactionException:
            pass  # a failed COMMIT has rolled the transaction back already
        self._conn.execute("RESET preserve_insertion_order")

    def _setting(self, name: str) -> str:
        return str(self._row("SELECT current_setting(?)", [name])[0])

    def _limit_memory(self, model: TableModel, sources: Mapping[str, ParquetSource]) -> None:
        """Cap DuckDB's memory for this package by its widest table (unless configured)."""
        if self._default_limit is None:
            return
        widest = max((len(model.typed_columns(t)) for t in sources), default=0)
        threads = int(self._setting("threads"))
        limit = load_memory_limit(widest, threads, self._default_limit)
        self._conn.execute(f"SET memory_limit = '{limit}B'")

    def _restore_memory_limit(self) -> None:
        """The limit is the database's, not this load's: others may share it in-process."""
        if self._default_limit is not None:
            self._conn.execute("RESET memory_limit")

    def _insert_state(self, request: LoadRequest) -> None:
        bookkeeping.insert_state(self, request)

    def _insert_load(self, load_id: str, version: SchemaVersionRow) -> None:
        bookkeeping.insert_load(self, load_id, version)

    def is_package_loaded(self, load_id: str) -> bool:
        return bookkeeping.is_package_loaded(self, load_id)

    def get_stored_schema(self, schema_name: str) -> dict[str, Any] | None:
        return bookkeeping.stored_schema(self, schema_name)

    def get_stored_state(self, pipeline_name: str) -> dict[str, Any] | None:
        return bookkeeping.stored_state(self, pipeline_name)

    def table_names(self) -> list[str]:
        rows = self._conn.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_catalog = ? AND lower(table_schema) = lower(?) ORDER BY table_name",
            [self.catalog, self.dataset_name],
        ).fetchall()
        return [r[0] for r in rows]

    def table_row_counts(self) -> dict[str, int]:
        return {
            t: self._row(f"SELECT count(*) FROM {self.qualified(t)}")[0] for t in self.table_names()
        }

    def query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        """Run ``sql`` (``?`` placeholders) and return all rows as tuples.

        DuckDB's Python rows for TIMESTAMP WITH TIME ZONE need ``pytz``; without it the rows
        are fetched through Arrow instead (aware datetimes via ``zoneinfo``).
        """
        bound = list(params) if params else None
        result = self._conn.execute(sql, bound)
        try:
            return result.fetchall()
        except duckdb.InvalidInputException as error:
            abort = getattr(result, "abort", None)  # DuckDB 2: release the unfinished result
            if abort is not None:
                abort()
            if "pytz" not in str(error):
                raise
        table = self._conn.sql(sql, params=bound).to_arrow_table()
        return [tuple(row.values()) for row in table.to_pylist()]

    def use_dataset(self) -> None:
        """Resolve unqualified table names in the dataset (dlt's ``sql_client`` does).

        Loads never need it (every name they write is qualified); queries typed by users do.
        A dataset not created yet is left alone: DuckDB refuses a search path into nothing.
        """
        if self.dataset_exists():
            path = f"{quote(self.catalog)}.{quote(self.dataset_name)},main"
            self._conn.execute(f"SET search_path = {literal(path)}")

    def dataset_exists(self) -> bool:
        found = self._conn.execute(
            "SELECT count(*) FROM information_schema.schemata "
            "WHERE catalog_name = ? AND schema_name = ?",
            [self.catalog, self.dataset_name],
        ).fetchone()
        return bool(found and found[0])

    def drop_dataset(self) -> None:
        for dataset in (self.dataset_name, self.staging_dataset_name):
            self._exec(f"DROP SCHEMA IF EXISTS {qualified(self.catalog, dataset)} CASCADE")

    @property
    def connection(self) -> duckdb.DuckDBPyConnection:
        """The open DuckDB connection (for reading results; loads go through the contract)."""
        return self._conn

    def close(self) -> None:
        if self._owns:
            self._conn.close()

    # --- used by merge.py --------------------------------------------------------------

    def execute(self, sql: str, params: Iterable[Any] | None = None) -> None:
        """Run one statement of a disposition (every statement goes through ``_exec``)."""
        self._exec(sql, list(params) if params is not None else None)

    def insert_files(
        self,
        table: str,
        target: str,
        columns: Sequence[tuple[str, str]],
        source: ParquetSource,
        ordered: bool,
    ) -> None:
        """``INSERT ... SELECT`` from the Parquet files (DuckDB reads them itself).

        DuckDB keeps insertion order by default, which serializes a parallel insert and holds
        its batches in memory; when ``ordered`` is false (a final table) the setting is
        lifted for the insert. On failure the client's rollback resets it.
        """
        names = ", ".join(quote(n) for n, _ in columns)
        from_clause = source.from_clause(self._conn)
        if not ordered:
            self._exec("SET preserve_insertion_order = false")
        self._exec(
            f"INSERT INTO {target} ({names}) SELECT {source.select_list(columns)} FROM {from_clause}"
        )
        if not ordered:
            self._exec("RESET preserve_insertion_order")
