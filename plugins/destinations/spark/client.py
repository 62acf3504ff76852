"""The Spark loader: one client per dataset (a database of the Spark session's catalog).

Tables are ``USING parquet`` tables of the catalog, created with ``CREATE TABLE`` and evolved
with ``ALTER TABLE ... ADD COLUMNS``. Spark has no transactions over several tables, so a
package is made visible by renaming files (``table_files.py``; through the session's JVM, or
in this process over Spark Connect, ``file_stores.py``): every table's rows are first
written by Spark into hidden staging folders, then renamed into the tables, then the
``_dlt_pipeline_state`` row, and **last** the ``_dlt_loads`` row (system rows are one-row
Parquet files made in this process, ``system_rows.py``: no Spark job each). A failure, or a rerun after
a kill, first takes back whatever an earlier attempt of the same load id left (its files carry
the load id in their names), so the package ends up loaded exactly once. Between a crash and
the rerun, readers may see part of the package: they can keep to rows whose load id is in
``_dlt_loads``, as with dlt's destinations without transactions.

Catalog round trips are few per load, because each costs a metastore call: the schema's
tables are migrated only when its ``version_hash`` is not in ``_dlt_version`` yet (the tables
of a stored version exist), the dataset's tables are listed once (``SHOW TABLES``) instead of
asked about one by one, and a session's cached file listing of a table is refreshed only where
it can be stale: in the writer's session before it reads a table again, in the user's session
for the tables a load changed.

Write dispositions: ``append``, ``replace`` (the root table and its nested tables are
emptied and loaded) and ``merge`` as ``delete-insert`` (``merge.py``); others are refused
before any work (``dispositions.py``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from loadstone.destinations.contract import (
    SYSTEM_TABLES,
    ClosesOnExit,
    Destination,
    LoadRequest,
    Row,
    SchemaVersionRow,
    StateDict,
    as_schema,
    decode_state,
    encode_state,
    new_row_id,
)
from loadstone.exceptions import DestinationError, DestinationSchemaMismatch
from loadstone.plugins.destinations.spark.dispositions import refuse_unsupported
from loadstone.plugins.destinations.spark.session import (
    SparkSettings,
    listings,
    refresh_table,
    writer_session,
)
from loadstone.plugins.destinations.spark.system_rows import row_file
from loadstone.plugins.destinations.spark.table_files import TableFolder
from loadstone.plugins.destinations.spark.types import (
    literal,
    normalize_type_name,
    qualified,
    quote,
    spark_type,
    types_compatible,
)
from loadstone.plugins.destinations.sql.bookkeeping import now, version_values
from loadstone.plugins.destinations.sql.names import ClientNames
from loadstone.plugins.destinations.tables import TableModel
from loadstone.schema import Column, Schema

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

    from loadstone.naming import NamingConvention
    from loadstone.schema.stored import TStoredSchema


#: table names a ``SHOW TABLES ... LIKE`` pattern spells as they are (``|`` separates them)
_PLAIN_NAME = re.compile(r"[a-z0-9_]+")


class SparkClient(ClientNames, ClosesOnExit):
    """Loads packages into one database of the Spark catalog (see module docstring)."""

    def __init__(
        self,
        destination: Destination,
        schema: Schema | None,
        dataset_name: str,
        *,
        pipeline_name: str | None = None,
        naming: NamingConvention | None = None,
        **_: object,
    ) -> None:
        self.destination = destination
        self.schema = schema
        self.dataset_name = dataset_name
        self.pipeline_name = pipeline_name
        self.settings = SparkSettings.resolve(destination.name, destination.config)
        #: the user's session (or the one started for the load) and the writer's own
        self.base_session, self.session = writer_session(self.settings)
        self.catalog = self.settings.catalog
        self._naming = naming if naming is not None else self._resolve_naming(schema)
        #: tables the writer's session has read: it keeps their file listings
        self._listings = listings(self.session)
        #: the database is known to exist (checked or made by this client)
        self._dataset_known = False
        #: the load id :meth:`is_package_loaded` last found not loaded
        self._not_loaded: str | None = None

    # --- names -------------------------------------------------------------------------

    def qualified(self, table: str) -> str:
        return qualified(self.catalog, self.dataset_name, table)

    def _database(self) -> str:
        return qualified(self.catalog, self.dataset_name)

    # --- catalog -----------------------------------------------------------------------

    def _sql(self, text: str, params: Sequence[object] | None = None) -> DataFrame:
        return self.session.sql(text, args=list(params) if params else None)

    def _before_read(self, *tables: str) -> None:
        """The writer's session is about to read ``tables``: drop the file listing it keeps of
        any it read before (files may have moved since; a new session keeps none)."""
        for table in tables:
            name = self.qualified(table)
            if self._listings.everything or name in self._listings.tables:
                self._refresh_in(self.session, name)
            self._listings.tables.add(name)

    def read_table(self, table: str) -> DataFrame:
        """The current rows of a table, in the writer's session."""
        self._before_read(table)
        return self.session.table(self.qualified(table))

    def dataset_exists(self) -> bool:
        if not self._dataset_known:
            self._dataset_known = self.session.catalog.databaseExists(self._database())
        return self._dataset_known

    def table_names(self) -> list[str]:
        if not self.dataset_exists():
            return []
        rows = self._sql(f"SHOW TABLES IN {self._database()}").collect()
        return sorted(row["tableName"] for row in rows if not row["isTemporary"])

    def existing_tables(self) -> set[str]:
        """The dataset's tables (lower case, as the catalog keeps them), in one call."""
        return {name.lower() for name in self.table_names()}

    def table_exists(self, table: str) -> bool:
        return self.session.catalog.tableExists(self.qualified(table))

    def existing_columns(self, table: str) -> dict[str, tuple[str, str]] | None:
        """``{lower name: (name, type)}`` of a table, or None if it is absent."""
        if not self.table_exists(table):
            return None
        columns = self.session.catalog.listColumns(self.qualified(table))
        return {c.name.lower(): (c.name, c.dataType) for c in columns}

    def location(self, table: str) -> str:
        """The folder of a table (its ``Location`` in ``DESCRIBE TABLE EXTENDED``)."""
        for row in self._sql(f"DESCRIBE TABLE EXTENDED {self.qualified(table)}").collect():
            if row["col_name"] == "Location":
                return str(row["data_type"])
        raise DestinationError(
            f"table {self.dataset_name}.{table} has no location: the Spark destination needs "
            f"a catalog whose tables are folders of Parquet files"
        )

    def locations(self, tables: Sequence[str]) -> dict[str, str]:
        """The folders of ``tables``, in one ``SHOW TABLE EXTENDED`` (a catalog call per
        table was a good part of a small package's load); by :meth:`location` one by one where
        that does not tell them (names its pattern cannot spell, another kind of catalog)."""
        names = sorted({t.lower() for t in tables})
        found: dict[str, str] = {}
        if names and all(_PLAIN_NAME.fullmatch(n) for n in names):
            found = self._shown_locations(names)
        return {t: found.get(t.lower()) or self.location(t) for t in tables}

    def _shown_locations(self, names: list[str]) -> dict[str, str]:
        pattern = literal("|".join(names))
        try:
            shown = self._sql(f"SHOW TABLE EXTENDED IN {self._database()} LIKE {pattern}")
            rows = shown.collect()
        except Exception:  # a catalog without it: DESCRIBE tells, or says why not
            return {}
        found: dict[str, str] = {}
        for row in rows:
            for line in str(row["information"]).splitlines():
                if line.startswith("Location: "):
                    found[str(row["tableName"]).lower()] = line[len("Location: ") :]
        return found

    def refresh(self, table: str) -> None:
        """The files of ``table`` changed: drop the user's session's cached listing of them
        (each session caches the files of the tables it read, so it would not see the new
        ones); the writer's session does so before it reads the table again."""
        self._refresh_in(self.base_session, self.qualified(table))

    def _refresh_in(self, session: SparkSession, name: str) -> None:
        refresh_table(session, name, in_session_catalog=self.catalog is None)

    # --- DDL ---------------------------------------------------------------------------

    def ensure_dataset(self) -> list[str]:
        if self.dataset_exists():
            return []
        sql = f"CREATE DATABASE IF NOT EXISTS {self._database()}"
        self._sql(sql)
        self._dataset_known = True
        return [sql]

    def ensure_table(
        self, table: str, columns: Sequence[Column], tables: set[str] | None = None
    ) -> list[str]:
        """Create the table, or add its missing columns; fail on a column of another type.

        Every column is nullable: Spark's Parquet tables do not enforce NOT NULL.
        ``tables``: the dataset's tables, if known (one is added when it is created).
        """
        if tables is None:
            existing = self.existing_columns(table)
        elif table.lower() in tables:
            columns_found = self.session.catalog.listColumns(self.qualified(table))
            existing = {c.name.lower(): (c.name, c.dataType) for c in columns_found}
        else:
            existing = None
        typed = [(c.name, spark_type(c, table)) for c in columns]
        if existing is None:
            parts = ", ".join(f"{quote(n)} {t}" for n, t in typed)
            sql = f"CREATE TABLE IF NOT EXISTS {self.qualified(table)} ({parts}) USING parquet"
            self._sql(sql)
            if tables is not None:
                tables.add(table.lower())
            return [sql]
        missing = []
        for name, expected in typed:
            found = existing.get(name.lower())
            if found is None:
                missing.append(f"{quote(name)} {expected}")
            elif not types_compatible(found[1], expected):
                raise DestinationSchemaMismatch(
                    f"{self.dataset_name}.{table}",
                    found[0],
                    found[1],
                    normalize_type_name(expected),
                )
        if not missing:
            return []
        sql = f"ALTER TABLE {self.qualified(table)} ADD COLUMNS ({', '.join(missing)})"
        self._sql(sql)
        return [sql]

    def _system_columns(self, name: str) -> list[Column]:
        return [
            Column(self.ident(c.name), data_type=c.data_type, nullable=c.nullable)
            for c in SYSTEM_TABLES[name]
        ]

    def _migrate(
        self, model: TableModel, version: SchemaVersionRow, tables: set[str] | None = None
    ) -> list[str]:
        """The catalog brought to the schema (tables from ``model``; ``version`` is the
        ``_dlt_version`` row), unless that version is stored: its tables exist already.
        ``tables`` (the dataset's, listed if not given) gets the tables created."""
        statements = self.ensure_dataset()
        if tables is None:
            tables = set() if statements else self.existing_tables()
        if self.table_ident("_dlt_version").lower() in tables and self._version_stored(version):
            return statements
        for name in SYSTEM_TABLES:
            ident = self.table_ident(name)
            statements += self.ensure_table(ident, self._system_columns(name), tables)
        for table in model.data_tables():
            columns = model.columns_for_destination(table)
            if columns:
                statements += self.ensure_table(table, columns, tables)
        self._append_version(version)
        return statements

    def _check_dispositions(self, model: TableModel) -> None:
        refuse_unsupported(model)

    # --- system rows ---------------------------------------------------------------------

    def row_file(self, name: str, values: Sequence[object]) -> bytes:
        """One row of a system table as a Parquet file of that table's columns."""
        return row_file(self._system_columns(name), values)

    def _version_stored(self, version: SchemaVersionRow) -> bool:
        table = self.table_ident("_dlt_version")
        self._before_read(table)
        c = self.ident
        found = self._sql(
            f"SELECT 1 FROM {self.qualified(table)} WHERE {quote(c('version_hash'))} = ? "
            f"AND {quote(c('schema_name'))} = ? LIMIT 1",
            [version.version_hash, version.schema_name],
        ).collect()
        return bool(found)

    def _append_version(self, version: SchemaVersionRow) -> None:
        table = self.table_ident("_dlt_version")
        values = version_values(version)
        self.folder(table).add_file(self.row_file("_dlt_version", values))
        self.refresh(table)

    # --- the contract ------------------------------------------------------------------

    def initialize_storage(self) -> None:
        """Create the database; a write disposition this loader cannot do stops it first."""
        if self.schema is not None:
            self._check_dispositions(TableModel(as_schema(self.schema), self))
        self.ensure_dataset()

    def update_stored_schema(self, schema: Schema | None = None) -> list[str]:
        schema = schema if schema is not None else self.schema
        version = SchemaVersionRow.of(schema)
        self._adopt_naming(schema)
        model = TableModel(as_schema(schema), self)
        self._check_dispositions(model)
        return self._migrate(model, version)

    def load_package(self, request: LoadRequest) -> None:
        """Load one package exactly once (see module docstring); a loaded one is skipped."""
        self._adopt_naming(request.schema)
        version = SchemaVersionRow.of(request.schema)
        model = TableModel(as_schema(request.schema), self)
        self._check_dispositions(model)
        # the step asked just before, on this client: not asked twice
        if self._not_loaded != request.load_id and self.is_package_loaded(request.load_id):
            return
        tables = set() if self.ensure_dataset() else self.existing_tables()
        self._migrate(model, version, tables)
        from loadstone.plugins.destinations.spark.package_load import PackageLoad

        PackageLoad(self, model, request, version, tables).run()

    def system_rows(
        self, request: LoadRequest, version: SchemaVersionRow
    ) -> dict[str, list[object]]:
        """The ``_dlt_pipeline_state`` row (when the request has state) and ``_dlt_loads`` row."""
        rows: dict[str, list[object]] = {}
        state = request.pipeline_state
        if state is not None:
            rows["_dlt_pipeline_state"] = [
                state.version,
                state.engine_version,
                state.pipeline_name,
                encode_state(state.state),
                state.created_at or now(),
                state.version_hash,
                request.load_id,
                new_row_id(),
            ]
        rows["_dlt_loads"] = [
            request.load_id,
            version.schema_name,
            0,
            now(),
            version.version_hash,
        ]
        return rows

    def is_package_loaded(self, load_id: str) -> bool:
        loads = self.table_ident("_dlt_loads")
        if not (self.dataset_exists() and self.table_exists(loads)):
            self._not_loaded = load_id
            return False
        self._before_read(loads)
        found = self._sql(
            f"SELECT 1 FROM {self.qualified(loads)} WHERE {quote(self.ident('load_id'))} = ? "
            "LIMIT 1",
            [load_id],
        ).collect()
        self._not_loaded = None if found else load_id
        return bool(found)

    def get_stored_schema(self, schema_name: str) -> TStoredSchema | None:
        version = self.table_ident("_dlt_version")
        if not (self.dataset_exists() and self.table_exists(version)):
            return None
        self._before_read(version)
        c = self.ident
        rows = self._sql(
            f"SELECT {quote(c('schema'))} FROM {self.qualified(version)} "
            f"WHERE {quote(c('schema_name'))} = ? "
            f"ORDER BY {quote(c('inserted_at'))} DESC, {quote(c('version'))} DESC LIMIT 1",
            [schema_name],
        ).collect()
        return cast("TStoredSchema", json.loads(rows[0][0])) if rows else None

    def get_stored_state(self, pipeline_name: str) -> StateDict | None:
        """Newest pipeline state of a *completed* load (its load id is in ``_dlt_loads``)."""
        state = self.table_ident("_dlt_pipeline_state")
        loads = self.table_ident("_dlt_loads")
        if not (self.dataset_exists() and self.table_exists(state) and self.table_exists(loads)):
            return None
        self._before_read(state, loads)
        c = self.ident
        rows = self._sql(
            f"SELECT s.{quote(c('state'))} FROM {self.qualified(state)} AS s "
            f"JOIN {self.qualified(loads)} AS l "
            f"ON l.{quote(c('load_id'))} = s.{quote(c('_dlt_load_id'))} "
            f"WHERE s.{quote(c('pipeline_name'))} = ? "
            f"ORDER BY s.{quote(c('created_at'))} DESC, l.{quote(c('load_id'))} DESC LIMIT 1",
            [pipeline_name],
        ).collect()
        return decode_state(rows[0][0]) if rows else None

    def table_row_counts(self) -> dict[str, int]:
        return {t: self.read_table(t).count() for t in self.table_names()}

    def query(self, sql: str, *params: object) -> list[Row]:
        """Run Spark SQL (``?`` placeholders) and return all rows as tuples."""
        self._listings.everything = True  # it may read any table: refresh before each read
        return [tuple(row) for row in self._sql(sql, params).collect()]

    @property
    def connection(self) -> SparkConnection:
        """The query side ``pipeline.dataset()`` and ``sql_client()`` use (Arrow results)."""
        return SparkConnection(self)

    def use_dataset(self) -> None:
        """Resolve unqualified table names in the dataset (as dlt's ``sql_client`` does)."""
        if self.dataset_exists():
            self._sql(f"USE {self._database()}")

    def drop_dataset(self) -> None:
        self._sql(f"DROP DATABASE IF EXISTS {self._database()} CASCADE")
        self._dataset_known = False

    def folder(self, table: str) -> TableFolder:
        return TableFolder.open(self.session, self.location(table))

    def folders(self, tables: Sequence[str]) -> dict[str, TableFolder]:
        """The folders of several tables (their locations asked at once)."""
        return {t: TableFolder.open(self.session, at) for t, at in self.locations(tables).items()}

    def close(self) -> None:
        """Nothing to release: the SparkSession outlives the client (others share it)."""


class SparkConnection:
    """DuckDB-shaped query entry (``sql(text, params=...)``) answering in Arrow."""

    def __init__(self, client: SparkClient) -> None:
        self._client = client

    def sql(self, text: str, params: Sequence[object] | None = None) -> _ArrowResult:
        self._client._listings.everything = True  # see SparkClient.query
        return _ArrowResult(self._client._sql(text, params))


class _ArrowResult:
    def __init__(self, frame: DataFrame) -> None:
        self._frame = frame

    def to_arrow_table(self) -> pa.Table:
        return self._frame.toArrow()
