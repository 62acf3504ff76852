"""``loadstone.sources.sql_database``: dlt's built-in ``sql_database`` source over SQLAlchemy.

A dlt program ports by changing its import::

    from loadstone.sources.sql_database import sql_database, sql_table

    source = sql_database("postgresql://user:pw@host/db", schema="shop", backend="pyarrow")
    pipeline.run(source)

:func:`sql_database` reflects the tables (and views, with ``include_views``) of one schema
and makes a resource per table; :func:`sql_table` makes the resource of one table. Column
types are reflected as dlt reflects them (:mod:`.schema_types`); rows are read in chunks by
the chosen backend with an incremental cursor pushed into the query (:mod:`.table_rows`).
SQLAlchemy comes with the ``sql_database`` extra. docs/sources/sql_database.md documents
every argument.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict, Union, cast

import orjson

from loadstone import config
from loadstone.exceptions import SqlDatabaseError
from loadstone.extract.decorators import resource
from loadstone.extract.incremental import Incremental
from loadstone.extract.mark import with_hints
from loadstone.extract.resource import Resource
from loadstone.extract.resource_hints import reject_unsupported
from loadstone.extract.source import Source
from loadstone.sources.configured import configured
from loadstone.sources.sql_database.engines import create_engine
from loadstone.sources.sql_database.errors import describe, scrub, secret_parts
from loadstone.sources.sql_database.foreign_keys import table_references
from loadstone.sources.sql_database.schema_types import (
    REFLECTION_LEVELS,
    ReflectionLevel,
    TableBackend,
    TypeAdapter,
    adapt_types,
    arrow_overlay,
    table_hints,
)
from loadstone.sources.sql_database.table_rows import QueryAdapter, build_query, rows_of
from loadstone.typing import TColumnNames, TDataItem, TWriteDispositionConfig

if TYPE_CHECKING:
    import sqlalchemy as sa

    from loadstone.schema.stored import TColumnSchema

__all__ = [
    "ReflectionLevel",
    "SqlDatabaseError",
    "TQueryAdapter",
    "TTableAdapter",
    "TTypeAdapter",
    "TableBackend",
    "engine_from_credentials",
    "remove_nullability_adapter",
    "sql_database",
    "sql_table",
]

BACKENDS = ("sqlalchemy", "pyarrow", "pandas", "connectorx")
#: ``table_adapter_callback(table)``: changes the reflected table, or returns another one
TableAdapter = Callable[["sa.Table"], "sa.Table | None"]
#: dlt's names of the callback types
TTableAdapter = TableAdapter
TTypeAdapter = TypeAdapter
TQueryAdapter = QueryAdapter
#: ``create_engine``'s keyword arguments: each has the type SQLAlchemy's parameter takes
EngineKwargs = Mapping[str, Any]


class _ConnectionDriver(TypedDict):
    drivername: str


class ConnectionParts(_ConnectionDriver, total=False):
    """A connection as the parts of its URL (``sa.URL.create``'s arguments)."""

    username: str | None
    password: str | None
    host: str | None
    port: int | None
    database: str | None
    query: Mapping[str, str | Sequence[str]]


#: a connection string, an ``sa.URL``, an engine, or the URL's parts
SqlCredentials = Union[str, "sa.URL", "sa.Engine", ConnectionParts]


class TableHintArgs(TypedDict, total=False):
    """The table hints ``sql_table`` passes to its resource."""

    write_disposition: TWriteDispositionConfig
    primary_key: TColumnNames | None
    merge_key: TColumnNames | None


def engine_from_credentials(
    credentials: SqlCredentials, engine_kwargs: EngineKwargs | None = None
) -> sa.Engine:
    """An SQLAlchemy engine from a connection string, an ``sa.URL``, an engine (as it is),
    or a dict of URL parts (``drivername``, ``username``, ``password``, ``host``...).

    A new engine each call, sharing the dialect of earlier ones of the same URL and options
    (:mod:`.engines`: their reflection queries are compiled once per process)."""
    import sqlalchemy as sa

    if isinstance(credentials, sa.Engine):
        return credentials
    if isinstance(credentials, Mapping):
        credentials = sa.URL.create(**credentials)
    options = dict(engine_kwargs or {})
    # JSON documents are decoded by orjson, several times faster than the stdlib on wide tables
    options.setdefault("json_deserializer", orjson.loads)
    try:
        return create_engine(sa.make_url(credentials), options)
    except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError, ValueError) as error:
        message = scrub(str(error).splitlines()[0], secret_parts(credentials))
        raise SqlDatabaseError(f"sql_database: cannot use the credentials: {message}") from None


def remove_nullability_adapter(table: sa.Table) -> sa.Table:
    """A ``table_adapter_callback`` that takes away what the database says of each column's
    nullability, as dlt 1.31's: the columns get no ``nullable`` hint (a primary key column
    is then NOT NULL, as dlt hints it; Arrow pages make the others nullable)."""
    for column in table.columns:
        column.nullable = None  # SQLAlchemy's "not specified"
    return table


#: the parts of a connection string dlt's ConnectionStringCredentials reads one by one
_URL_FIELDS = ("drivername", "username", "password", "host", "port", "database", "query")


def _credentials(credentials: SqlCredentials | None) -> SqlCredentials:
    if credentials is not None and credentials is not config.value:
        return credentials
    found = _credential_parts(("sources", "sql_database", "credentials"))
    if found is None:
        found = config.resolve(
            ("sources", "sql_database", "credentials"), ("sources", "credentials"), default=None
        )
    if found is None:
        raise TypeError(
            "sql_database needs credentials: pass them, or set sources.sql_database.credentials "
            "(env SOURCES__SQL_DATABASE__CREDENTIALS)"
        )
    return cast("SqlCredentials", found)


def _credential_parts(path: tuple[str, ...]) -> object:
    """The credentials at ``path`` when parts of them are set one by one below it
    (``SOURCES__SQL_DATABASE__CREDENTIALS__HOST``, ``[sources.sql_database.credentials]
    host = ...``), which dlt 1.31 reads as well: the parts over the whole value (a
    connection string or a table of parts); None when no part is set alone."""
    import sqlalchemy as sa

    whole, parts = config.resolve_fields(path, _URL_FIELDS)
    if not parts:
        return None
    if whole is None:
        return parts
    if isinstance(whole, Mapping):
        return {**whole, **parts}
    url = sa.make_url(str(whole))
    return url.set(**parts)  # type: ignore[arg-type]  # the parts are URL.set's keywords


def _level(reflection_level: str | None, detect_precision_hints: bool | None) -> ReflectionLevel:
    if detect_precision_hints:
        return "full_with_precision"
    level = reflection_level or "full"
    if level not in REFLECTION_LEVELS:
        raise ValueError(f"reflection_level must be one of {REFLECTION_LEVELS}, got {level!r}")
    return cast(ReflectionLevel, level)  # checked against the literal's values above


def _check_backend(backend: str) -> None:
    """``backend_kwargs`` go to every backend as dlt's do (:mod:`.backend_options`)."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")


def _reflect(
    engine: sa.Engine,
    name: str,
    metadata: sa.MetaData,
    table_adapter: TableAdapter | None,
) -> sa.Table:
    """One table reflected from the database, then passed to ``table_adapter_callback``."""
    import sqlalchemy as sa

    try:
        table = sa.Table(name, metadata, autoload_with=engine, extend_existing=True)
    except sa.exc.NoSuchTableError:
        where = f" in schema {metadata.schema!r}" if metadata.schema else ""
        raise SqlDatabaseError(f"sql_database: table {name!r} not found{where}") from None
    except sa.exc.SQLAlchemyError as error:
        raise SqlDatabaseError(
            f"sql_database: cannot reflect table {name!r}: {describe(error, engine)}"
        ) from None
    if table_adapter is not None:
        adapted = table_adapter(table)
        if isinstance(adapted, sa.Table):
            table = adapted
    return table


def _selected(
    table: sa.Table, included: Sequence[str] | None, excluded: Sequence[str] | None
) -> sa.Table:
    """``table`` with only ``included_columns`` / without ``excluded_columns`` (a copy)."""
    if not included and not excluded:
        return table
    import sqlalchemy as sa

    keep = [
        c
        for c in table.columns
        if (not included or c.name in included) and (not excluded or c.name not in excluded)
    ]
    return sa.Table(
        table.name,
        sa.MetaData(schema=table.schema),
        *[c._copy() for c in keep],
    )


class _TableReader:
    """How the tables of one source are reflected and read (the arguments they share)."""

    def __init__(
        self,
        engine: sa.Engine,
        metadata: sa.MetaData,
        *,
        chunk_size: int,
        backend: str,
        level: ReflectionLevel,
        defer: bool,
        table_adapter: TableAdapter | None,
        type_adapter: TypeAdapter | None,
        query_adapter: QueryAdapter | None,
        included: Sequence[str] | None = None,
        excluded: Sequence[str] | None = None,
        backend_kwargs: Mapping[str, object] | None = None,
        foreign_keys: bool = False,
    ) -> None:
        if chunk_size < 1:
            raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
        self.engine, self.metadata = engine, metadata
        self.chunk_size, self.backend, self.level, self.defer = chunk_size, backend, level, defer
        self.table_adapter, self.type_adapter = table_adapter, type_adapter
        self.query_adapter = query_adapter
        self.included, self.excluded = included, excluded
        self.backend_kwargs = backend_kwargs
        #: ``resolve_foreign_keys``: the table's foreign keys as ``references`` (dlt's)
        self.foreign_keys = foreign_keys

    def table(self, name: str) -> sa.Table:
        reflected = _reflect(self.engine, name, self.metadata, self.table_adapter)
        # dlt 1.31 calls no type adapter at ``minimal``: the types come from the data there
        adapter = None if self.level == "minimal" else self.type_adapter
        adapted = adapt_types(reflected, adapter)
        return _selected(adapted, self.included, self.excluded)

    def columns(self, table: sa.Table) -> dict[str, TColumnSchema]:
        return table_hints(table, self.level, self.backend)

    def references(self, table: sa.Table | None) -> list[dict[str, TDataItem]] | None:
        """The table's foreign keys as ``references`` when they are resolved (else None)."""
        if table is None or not self.foreign_keys:
            return None
        return table_references(table) or None

    def resource(
        self, name: str, incremental: Incremental | None, hints: TableHintArgs
    ) -> Resource:
        """The resource of table ``name``: reflected now, or when first read (``defer``)."""
        table = None if self.defer else self.table(name)
        # connectorx: the hints wait for the first page's Arrow types (arrow_overlay)
        later = self.defer or self.backend == "connectorx"
        columns = None if table is None or later else self.columns(table)
        reader = self

        def table_rows(incremental: Incremental | None = incremental) -> Iterator[TDataItem]:
            read = table if table is not None else reader.table(name)
            hinted = columns if columns is not None else reader.columns(read)
            query = build_query(read, incremental, reader.engine, reader.query_adapter)
            pages = rows_of(reader, query, name, hinted)
            if columns is None:  # the reflected columns travel with the first page
                first: TDataItem = next(pages, [])
                if reader.backend == "connectorx" and not isinstance(first, list):
                    hinted = arrow_overlay(hinted, first.schema)
                refs = reader.references(read)
                found = {"columns": hinted, **({"references": refs} if refs else {})}
                yield with_hints(first, found)
            yield from pages

        refs = self.references(table)
        if table is not None and not hints.get("primary_key") and table.primary_key.columns:
            # dlt's: the reflected key is the resource's (as a list), which its incremental
            # deduplicates rows by
            hints = {**hints, "primary_key": [c.name for c in table.primary_key.columns]}
        elif isinstance(given := hints.get("primary_key"), str):  # a given key too: its hashes
            hints = {**hints, "primary_key": [given]}
        made: Resource = resource(table_rows, name=name, columns=columns, references=refs, **hints)
        made.section = "sql_database"
        return made


@configured(lambda passed: "sql_database")
def sql_database(
    credentials: SqlCredentials = config.value,
    schema: str | None = None,
    metadata: sa.MetaData | None = None,
    table_names: Sequence[str] | None = None,
    chunk_size: int = 50000,
    backend: TableBackend = "sqlalchemy",
    detect_precision_hints: bool | None = False,
    reflection_level: ReflectionLevel | None = "full",
    defer_table_reflect: bool | None = None,
    table_adapter_callback: TableAdapter | None = None,
    backend_kwargs: dict[str, object] | None = None,
    include_views: bool = False,
    type_adapter_callback: TypeAdapter | None = None,
    query_adapter_callback: QueryAdapter | None = None,
    resolve_foreign_keys: bool = False,
    engine_adapter_callback: Callable[[sa.Engine], sa.Engine] | None = None,
    engine_kwargs: EngineKwargs | None = None,
    table_loader_class: object = None,
) -> Source:
    """A source named ``sql_database`` with one resource per table of ``schema``.

    Every argument is dlt's (docs/sources/sql_database.md says what each does);
    ``backend_kwargs`` reach the backend (:mod:`.backend_options`); ``resolve_foreign_keys``
    gives each table the ``references`` of its foreign keys (:mod:`.foreign_keys`).
    ``table_loader_class`` (a subclass of dlt's own loader class) raises ``TypeError``.
    """
    reject_unsupported("sql_database", table_loader_class=table_loader_class)
    if defer_table_reflect and not table_names:  # dlt 1.31's refusal, word for word
        raise ValueError("You must pass `table_names` to defer table reflection")
    engine = _engine(credentials, backend, engine_kwargs, engine_adapter_callback)
    import sqlalchemy as sa

    metadata = metadata if metadata is not None else sa.MetaData(schema=schema)
    reader = _TableReader(
        engine,
        metadata,
        chunk_size=chunk_size,
        backend=backend,
        level=_level(reflection_level, detect_precision_hints),
        defer=bool(defer_table_reflect),
        table_adapter=table_adapter_callback,
        type_adapter=type_adapter_callback,
        query_adapter=query_adapter_callback,
        backend_kwargs=backend_kwargs,
        foreign_keys=resolve_foreign_keys,
    )
    names = list(table_names) if table_names else _table_names(engine, metadata, include_views)
    resources = [reader.resource(name, None, TableHintArgs()) for name in names]
    from loadstone.schema.schema import Schema

    return Source("sql_database", Schema("sql_database"), resources, section="sql_database")


def _engine(
    credentials: SqlCredentials | None,
    backend: TableBackend,
    engine_kwargs: EngineKwargs | None,
    adapter: Callable[[sa.Engine], sa.Engine] | None,
) -> sa.Engine:
    """The backend checked, then the engine of the credentials through the user's adapter
    (``sql_database`` and ``sql_table`` alike)."""
    _check_backend(backend)
    engine = engine_from_credentials(_credentials(credentials), engine_kwargs)
    return adapter(engine) if adapter is not None else engine


def _table_names(engine: sa.Engine, metadata: sa.MetaData, include_views: bool) -> list[str]:
    """The tables (and views, then materialized views) of the schema, in the order the
    database lists them."""
    import sqlalchemy as sa

    try:
        inspector = sa.inspect(engine)
        names = list(inspector.get_table_names(schema=metadata.schema))
        if include_views:  # materialized views too, after the others (dlt's order)
            names += inspector.get_view_names(schema=metadata.schema)
            names += _materialized_views(inspector, metadata.schema)
    except sa.exc.SQLAlchemyError as error:
        where = f" {metadata.schema!r}" if metadata.schema else ""
        raise SqlDatabaseError(
            f"sql_database: cannot list the tables of schema{where}: {describe(error, engine)}"
        ) from None
    return names


def _materialized_views(inspector: sa.Inspector, schema: str | None) -> list[str]:
    """The schema's materialized views (PostgreSQL's, Oracle's); none where the dialect has
    no such thing."""
    try:
        return list(inspector.get_materialized_view_names(schema=schema))
    except NotImplementedError:
        return []


@configured(lambda passed: str(passed.get("table") or "sql_table"))
def sql_table(
    credentials: SqlCredentials = config.value,
    table: str | None = None,
    schema: str | None = None,
    metadata: sa.MetaData | None = None,
    incremental: Incremental | None = None,
    chunk_size: int = 50000,
    backend: TableBackend = "sqlalchemy",
    detect_precision_hints: bool | None = None,
    reflection_level: ReflectionLevel | None = "full",
    defer_table_reflect: bool | None = None,
    table_adapter_callback: TableAdapter | None = None,
    backend_kwargs: dict[str, object] | None = None,
    type_adapter_callback: TypeAdapter | None = None,
    included_columns: Sequence[str] | None = None,
    excluded_columns: Sequence[str] | None = None,
    query_adapter_callback: QueryAdapter | None = None,
    resolve_foreign_keys: bool = False,
    engine_adapter_callback: Callable[[sa.Engine], sa.Engine] | None = None,
    write_disposition: TWriteDispositionConfig = "append",
    primary_key: TColumnNames | None = None,
    merge_key: TColumnNames | None = None,
    engine_kwargs: EngineKwargs | None = None,
    table_loader_class: object = None,
) -> Resource:
    """The resource of one table (or view), named like it; arguments as :func:`sql_database`
    plus ``table``, ``incremental``, ``included_columns`` / ``excluded_columns`` and the
    hints ``write_disposition``, ``primary_key``, ``merge_key``."""
    reject_unsupported("sql_table", table_loader_class=table_loader_class)
    if not table:
        raise TypeError("sql_table() needs table= (the name of the table or view to read)")
    engine = _engine(credentials, backend, engine_kwargs, engine_adapter_callback)
    import sqlalchemy as sa

    reader = _TableReader(
        engine,
        metadata if metadata is not None else sa.MetaData(schema=schema),
        chunk_size=chunk_size,
        backend=backend,
        level=_level(reflection_level, detect_precision_hints),
        defer=bool(defer_table_reflect),
        table_adapter=table_adapter_callback,
        type_adapter=type_adapter_callback,
        query_adapter=query_adapter_callback,
        included=included_columns,
        excluded=excluded_columns,
        backend_kwargs=backend_kwargs,
        foreign_keys=resolve_foreign_keys,
    )
    hints = TableHintArgs(
        write_disposition=write_disposition, primary_key=primary_key, merge_key=merge_key
    )
    return reader.resource(table, incremental, hints)
