"""PostgreSQL tables for the ``pyarrow`` and ``pandas`` backends: ``COPY (query) TO STDOUT``
as CSV, parsed by pyarrow's CSV reader into the reflected column types.

Fetching rows through SQLAlchemy makes a Python tuple per row and a Python object per value
before Arrow copies them again; on a wide table that is most of the copy's time. The server's
CSV is parsed by Arrow in C++ instead, with the types the columns were reflected with, so the
tables are the ones the row path builds (``tests/sources/test_sql_database_copy.py`` compares
both). Only what the CSV form holds without loss is copied this way; a table with another
column type (arrays, bytea, intervals, ``time with time zone``, numerics without a declared
precision) takes the row path, as does any other database or driver.

The cursor's values are parameters of the COPY, bound by psycopg with their types (never
formatted into the SQL by us). The session reads timestamps with a zone in UTC and dates in ISO order (``SET LOCAL``, inside
the COPY's own transaction). JSON documents come back as the server prints them and are
written compactly (``{"k":1}``), as the row path writes them.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

import attrs

from loadstone.sources.sql_database.schema_types import arrow_type

if TYPE_CHECKING:
    import pyarrow as pa
    import sqlalchemy as sa
    from typing_extensions import Buffer

    from loadstone.schema.stored import TColumnSchema

#: data types whose CSV text pyarrow reads back to the same value
_COPYABLE = frozenset(
    {"bool", "bigint", "double", "text", "date", "time", "timestamp", "decimal", "json"}
)
#: bytes of CSV pyarrow parses at a time
_BLOCK = 8 * 1024 * 1024


@attrs.frozen
class CopyPlan:
    """The COPY statement of one query and the Arrow type of each column, in order."""

    sql: str
    types: tuple[tuple[str, pa.DataType], ...]
    json_columns: tuple[str, ...]
    #: the query's parameters (the cursor's values), bound by psycopg with their types
    params: Mapping[str, object] = attrs.field(factory=dict)


def copy_plan(
    engine: sa.Engine, query: sa.Select | sa.TextClause, columns: Mapping[str, TColumnSchema]
) -> CopyPlan | None:
    """How to COPY ``query``, or None when it must take the row path (see the module; a
    text query from a query adapter has no column types to read)."""
    import sqlalchemy as sa
    from sqlalchemy.dialects.postgresql import AbstractRange

    if engine.dialect.name != "postgresql" or engine.driver != "psycopg":
        return None
    if not isinstance(query, sa.Select):
        return None
    types: list[tuple[str, pa.DataType]] = []
    for column in query.selected_columns:
        hints = columns.get(column.name) or {}
        kind = column.type
        if isinstance(kind, (sa.ARRAY, sa.Interval, sa.LargeBinary, AbstractRange)):
            return None
        if isinstance(kind, sa.Time) and kind.timezone:
            return None
        wanted = arrow_type(hints) if hints.get("data_type") in _COPYABLE else None
        if wanted is None:
            return None
        types.append((column.name, wanted))
    compiled = query.compile(dialect=engine.dialect)
    params = compiled.params
    for bind in compiled.binds.values():
        if bind.type.dialect_impl(engine.dialect).bind_processor(engine.dialect) is not None:
            return None  # a value SQLAlchemy converts before the driver: the row path binds it
    json_columns = tuple(n for n, _ in types if columns[n].get("data_type") == "json")
    sql = f"COPY ({compiled}) TO STDOUT WITH (FORMAT csv)"
    return CopyPlan(sql, tuple(types), json_columns, params)


class _CopyStream(io.RawIOBase):
    """The bytes of a psycopg ``Copy`` as a readable file for pyarrow."""

    def __init__(self, copy: Iterable[bytes | bytearray | memoryview]) -> None:
        self._chunks = iter(copy)
        self._rest = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Buffer) -> int:
        while not self._rest:
            chunk = next(self._chunks, None)
            if chunk is None:
                return 0
            self._rest = bytes(chunk)
        view = memoryview(buffer)
        size = min(len(view), len(self._rest))
        view[:size] = self._rest[:size]
        self._rest = self._rest[size:]
        return size


def copy_pages(engine: sa.Engine, plan: CopyPlan, chunk_size: int) -> Iterator[pa.Table]:
    """The query's rows as Arrow tables of ``chunk_size`` rows (the last may be shorter)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    names = [name for name, _ in plan.types]
    read = pacsv.ReadOptions(column_names=names, block_size=_BLOCK, use_threads=True)
    convert = pacsv.ConvertOptions(
        column_types=dict(plan.types),
        true_values=["t"],
        false_values=["f"],
        null_values=[""],
        strings_can_be_null=True,
        quoted_strings_can_be_null=False,
    )
    raw = engine.raw_connection()
    try:
        conn = raw.driver_connection
        assert conn is not None
        with conn.transaction(), conn.cursor() as cursor:
            cursor.execute("SET LOCAL TIME ZONE 'UTC'")
            cursor.execute("SET LOCAL DateStyle = 'ISO, YMD'")
            with cursor.copy(plan.sql, plan.params or None) as copy:
                stream = io.BufferedReader(_CopyStream(copy), _BLOCK)
                if not stream.peek(1):
                    return  # no rows (an empty table, a cursor past the last row): no page
                reader = pacsv.open_csv(stream, read, convert_options=convert)
                pending: list[pa.RecordBatch] = []
                rows = 0
                for batch in reader:
                    pending.append(batch)
                    rows += batch.num_rows
                    while rows >= chunk_size:
                        table = pa.Table.from_batches(pending)
                        yield _compact_json(table.slice(0, chunk_size), plan.json_columns)
                        rest = table.slice(chunk_size)
                        pending, rows = rest.to_batches(), rest.num_rows
                if rows:
                    yield _compact_json(pa.Table.from_batches(pending), plan.json_columns)
    finally:
        raw.close()


def _compact_json(table: pa.Table, json_columns: tuple[str, ...]) -> pa.Table:
    """JSON documents as the row path writes them: without the server's spaces, and the
    document ``null`` as no value (the driver decodes it to None)."""
    if not json_columns or table.num_rows == 0:
        return table
    import duckdb

    with duckdb.connect() as conn:
        conn.register("page", table)
        listed = ", ".join(
            f'NULLIF(CAST(json("{n}") AS VARCHAR), \'null\') AS "{n}"'
            if n in json_columns
            else f'"{n}"'
            for n in table.column_names
        )
        relation = conn.sql(f"SELECT {listed} FROM page")
        fetch = getattr(relation, "to_arrow_table", None) or relation.arrow
        compacted: pa.Table = fetch()
    return compacted
