"""Reading one table: the SELECT (incremental pushed into WHERE / ORDER BY) and the backends.

The query is ``SELECT <columns> FROM <table>``; with an incremental cursor whose start is
known (from state or ``initial_value``) it gets ``WHERE cursor >= start`` (``>`` for an
open range, ``<=`` / ``<`` for ``last_value_func=min``), ``cursor < end_value`` for a
backfill range, and ``ORDER BY cursor`` when ``row_order`` is given, so the database sends
only new rows. The incremental filter of the resource still runs on what comes back: it
drops the rows at the start value that were loaded before.

Rows are fetched ``chunk_size`` at a time on a streaming cursor, and each chunk becomes one
page: a list of dicts (``sqlalchemy``), a ``pyarrow.Table`` built with the reflected types
(``pyarrow``) or a ``pandas.DataFrame`` of it (``pandas``).
"""

from __future__ import annotations

import datetime as dt
import decimal
import inspect
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, TypeAlias

import orjson

from loadstone.exceptions import SqlDatabaseError
from loadstone.extract.incremental import Incremental
from loadstone.sources.sql_database.backend_options import (
    arrow_with_options,
    frame_with_options,
)
from loadstone.sources.sql_database.connectorx_pages import connectorx_pages
from loadstone.sources.sql_database.cursor_values import typed_cursor_value
from loadstone.sources.sql_database.errors import describe
from loadstone.sources.sql_database.postgres_copy import copy_pages, copy_plan
from loadstone.sources.sql_database.row_values import as_text_rows, text_columns
from loadstone.sources.sql_database.schema_types import arrow_type
from loadstone.typing import TDataItem

if TYPE_CHECKING:
    import pyarrow as pa
    import sqlalchemy as sa

    from loadstone.schema.stored import TColumnSchema

#: what is run: the table's SELECT, or the text a query adapter may return instead
Query: TypeAlias = "sa.Select | sa.TextClause"
#: ``query_adapter_callback(query, table[, incremental[, engine]])``: the query to run
QueryAdapter = Callable[..., Query]


def _cursor_column(table: sa.Table, incremental: Incremental) -> sa.Column[object]:
    name = incremental.cursor_path
    if name not in table.columns:
        raise SqlDatabaseError(
            f"sql_database: table {table.name!r} has no column {name!r} for the incremental "
            f"cursor; columns: {', '.join(table.columns.keys())}"
        )
    return table.columns[name]


def _is_min(incremental: Incremental) -> bool:
    return incremental.last_value_func in (min, "min")


def _range(column: sa.Column[object], incremental: Incremental) -> list[sa.ColumnElement[bool]]:
    """The conditions of the cursor's range: after the start value, before the end value."""
    descending = _is_min(incremental)
    conditions: list[sa.ColumnElement[bool]] = []
    start = typed_cursor_value(column, incremental.lagged_start_value)
    if start is not None and incremental.last_value_func in (max, min, "max", "min"):
        if incremental.range_start == "open":
            conditions.append(column < start if descending else column > start)
        else:
            conditions.append(column <= start if descending else column >= start)
    end = typed_cursor_value(column, incremental.end_value)
    if end is not None:
        if incremental.range_end == "closed":
            conditions.append(column >= end if descending else column <= end)
        else:
            conditions.append(column > end if descending else column < end)
    return conditions


def incremental_query(query: sa.Select, table: sa.Table, incremental: Incremental) -> sa.Select:
    """``query`` restricted to the cursor's range (see the module docstring).

    Rows without a cursor value follow ``on_cursor_value_missing``: ``include`` reads them on
    every run (``OR cursor IS NULL``: the incremental filter lets them pass each time),
    ``exclude`` never (``cursor IS NOT NULL``), ``raise`` reads them so that the run fails.
    """
    import sqlalchemy as sa

    column = _cursor_column(table, incremental)
    conditions = _range(column, incremental)
    missing = incremental.on_cursor_value_missing
    if conditions:
        in_range = sa.and_(*conditions)
        query = query.where(
            sa.or_(in_range, column.is_(None)) if missing == "include" else in_range
        )
    if missing == "exclude":
        query = query.where(column.is_not(None))
    if incremental.row_order == "asc":
        query = query.order_by(column.asc())
    elif incremental.row_order == "desc":
        query = query.order_by(column.desc())
    return query


def build_query(
    table: sa.Table,
    incremental: Incremental | None,
    engine: sa.Engine,
    query_adapter: QueryAdapter | None,
) -> Query:
    """The SELECT of ``table``, restricted by ``incremental``, passed to the adapter."""
    select = table.select()
    if incremental is not None:
        select = incremental_query(select, table, incremental)
    query: Query = select
    if query_adapter is not None:
        params = len(inspect.signature(query_adapter).parameters)
        if params >= 4:
            query = query_adapter(query, table, incremental, engine)
        elif params == 3:
            query = query_adapter(query, table, incremental)
        else:
            query = query_adapter(query, table)
    return query


def _plain(value: object) -> object:
    """A value Arrow can hold: UUIDs as text."""
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


def _document(value: object) -> object:
    """A value of a column of JSON documents as its JSON text: a scalar too (a jsonb
    ``"str"`` is ``"str"``, ``5`` is ``5``), as dlt 1.31's Arrow page writes them, so that
    the destination's JSON column takes every value."""
    if value is None:
        return None
    return orjson.dumps(value, default=str).decode("utf-8")


def _plain_values(values: list[object]) -> list[object]:
    """The column's values as Arrow can hold them, told by its first value that is not null
    (a database column holds one type), so that most columns skip the per-value call: a
    column whose first value is a document has every value written as JSON; UUIDs as text."""
    first = next((v for v in values if v is not None), None)
    if isinstance(first, (dict, list)):
        return [_document(v) for v in values]
    if isinstance(first, uuid.UUID):
        return [_plain(v) for v in values]
    return values


def _ranges(values: list[object], hints: TColumnSchema) -> list[object]:
    """A column of PostgreSQL ranges (SQLAlchemy's ``Range``) as dlt 1.31's backends load it
    (see ``schema_types``): the JSON of its parts in a ``json`` column, else its text."""
    from sqlalchemy.dialects.postgresql import Range

    first = next((v for v in values if v is not None), None)
    if not isinstance(first, Range):
        return values
    if hints.get("data_type") != "json":
        return [None if v is None else str(v) for v in values]
    parts = ("lower", "upper", "bounds", "empty")
    return [
        None if v is None else _document({p: _range_part(getattr(v, p)) for p in parts})
        for v in values
    ]


def _range_part(value: object) -> object:
    """A bound of a range as dlt 1.31's document holds it (its Arrow struct cast to JSON by
    DuckDB): a number for a decimal, a timestamp as DuckDB prints one (``2024-01-01
    10:00:00.5``, ``+00`` in UTC), a date in ISO form."""
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
            return _duckdb_timestamp(value) + "+00"
        return _duckdb_timestamp(value)
    return value


def _duckdb_timestamp(value: dt.datetime) -> str:
    text = value.strftime("%Y-%m-%d %H:%M:%S")
    if value.microsecond:
        text += f".{value.microsecond:06d}".rstrip("0")
    return text


def _holds_text(values: list[object]) -> bool:
    """Whether a column's first value that is not null is text (or there is none)."""
    first = next((v for v in values if v is not None), None)
    return first is None or isinstance(first, str)


def _arrow_column(name: str, values: list[object], hints: TColumnSchema) -> pa.Array:
    import pyarrow as pa

    wanted = arrow_type(hints)
    values = _ranges(_plain_values(values), hints)
    if wanted is not None and pa.types.is_string(wanted) and not _holds_text(values):
        # a column a type adapter made text: its values as text (a date as 2024-04-12)
        values = [v if v is None or isinstance(v, bytes) else str(v) for v in values]
    if wanted is not None:
        try:
            return pa.array(values, type=wanted)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            parsed = _parsed_text(values, wanted)
            if parsed is not None:
                return parsed
            # a value the declared type cannot hold: let Arrow pick the type
    return pa.array(values)


def _parsed_text(values: list[object], wanted: pa.DataType) -> pa.Array | None:
    """Dates and times the driver returned as text, parsed (None when they do not parse).

    A query adapter's ``text(...)`` query has no column types, so SQLite hands back the
    stored text (``2024-05-01 00:00:00``); dlt 1.31's Arrow page parses it into the
    reflected ``timestamp`` / ``date`` column (a naive time read as UTC where the column
    has a time zone)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    temporal = pa.types.is_timestamp(wanted) or pa.types.is_date(wanted)
    if not temporal or not _holds_text(values):
        return None
    text = pa.array(values, type=pa.string())
    try:
        return text.cast(wanted)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    if not pa.types.is_timestamp(wanted) or wanted.tz is None:
        return None
    try:
        naive = text.cast(pa.timestamp(wanted.unit))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    return pc.assume_timezone(naive, "UTC").cast(wanted)


def arrow_page(
    names: Sequence[str], rows: Sequence[Sequence[object]], columns: Mapping[str, TColumnSchema]
) -> pa.Table:
    """One chunk of rows as an Arrow table with the reflected column types."""
    import pyarrow as pa

    arrays = [
        _arrow_column(name, [row[i] for row in rows], columns.get(name) or {})
        for i, name in enumerate(names)
    ]
    return pa.Table.from_arrays(arrays, names=list(names))


class ReadSettings(Protocol):
    """How a table is read: the settings of its source (``_TableReader`` holds them)."""

    engine: sa.Engine
    chunk_size: int
    backend: str
    backend_kwargs: Mapping[str, object] | None


def as_frame(table: pa.Table, options: Mapping[str, object] | None = None) -> TDataItem:
    """The ``pandas`` backend's page: a DataFrame of Arrow-backed columns (as dlt's), so an
    integer column with nulls stays integers instead of becoming floats; with
    ``backend_kwargs`` (``options``), the frame ``pandas.read_sql`` makes with them."""
    import pandas as pd  # type: ignore[import-untyped,unused-ignore]  # pandas ships no stubs

    if options:
        return frame_with_options(table, options)
    return _nan_as_null(table).to_pandas(types_mapper=pd.ArrowDtype)


def _nan_as_null(table: pa.Table) -> pa.Table:
    """A float column's NaN as null: dlt 1.31's ``pandas`` backend builds its frame from the
    rows, where pandas takes NaN for a missing value, so a ``NaN`` in the database loads as
    NULL (infinities stay); the ``pyarrow`` backend keeps NaN."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for index, field in enumerate(table.schema):
        if pa.types.is_floating(field.type) and table.num_rows:
            column = table.column(index)
            if pc.any(pc.is_nan(column)).as_py():
                nulled = pc.if_else(pc.is_nan(column), pa.scalar(None, field.type), column)
                table = table.set_column(index, field, nulled)
    return table


def as_page(table: pa.Table, backend: str, options: Mapping[str, object] | None) -> TDataItem:
    """An Arrow chunk in the form of the ``pyarrow`` or ``pandas`` backend."""
    if backend == "pandas":
        return as_frame(table, options)
    return arrow_with_options(table, options)


def rows_of(
    reader: ReadSettings,
    query: Query,
    table_name: str,
    columns: Mapping[str, TColumnSchema],
) -> Iterator[TDataItem]:
    """The pages of ``query``: ``chunk_size`` rows each, in the form of the backend.

    Arrow backends on PostgreSQL copy the table as CSV where its types allow
    (:mod:`.postgres_copy`); ``connectorx`` reads through connectorx
    (:mod:`.connectorx_pages`); everything else fetches rows through SQLAlchemy. Any error
    of the database is one line naming the table, without the password.
    """
    import sqlalchemy as sa

    engine, backend, chunk_size = reader.engine, reader.backend, reader.chunk_size
    plan = copy_plan(engine, query, columns) if backend in ("pyarrow", "pandas") else None
    caught: tuple[type[BaseException], ...] = (sa.exc.SQLAlchemyError, *_driver_errors())
    try:
        if backend == "connectorx":
            yield from connectorx_pages(engine, query, chunk_size, reader.backend_kwargs)
        elif plan is None:
            yield from fetched_pages(
                engine, query, chunk_size, backend, columns, reader.backend_kwargs, table_name
            )
        else:
            for table in copy_pages(engine, plan, chunk_size):
                yield as_page(table, backend, reader.backend_kwargs)
    except caught as error:
        raise SqlDatabaseError(
            f"sql_database: table {table_name!r}: {describe(error, engine)}"
        ) from None


def fetched_pages(
    engine: sa.Engine,
    query: Query,
    chunk_size: int,
    backend: str,
    columns: Mapping[str, TColumnSchema],
    options: Mapping[str, object] | None = None,
    table_name: str = "",
) -> Iterator[TDataItem]:
    """The row path: rows fetched through SQLAlchemy, ``chunk_size`` at a time; ``options``
    are the backend's ``backend_kwargs``; ``table_name`` names the table in errors."""
    with engine.connect() as conn:
        # yield_per: rows come in chunk_size batches (not the growing 1..1000 buffer)
        result = conn.execution_options(yield_per=chunk_size).execute(query)
        names = list(result.keys())
        for fetched in result.partitions(chunk_size):
            chunk = as_text_rows(fetched, text_columns(fetched, names, table_name))
            if backend == "sqlalchemy":
                yield [dict(zip(names, row, strict=True)) for row in chunk]
            else:
                yield as_page(arrow_page(names, chunk, columns), backend, options)


def _driver_errors() -> tuple[type[BaseException], ...]:
    """The COPY path talks to psycopg directly, connectorx raises ``RuntimeError`` (its
    Rust errors) and PyMySQL its own: their errors are the database's too."""
    errors: list[type[BaseException]] = [RuntimeError]
    try:
        import psycopg

        errors.append(psycopg.Error)
    except ImportError:
        pass
    try:
        import pymysql  # type: ignore[import-untyped,unused-ignore]  # PyMySQL ships no stubs

        errors.append(pymysql.MySQLError)
    except ImportError:
        pass
    return tuple(errors)
