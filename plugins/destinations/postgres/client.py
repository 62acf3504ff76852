"""The PostgreSQL loader: one client per dataset (a PostgreSQL schema) of one database.

Everything of one package happens in one transaction (PostgreSQL's DDL is transactional):
schema migration, staging, the COPY of every table, the ``_dlt_pipeline_state`` row and,
last, the ``_dlt_loads`` row. A failure at any point, a killed process included (the server
aborts the transaction of a dropped connection), leaves nothing of the package, so the next
run loads it exactly once; a package whose load id is in ``_dlt_loads`` is not loaded again.

Statements run on psycopg's raw cursor with ``$n`` placeholders (``sql.numbered_placeholders``
turns the shared SQL's ``?`` into them): nothing in a statement but a placeholder is ever
interpreted, every identifier is quoted, every value a parameter or COPY data.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import psycopg
from psycopg.abc import Buffer
from psycopg.types.string import ByteaLoader

from loadstone import config
from loadstone.destinations.contract import Destination, LoadFileSpec, Row
from loadstone.destinations.query_protocols import ColumnsAnswer
from loadstone.exceptions import PostgresConnectionError
from loadstone.plugins.destinations.postgres.arrow_types import arrow_type
from loadstone.plugins.destinations.postgres.copy import (
    copy_statement,
    file_batches,
    read_ahead,
)
from loadstone.plugins.destinations.postgres.credentials import (
    PostgresCredentials,
    resolve_credentials,
)
from loadstone.plugins.destinations.postgres.sql import DIALECT, numbered_placeholders
from loadstone.plugins.destinations.sql import merge
from loadstone.plugins.destinations.sql.dialect import qualified, quote
from loadstone.plugins.destinations.sql.loader import Catalog, SqlLoader, configured_create_indexes
from loadstone.plugins.destinations.sql.table_files import TableFiles
from loadstone.plugins.destinations.tables import TableModel
from loadstone.schema import Schema

if TYPE_CHECKING:
    from loadstone.naming import NamingConvention

#: the largest ``toast_tuple_target`` PostgreSQL accepts (a heap page less its header)
INLINE_ROW_BYTES = 8160

_CATALOG_SQL = (
    "SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod) "
    "FROM pg_attribute AS a JOIN pg_class AS c ON c.oid = a.attrelid "
    "JOIN pg_namespace AS n ON n.oid = c.relnamespace "
    "WHERE n.nspname = ? AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped"
)


def connect(credentials: PostgresCredentials) -> psycopg.Connection[Row]:
    """An autocommit connection (the client opens its transactions itself), time zone UTC."""
    try:
        conn = psycopg.connect(**credentials.conninfo(), autocommit=True)
    except psycopg.Error as error:
        raise PostgresConnectionError(credentials, str(error).strip().splitlines()[0]) from error
    conn.execute("SET TIME ZONE 'UTC'")
    conn.adapters.register_loader("bytea", _MemoryViewLoader)
    return conn


class _MemoryViewLoader(ByteaLoader):
    """``bytea`` read as ``memoryview``, as dlt 1.31's driver (psycopg2) gives it: a row of
    ``sql_client().execute_sql`` or ``dataset().fetchall()`` holds one (``.tobytes()``)."""

    def load(self, data: Buffer) -> memoryview:  # type: ignore[override]  # psycopg2's type
        return memoryview(super().load(bytes(data)))


class PostgresClient(SqlLoader[TableFiles]):
    """Loads packages into one dataset of a PostgreSQL database (see module docstring)."""

    dialect = DIALECT
    driver_error = psycopg.Error
    # SQLSTATE classes 22 (data exception) and 23 (integrity)
    data_errors = (psycopg.DataError, psycopg.IntegrityError)

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
        self.credentials = resolve_credentials(
            destination.name, destination.config.get("credentials")
        )
        self.replace_strategy = config.get_choice(
            ["destination.postgres.replace_strategy", "destination.replace_strategy"],
            merge.REPLACE_STRATEGIES,
            merge.REPLACE_STRATEGIES[0],
            explicit=destination.config.get("replace_strategy"),
        )
        self.create_indexes = configured_create_indexes(destination, "postgres", True)
        self._conn = connect(self.credentials)

    # --- running SQL -------------------------------------------------------------------

    def execute(self, sql: str, params: Sequence[object] | None = None) -> None:
        """Run one statement (``?`` placeholders); every statement of a load comes here."""
        with psycopg.RawCursor(self._conn) as cur:
            cur.execute(numbered_placeholders(sql), list(params) if params else None)

    def first(self, sql: str, params: Sequence[object] | None = None) -> Row | None:
        with psycopg.RawCursor(self._conn) as cur:
            cur.execute(numbered_placeholders(sql), list(params) if params else None)
            return cur.fetchone()

    def _all(self, sql: str, params: Sequence[object] | None = None) -> list[Row]:
        with psycopg.RawCursor(self._conn) as cur:
            cur.execute(numbered_placeholders(sql), list(params) if params else None)
            return cur.fetchall()

    def transaction(self) -> contextlib.AbstractContextManager[object]:
        """PostgreSQL's DDL is transactional: a package's migration commits with its rows."""
        return self._conn.transaction()

    # --- names and the catalog ---------------------------------------------------------

    def qualified(self, table: str, staging: bool = False) -> str:
        return qualified(self.staging_dataset_name if staging else self.dataset_name, table)

    def dataset_columns(self, staging: bool = False) -> Catalog:
        """Every table's columns and their ``format_type`` text, in one catalog query; names
        exact (PostgreSQL keeps the case of quoted identifiers)."""
        dataset = self.staging_dataset_name if staging else self.dataset_name
        catalog: Catalog = {}
        for table, column, type_ in self._all(
            _CATALOG_SQL + " ORDER BY c.relname, a.attnum", [dataset]
        ):
            catalog.setdefault(table, {})[column] = (column, type_)
        return catalog

    def table_exists(self, table: str, staging: bool = False) -> bool:
        dataset = self.staging_dataset_name if staging else self.dataset_name
        return self.first(_CATALOG_SQL + " AND c.relname = ? LIMIT 1", [dataset, table]) is not None

    def dataset_exists(self, staging: bool = False) -> bool:
        dataset = self.staging_dataset_name if staging else self.dataset_name
        return self.first("SELECT 1 FROM pg_namespace WHERE nspname = ?", [dataset]) is not None

    def ensure_dataset(self, staging: bool = False) -> list[str]:
        if self.dataset_exists(staging):
            return []
        dataset = self.staging_dataset_name if staging else self.dataset_name
        sql = f"CREATE SCHEMA IF NOT EXISTS {quote(dataset)}"
        self.execute(sql)
        return [sql]

    # --- loading -----------------------------------------------------------------------

    def file_source(self, table: str, spec: LoadFileSpec) -> TableFiles:
        return TableFiles.from_spec(table, spec)

    def _load_tables(
        self,
        model: TableModel,
        sources: Mapping[str, TableFiles],
        load_id: str,
        current: list[str | None],
    ) -> None:
        """The shared dispositions, with the final tables' rows kept inline (see below)."""
        finals = [self.qualified(t) for t in sources if t in model.tables]
        with self._inline_rows(*finals):
            super()._load_tables(model, sources, load_id, current)

    def insert_files(
        self,
        table: str,
        target: str,
        columns: Sequence[tuple[str, str]],
        source: TableFiles,
        ordered: bool,
    ) -> None:
        """COPY every file of ``source`` into ``target``, in file order (so ``ordered`` holds)."""
        wanted = [name for name, _ in columns]
        batches = read_ahead(file_batches(source.files, wanted))
        with self._inline_rows(target), self._conn.cursor() as cur, contextlib.closing(batches):
            for (_file, names), chunks in itertools.groupby(batches, key=lambda b: b[0]):
                with cur.copy(copy_statement(target, names)) as copy:
                    for _key, chunk in chunks:
                        copy.write(chunk)

    @contextlib.contextmanager
    def _inline_rows(self, *targets: str) -> Iterator[None]:
        """While the package's rows go in, rows up to a page stay whole in ``targets``
        (``toast_tuple_target`` at its maximum); each table's own setting is back before
        the transaction commits.

        Why: PostgreSQL starts compressing and moving values out of a row above about 2 KB,
        one value at a time, biggest first, re-measuring the whole row after each (every
        column, each time). A row of a GitHub pull-request event has 690 columns and 200
        values over 24 bytes (12-14 KB): that loop was 81% of the server's COPY time and
        TOAST rows with their index half its disk writes (README, "PostgreSQL"); a merge's
        ``INSERT ... SELECT`` from staging pays it again. With the target at 8160 bytes a row
        that fits a page is stored as it is; larger rows are still toasted. Rows already
        stored keep their form whatever the setting later is, so readers see the same
        values. A table that already has a target (its owner's, or ours from an enclosing
        call) is left alone.
        """
        raised = [t for t in targets if self._toast_target_unset(t)]
        for target in raised:
            self.execute(f"ALTER TABLE {target} SET (toast_tuple_target = {INLINE_ROW_BYTES})")
        yield
        for target in raised:
            self.execute(f"ALTER TABLE {target} RESET (toast_tuple_target)")

    def _toast_target_unset(self, target: str) -> bool:
        """Whether ``target`` exists, is ours to alter and has no ``toast_tuple_target`` yet
        (a loader granted only INSERT on another role's table loads without it)."""
        row = self.first(
            "SELECT c.reloptions FROM pg_class AS c "
            "WHERE c.oid = to_regclass(?) AND pg_has_role(c.relowner, 'USAGE')",
            [target],
        )
        options = (row[0] if row else None) or ()
        return row is not None and not any(o.startswith("toast_tuple_target=") for o in options)

    # --- reading the dataset -----------------------------------------------------------

    def table_names(self) -> list[str]:
        return sorted(self.dataset_columns())

    def table_row_counts(self) -> dict[str, int]:
        return {
            t: int(self._all(f"SELECT count(*) FROM {self.qualified(t)}")[0][0])
            for t in self.table_names()
        }

    def query_error_kind(self, error: Exception) -> str:
        """As dlt 1.31 tells PostgreSQL's errors apart: an undefined table (42P01), a
        syntax error or a lost connection (transient), or any other (terminal)."""
        state = getattr(error, "sqlstate", None)
        if state == "42P01":
            return "undefined_relation"
        transient = state == "42601" or isinstance(error, psycopg.OperationalError)
        return "transient" if transient else "terminal"

    def query(self, sql: str, *params: object) -> list[Row]:
        """Run ``sql`` and return its rows; placeholders are ``%s`` (psycopg's, as in dlt)."""
        return self.query_columns(sql, *params).rows

    def query_columns(self, sql: str, *params: object) -> ColumnsAnswer:
        """``query`` with the result's column names (``pipeline.dataset()`` reads them),
        type codes and Arrow types; no names for a statement without a result."""
        with self._conn.cursor() as cur:
            cur.execute(sql, params or None)
            while cur.nextset():  # several statements answer with the last one's result,
                pass  # as psycopg2's cursor (dlt's) does
            if cur.description is None:
                return ColumnsAnswer(None, [])
            described = cur.description
            return ColumnsAnswer(
                [c.name for c in described],
                cur.fetchall(),
                [c.type_code for c in described],
                [arrow_type(c.type_code, c.precision, c.scale) for c in described],
            )

    def use_dataset(self) -> None:
        """Resolve unqualified table names in the dataset (dlt's ``sql_client`` does)."""
        self.execute(f"SET search_path TO {quote(self.dataset_name)}, public")

    def drop_dataset(self) -> None:
        for dataset in (self.dataset_name, self.staging_dataset_name):
            self.execute(f"DROP SCHEMA IF EXISTS {quote(dataset)} CASCADE")

    @property
    def connection(self) -> psycopg.Connection[Row]:
        """The open psycopg connection (for reading results; loads go through the contract)."""
        return self._conn

    def close(self) -> None:
        self._conn.close()
