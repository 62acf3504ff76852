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

import contextlib
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from loadstone import config, current
from loadstone.destinations.contract import Destination, LoadFileSpec, Row, StoredAt
from loadstone.exceptions import DuckDBConnectionError
from loadstone.plugins.destinations.duckdb import database_file
from loadstone.plugins.destinations.duckdb.memory import (
    configured_memory_limit,
    load_memory_limit,
    parse_size,
)
from loadstone.plugins.destinations.duckdb.overlap import DuckDBOverlappedLoad
from loadstone.plugins.destinations.duckdb.parquet_source import ParquetSource
from loadstone.plugins.destinations.duckdb.row_groups import configured_row_group_size
from loadstone.plugins.destinations.duckdb.sql import DIALECT, literal, qualified, quote
from loadstone.plugins.destinations.sql.loader import (
    Catalog,
    SqlLoader,
    TableColumns,
    configured_create_indexes,
)
from loadstone.plugins.destinations.tables import TableModel
from loadstone.schema import Schema

if TYPE_CHECKING:
    from loadstone.naming import NamingConvention

#: the environment variable of DuckDB's credentials (read through loadstone.config)
CREDENTIALS_ENV = "DESTINATION__DUCKDB__CREDENTIALS"


def resolve_credentials(destination: Destination, pipeline_name: str | None) -> object:
    """Where the database is: explicit credentials (a path, a ``duckdb://`` URL or an open
    connection), then configuration, then ``<pipeline_name>.duckdb`` in the working
    directory; ``:pipeline:`` (dlt's) names that file in the pipeline's working folder."""
    found = _database_of(destination.config.get("credentials"))
    if found is None:
        found = _configured_credentials(destination.name) or None
    if found == PIPELINE_DATABASE:
        return _in_working_dir(pipeline_name)
    return f"{pipeline_name or 'loadstone'}.duckdb" if found is None else found


#: dlt's credentials for a database in the pipeline's working folder
#: (``<pipelines_dir>/<pipeline_name>/<pipeline_name>.duckdb``)
PIPELINE_DATABASE = ":pipeline:"


def _in_working_dir(pipeline_name: str | None) -> str:
    """``<pipeline_name>.duckdb`` in the working folder of the pipeline running under that
    name (the current directory when none is)."""
    name = pipeline_name or "loadstone"
    running = current.active()
    folder = running.working_dir if running and running.pipeline_name == name else "."
    return str(Path(folder) / f"{name}.duckdb")


def _configured_credentials(name: str) -> str | None:
    """``destination.<name>.credentials`` from configuration (env
    ``DESTINATION__<NAME>__CREDENTIALS``, config.toml ...); a destination registered under
    another name also reads DuckDB's own key. A table of credentials names its ``database``
    (dlt's ``[destination.duckdb.credentials] database = "x.duckdb"``)."""
    keys = [f"destination.{name}.credentials", "destination.duckdb.credentials"]
    found = config.resolve(*keys)
    if isinstance(found, Mapping):
        return config.get_str([f"{k}.database" for k in keys], "") or None
    return config.get_str(keys, "") or None


def _database_of(credentials: object) -> object:
    """Credentials given as dlt's mapping (``{"database": "x.duckdb"}``) -> the database."""
    if isinstance(credentials, Mapping):
        return credentials.get("database")
    return credentials


def database_path(credentials: object) -> str | None:
    """The database file credentials name (a path or a ``duckdb://`` URL, ``~`` expanded);
    None for an open connection or ``:memory:``."""
    if isinstance(credentials, duckdb.DuckDBPyConnection):
        return None
    path = str(credentials)
    for prefix in ("duckdb:///", "duckdb://"):
        if path.startswith(prefix):
            path = path[len(prefix) :]
    return None if path == ":memory:" else str(Path(path).expanduser())


def error_kind(error: Exception) -> str:
    """As dlt 1.31 tells DuckDB's errors apart: a missing table or view, a statement that
    does not parse (transient, as dlt counts it), or any other (terminal); the filesystem's
    dataset, DuckDB over the files, tells them so too."""
    if isinstance(error, duckdb.CatalogException) and "does not exist" in str(error):
        return "undefined_relation"
    return "transient" if isinstance(error, duckdb.ParserException) else "terminal"


def connect(
    credentials: object, row_group_size: int | None = None
) -> tuple[duckdb.DuckDBPyConnection, bool]:
    """Open (or borrow) a connection; returns it and whether this client owns it.

    A database file loadstone opens itself is attached with ``row_group_size`` rows per row
    group (see ``database_file.py`` and ``row_groups.py``); None opens it as
    ``duckdb.connect`` does. A borrowed connection and ``:memory:`` are left as they are.
    """
    if isinstance(credentials, duckdb.DuckDBPyConnection):
        return credentials, False
    path = database_path(credentials) or ":memory:"
    if path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + _lock_timeout()
    while True:
        try:
            if path == ":memory:" or row_group_size is None:
                return duckdb.connect(path), True
            return database_file.open_database_file(path, row_group_size), True
        except duckdb.IOException as error:
            # another process holds the file: wait for it (a pipeline loads for a while)
            if "lock" not in str(error).lower() or time.monotonic() >= deadline:
                raise DuckDBConnectionError(path, str(error).splitlines()[0]) from error
            time.sleep(0.2)
        except duckdb.Error as error:
            raise DuckDBConnectionError(path, str(error).splitlines()[0]) from error


#: DuckDB's default memory limit (a new database's), read once per process
_DUCKDB_DEFAULT_LIMIT: list[int] = []

#: Seconds to wait for another process to release a database file (config
#: ``destination.duckdb.lock_timeout``).
DEFAULT_LOCK_TIMEOUT = 60.0


def _lock_timeout() -> float:
    return config.get_float(
        "destination.duckdb.lock_timeout", DEFAULT_LOCK_TIMEOUT, expected="a number of seconds"
    )


class DuckDBClient(SqlLoader[ParquetSource]):
    """Loads packages into one dataset of a DuckDB database (see module docstring)."""

    dialect = DIALECT
    driver_error = duckdb.Error
    data_errors = (duckdb.DataError, duckdb.IntegrityError)

    @classmethod
    def stored_at(cls, destination: Destination, pipeline_name: str) -> StoredAt | None:
        """The database file this destination names for ``pipeline_name`` (explicit,
        configured, else ``<pipeline_name>.duckdb``), and whether it exists; None for an open
        connection or ``:memory:``. Resolved as :meth:`__init__` resolves it, without opening."""
        path = database_path(resolve_credentials(destination, pipeline_name))
        if path is None:
            return None
        return StoredAt(str(Path(path).absolute()), exists=Path(path).exists())

    @classmethod
    def shown_location(cls, destination: Destination) -> str | None:
        """A connection given as credentials, as dlt 1.31 shows it: its database file's
        ``duckdb:///`` URL, ``duckdb:///%3Aexternal%3A`` for one in memory; None for other
        credentials (:meth:`stored_at` says those)."""
        connection = destination.config.get("credentials")
        if not isinstance(connection, duckdb.DuckDBPyConnection):
            return None
        sql = "SELECT path FROM duckdb_databases() WHERE database_name = current_database()"
        found = connection.cursor().execute(sql).fetchone()
        path = found[0] if found else None
        return f"duckdb:///{path}" if path else "duckdb:///%3Aexternal%3A"

    @classmethod
    def check_settings(cls, destination: Destination) -> None:
        """Parse what :meth:`__init__` reads (row group size, memory limit, lock timeout),
        so a bad value fails before any work."""
        configured_row_group_size(destination.config.get("row_group_size"))
        configured_memory_limit()
        _lock_timeout()

    def __init__(
        self,
        destination: Destination,
        schema: Schema | None,
        dataset_name: str,
        *,
        pipeline_name: str | None = None,
        staging_dataset_name: str | None = None,
        naming: NamingConvention | None = None,
    ) -> None:
        self._bind_dataset(
            destination, schema, dataset_name, pipeline_name, staging_dataset_name, naming
        )
        self.credentials = resolve_credentials(destination, pipeline_name)
        self.create_indexes = configured_create_indexes(destination, "duckdb", False)
        row_group_size = configured_row_group_size(destination.config.get("row_group_size"))
        limit = configured_memory_limit()  # a bad value fails before a database file is made
        self._conn, self._owns = connect(self.credentials, row_group_size)
        #: DuckDB's own memory limit, when the load may lower it by width (see memory.py)
        self._default_limit: int | None = None
        #: the memory limit this client's load set (None: none since its last RESET)
        self._limit_set: int | None = None
        #: a transaction of this client is open (:meth:`begin`)
        self._in_transaction = False
        #: the dataset's catalog an overlapped load kept for its migration (see dataset_columns)
        self._kept_catalog: Catalog | None = None
        opened = database_file.opened(self._conn) if self._owns else None
        self._exec("; ".join(self._session_settings(limit)))
        if self._owns and not limit:
            self._default_limit = self._duckdb_limit(opened)
        self.catalog: str = (
            opened.catalog if opened else str(self._row("SELECT current_database()")[0])
        )
        #: a user reached the connection (queries, the native connection): see close()
        self._reached = False

    def _session_settings(self, limit: str | None) -> list[str]:
        """The SETs of a new client, run as one statement."""
        settings = ["SET TimeZone = 'UTC'"]
        if self._owns:
            # a loader is not interactive: no progress bar on stdout
            settings.append("SET enable_progress_bar = false")
            # a configured limit holds for the whole connection; without one, each load
            # sets a limit by schema width (see memory.py), so memory stays flat in rows
            if limit:
                settings.append(f"SET memory_limit = {literal(limit)}")
        return settings

    def _duckdb_limit(self, opened: database_file.Opened | None) -> int:
        """DuckDB's memory limit as the database has it: read once per process for a new
        or idle database (DuckDB's default), else read (another client may have set it)."""
        if opened is None or not opened.default_settings:
            return parse_size(self._setting("memory_limit"))
        if not _DUCKDB_DEFAULT_LIMIT:
            _DUCKDB_DEFAULT_LIMIT.append(parse_size(self._setting("memory_limit")))
        return _DUCKDB_DEFAULT_LIMIT[0]

    def qualified(self, table: str, staging: bool = False) -> str:
        dataset = self.staging_dataset_name if staging else self.dataset_name
        return qualified(self.catalog, dataset, table)

    # --- running SQL -------------------------------------------------------------------

    def _exec(self, sql: str, params: Sequence[object] | None = None) -> None:
        self._conn.execute(sql, list(params) if params else None).fetchall()

    def execute(self, sql: str, params: Sequence[object] | None = None) -> None:
        """Run one statement; every statement of a load goes through ``_exec``."""
        self._exec(sql, params)

    def first(self, sql: str, params: Sequence[object] | None = None) -> Row | None:
        """The first row (the whole result is fetched: DuckDB 2 refuses new statements while a
        result is unfinished)."""
        found = self._conn.execute(sql, list(params) if params else None).fetchall()
        return found[0] if found else None

    def _row(self, sql: str, params: Sequence[object] | None = None) -> Row:
        """The row of a query that always returns one (``count(*)``, a setting)."""
        row = self.first(sql, params)
        assert row is not None, sql
        return row

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """DuckDB's DDL is transactional: a package's migration commits with its rows."""
        self.begin()
        try:
            yield
            self.commit()
        except BaseException:
            self._rollback()
            raise

    def begin(self) -> None:
        """Open a transaction (:meth:`transaction`, an overlapped load's)."""
        self._exec("BEGIN TRANSACTION")
        self._in_transaction = True

    def commit(self) -> None:
        self._exec("COMMIT")
        self._in_transaction = False

    def _rollback(self) -> None:
        """Roll the package back; settings a load changed are not transactional, so reset."""
        self._in_transaction = False
        try:
            self._exec("ROLLBACK")
        except duckdb.TransactionException:
            pass  # a failed COMMIT has rolled the transaction back already
        self._conn.execute("RESET preserve_insertion_order")

    # --- the catalog -------------------------------------------------------------------

    def catalog_key(self, name: str) -> str:
        """DuckDB identifiers compare case-insensitively."""
        return name.lower()

    def existing_columns(self, table: str, staging: bool = False) -> TableColumns | None:
        """``{lower name: (name, type)}`` of a table in the dataset, or None if it is absent."""
        return self._catalog_columns(staging, table).get(table.lower())

    def dataset_columns(self, staging: bool = False) -> Catalog:
        """``{lower table: {lower name: (name, type)}}`` of every table in the dataset.

        One query for a whole migration: asking ``information_schema`` once per table took
        5 ms a table, 2.2 s for a package of 200 nested tables. An overlapped load hands its
        migration the catalog its transaction has kept up to date (:meth:`keep_catalog`).
        """
        kept, self._kept_catalog = self._kept_catalog, None
        if kept is not None and not staging:
            return kept
        return self._catalog_columns(staging)

    def keep_catalog(self, catalog: Catalog | None) -> None:
        """The dataset's catalog as the open transaction sees it, nothing run since: the next
        :meth:`ensure_dataset` and :meth:`dataset_columns` of the dataset answer from it
        (None forgets it)."""
        self._kept_catalog = catalog

    def _catalog_columns(self, staging: bool, table: str | None = None) -> Catalog:
        """The dataset's columns, of one table or of all, from ``duckdb_columns()`` (what
        ``information_schema.columns`` is a view of, read at a third of its cost)."""
        dataset = self.staging_dataset_name if staging else self.dataset_name
        sql = (
            "SELECT table_name, column_name, data_type FROM duckdb_columns() "
            "WHERE database_name = ? AND lower(schema_name) = lower(?)"
        )
        params = [self.catalog, dataset]
        if table is not None:
            sql += " AND lower(table_name) = lower(?)"
            params.append(table)
        rows = self._conn.execute(sql + " ORDER BY table_name, column_index", params).fetchall()
        tables: Catalog = {}
        for name_of_table, name, type_ in rows:
            tables.setdefault(name_of_table.lower(), {})[name.lower()] = (name, type_)
        return tables

    def table_exists(self, table: str) -> bool:
        """Whether the dataset has the table (or a view of that name).

        Outside a transaction the table is named in a query that reads nothing: a missing
        one fails it (2 ms less than reading the catalog, which each run did for
        ``_dlt_loads``). Inside one, or once a user reached the connection (who may have
        opened one), the catalog is read: a failed statement would abort the transaction.
        """
        if self._in_transaction or self._reached:
            return self.existing_columns(table) is not None
        try:
            self._conn.execute(f"SELECT 1 FROM {self.qualified(table)} LIMIT 0").fetchall()
        except duckdb.CatalogException:
            return False
        return True

    def ensure_dataset(self, staging: bool = False) -> list[str]:
        if self._kept_catalog is not None and not staging:
            return []  # the transaction that kept it has the dataset
        dataset = self.staging_dataset_name if staging else self.dataset_name
        exists = self.first(
            "SELECT 1 FROM duckdb_schemas() WHERE database_name = ? AND lower(schema_name) = lower(?)",
            [self.catalog, dataset],
        )
        if exists:
            return []
        sql = f"CREATE SCHEMA IF NOT EXISTS {qualified(self.catalog, dataset)}"
        self._exec(sql)
        return [sql]

    # --- loading -----------------------------------------------------------------------

    def begin_package(self, load_id: str) -> DuckDBOverlappedLoad:
        """A package's transaction opened while it is normalized (``overlap.py``)."""
        return DuckDBOverlappedLoad(self, load_id)

    def file_source(self, table: str, spec: LoadFileSpec) -> ParquetSource:
        return ParquetSource.from_spec(table, spec)

    @contextlib.contextmanager
    def _package_resources(
        self,
        model: TableModel,
        sources: Mapping[str, ParquetSource],
        threads: int | None = None,
    ) -> Iterator[None]:
        """DuckDB's memory capped by the package's widest table while it loads (``threads``
        as :meth:`_limit_memory` takes them)."""
        self._limit_memory(model, sources, threads)
        try:
            yield
        finally:
            self._restore_memory_limit()

    def _setting(self, name: str) -> str:
        return str(self._row("SELECT current_setting(?)", [name])[0])

    def _limit_memory(
        self,
        model: TableModel,
        sources: Mapping[str, ParquetSource],
        threads: int | None = None,
    ) -> None:
        """Cap DuckDB's memory for this package by its widest table (unless configured).

        ``threads`` is DuckDB's setting when the caller set it (an overlapped load), else it
        is read. A limit this load has set already is not set again.
        """
        if self._default_limit is None:
            return
        widest = max((len(model.typed_columns(t)) for t in sources), default=0)
        if threads is None:
            threads = int(self._setting("threads"))
        limit = load_memory_limit(widest, threads, self._default_limit)
        if limit != self._limit_set:
            self._conn.execute(f"SET memory_limit = '{limit}B'")
            self._limit_set = limit

    def _restore_memory_limit(self) -> None:
        """The limit is the database's, not this load's: others may share it in-process."""
        if self._limit_set is not None:
            self._conn.execute("RESET memory_limit")
            self._limit_set = None

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

    # --- reading the dataset -----------------------------------------------------------

    def table_names(self) -> list[str]:
        rows = self._conn.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_catalog = ? AND lower(table_schema) = lower(?) ORDER BY table_name",
            [self.catalog, self.dataset_name],
        ).fetchall()
        return [str(r[0]) for r in rows]

    def table_row_counts(self) -> dict[str, int]:
        return {
            t: int(self._row(f"SELECT count(*) FROM {self.qualified(t)}")[0])
            for t in self.table_names()
        }

    def query_error_kind(self, error: Exception) -> str:
        return error_kind(error)

    def query(self, sql: str, *params: object) -> list[Row]:
        """Run ``sql`` (``?`` placeholders) and return all rows as tuples.

        DuckDB's Python rows for TIMESTAMP WITH TIME ZONE need ``pytz``; without it the rows
        are fetched through Arrow instead (aware datetimes via ``zoneinfo``).
        """
        self._reached = True
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
        self._reached = True
        if self.dataset_exists():
            path = f"{quote(self.catalog)}.{quote(self.dataset_name)},main"
            self._conn.execute(f"SET search_path = {literal(path)}")

    def dataset_exists(self) -> bool:
        # fetched whole: DuckDB keeps a result fetched in part open, and refuses the
        # connection's next query until it is finished
        found = self._conn.execute(
            "SELECT count(*) FROM information_schema.schemata "
            "WHERE catalog_name = ? AND schema_name = ?",
            [self.catalog, self.dataset_name],
        ).fetchall()
        return bool(found and found[0][0])

    def drop_dataset(self) -> None:
        for dataset in (self.dataset_name, self.staging_dataset_name):
            self._exec(f"DROP SCHEMA IF EXISTS {qualified(self.catalog, dataset)} CASCADE")

    @property
    def connection(self) -> duckdb.DuckDBPyConnection:
        """The open DuckDB connection (for reading results; loads go through the contract)."""
        self._reached = True
        return self._conn

    def close(self) -> None:
        if self._owns:
            # a database only loads ran on is kept for the file's next open
            database_file.close_database_file(self._conn, reached=self._reached)
