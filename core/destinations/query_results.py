"""Running a query on a destination client, and its result as rows or Arrow.

``pipeline.dataset()`` and ``sql_client()`` query through here: a DuckDB-style connection
answers in Arrow (or, for plain columns, in rows), other clients through ``query``; a
failed query raises dlt's database error the client names (undefined relation, terminal
or transient).
"""

from __future__ import annotations

import decimal
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast

from loadstone.destinations.contract import Row
from loadstone.destinations.query_protocols import ColumnsQuery, QueryErrors
from loadstone.exceptions import (
    DatabaseTerminalError,
    DatabaseTransientError,
    DatabaseUndefinedRelation,
    DatasetError,
    LoadstoneError,
)
from loadstone.typing import TDataItem

if TYPE_CHECKING:
    import pandas as pd  # type: ignore[import-untyped,unused-ignore]  # pandas ships no stubs
    import pyarrow as pa

    from loadstone.destinations.contract import DestinationClient


def quote_identifier(ident: str) -> str:
    return '"' + ident.replace('"', '""') + '"'


class QueryResult:
    """Rows and column names of one executed query."""

    def __init__(
        self,
        columns: list[str],
        rows: list[Row],
        arrow: pa.Table | None = None,
        types: list[object] | None = None,
        has_result: bool = True,
        arrow_types: list[Any] | None = None,
    ):
        self.columns = columns
        self.rows = rows
        self._arrow = arrow
        #: the database's type of each column, when it says (DB-API's type codes)
        self.types = types
        #: False for a statement the database says gave no result (no cursor description)
        self.has_result = has_result
        #: the Arrow type of each column the client names (None: the values decide)
        self._arrow_types = arrow_types

    def to_arrow(self) -> pa.Table:
        if self._arrow is not None:
            return self._arrow
        import pyarrow as pa

        kinds = self._arrow_types or [None] * len(self.columns)
        arrays = [
            _arrow_array([_arrow_value(row[i]) for row in self.rows], kinds[i])
            for i in range(len(self.columns))
        ]
        return pa.Table.from_arrays(arrays, names=self.columns)


def _arrow_array(values: list[object], kind: Any) -> pa.Array:
    """``values`` as an Arrow array of the type the client names; where they do not fit it
    (a number wider than the type), of the type they show, never cut."""
    import pyarrow as pa

    if kind is not None:
        try:
            if pa.types.is_decimal(kind):
                values = [_to_shape(v, kind.precision, kind.scale) for v in values]
            return pa.array(values, type=kind)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, decimal.DecimalException):
            pass
    try:
        return pa.array(values)
    except pa.ArrowInvalid:  # decimals too wide for their scale: integral ones without it
        return pa.array([_integral(v) for v in values])


def _to_shape(value: object, precision: int, scale: int) -> object:
    """A ``Decimal`` at ``scale`` digits, checked to fit ``precision`` (pyarrow turns a
    value with more digits than its type silently into 0); a DecimalException if it does not."""
    if not isinstance(value, decimal.Decimal):
        return value
    context = decimal.Context(
        prec=len(value.as_tuple().digits) + scale + 1, traps=[decimal.Inexact]
    )
    shaped = value.quantize(decimal.Decimal(1).scaleb(-scale), context=context)
    if len(shaped.as_tuple().digits) > precision:
        raise decimal.InvalidOperation(f"{value} does not fit decimal({precision}, {scale})")
    return shaped


def _integral(value: object) -> object:
    """A whole ``Decimal`` without fraction digits (``1.000`` as ``1``), else as it is."""
    if isinstance(value, decimal.Decimal) and value.is_finite() and value == value.to_integral():
        return value.quantize(decimal.Decimal(1))
    return value


def _arrow_value(value: TDataItem) -> TDataItem:
    """A row value as Arrow takes it: JSON documents (dicts, lists) as their JSON text, so a
    column of documents of different shapes is one string column. The text is dlt's:
    compact, with non-ASCII characters as they are (``{"name":"ção"}``)."""
    if isinstance(value, (dict, list)):
        import json

        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    if isinstance(value, uuid.UUID):
        return str(value)  # dlt's Arrow holds a UUID as its text
    return value


#: DuckDB column types whose values DuckDB's own row fetch gives exactly as the Arrow path
#: does (str, int, float, bool, None): a result of only these skips pyarrow, whose import
#: (with numpy's) was most of the CPU of ``loadstone pipeline NAME show`` (~0.3 s)
_PLAIN_TYPES = frozenset(
    {"VARCHAR", "BIGINT", "INTEGER", "SMALLINT", "TINYINT", "BOOLEAN", "DOUBLE", '"NULL"'}
    | {"HUGEINT", "UHUGEINT", "UBIGINT", "UINTEGER", "USMALLINT", "UTINYINT"}
)

#: DuckDB's 128-bit integers (``sum`` of a BIGINT column is one), which Arrow carries as
#: ``decimal128(38, 0)``: their row values are ``int`` again, as dlt 1.31's rows give them
_WIDE_INTEGERS = frozenset({"HUGEINT", "UHUGEINT"})


def _column_values(column: pa.ChunkedArray, duckdb_type: object) -> list[object]:
    """An Arrow column's row values, 128-bit integers as ``int`` (not ``Decimal``), and
    nanosecond timestamps as ``datetime`` cut to microseconds, as DuckDB's own rows (dlt's)
    give them (pyarrow would give pandas ``Timestamp`` values)."""
    import pyarrow as pa

    if pa.types.is_timestamp(column.type) and column.type.unit == "ns":
        column = column.cast(pa.timestamp("us", tz=column.type.tz), safe=False)
    values = column.to_pylist()
    if str(duckdb_type) in _WIDE_INTEGERS:
        return [None if value is None else int(value) for value in values]
    return list(values)


class _PlainRelation(Protocol):
    """What :func:`_plain_rows` uses of a DuckDB relation."""

    columns: list[str]
    types: list[object]

    def fetchall(self) -> list[Row]: ...


def _plain_rows(relation: object) -> QueryResult | None:
    """A DuckDB relation's rows fetched without Arrow, when every column is plain."""
    if not (hasattr(relation, "types") and hasattr(relation, "fetchall")):
        return None
    plain = cast("_PlainRelation", relation)
    if any(str(t) not in _PLAIN_TYPES for t in plain.types):
        return None
    return QueryResult(list(plain.columns), list(plain.fetchall()), types=list(plain.types))


def _duckdb_arrow(relation: object) -> pa.Table | None:
    """A DuckDB-style relation's result as a ``pyarrow.Table`` (or None)."""
    for name in ("to_arrow_table", "arrow", "fetch_arrow_table"):
        method = getattr(relation, name, None)
        if method is not None:
            table = method()
            return cast("pa.Table", table.read_all() if hasattr(table, "read_all") else table)
    return None


def replace_placeholders(sql: str, replacement: Callable[[], str]) -> str:
    """``sql`` with each ``%s`` placeholder outside quotes replaced by ``replacement()``."""
    out: list[str] = []
    quote: str | None = None
    i = 0
    while i < len(sql):
        char = sql[i]
        if quote is None and char in ("'", '"'):
            quote = char
        elif quote == char:
            quote = None
        if quote is None and sql.startswith("%s", i):
            out.append(replacement())
            i += 2
            continue
        out.append(char)
        i += 1
    return "".join(out)


def qmark_params(sql: str) -> str:
    """dlt's ``%s`` placeholders as DuckDB's ``?`` (quoted text left alone)."""
    return replace_placeholders(sql, lambda: "?")


def execute_query(
    client: DestinationClient,
    sql: str,
    params: Sequence[object] = (),
    want_arrow: bool = False,
    typed: bool = True,
) -> QueryResult:
    """Run ``sql`` on a destination client.

    A DuckDB-style connection answers in Arrow, and rows are made from the Arrow columns:
    time zone aware timestamps then come back as ``datetime`` with ``zoneinfo`` (DuckDB's
    own row fetch needs ``pytz``); a result of plain columns only (:data:`_PLAIN_TYPES`)
    is fetched as rows directly. Other clients answer through ``client.query``; ``typed``:
    their Arrow in the column types the client names (a dataset's), else in the types the
    values show (a cursor's, as dlt 1.31's).
    """
    run_sql = getattr(client.connection, "sql", None)
    try:
        if run_sql is not None:  # DuckDB's connection (or one that answers like it)
            sql = qmark_params(sql) if params else sql
            relation = run_sql(sql, params=list(params) if params else None)
            plain = None if want_arrow or relation is None else _plain_rows(relation)
            if plain is not None:
                return plain
            table = None if relation is None else _duckdb_arrow(relation)
            if table is None:  # a statement without a result
                return QueryResult([], [])
            types = list(getattr(relation, "types", None) or []) or None
            if want_arrow:
                return QueryResult(list(table.column_names), [], table, types)
            kinds = (
                types if types and len(types) == table.num_columns else [None] * table.num_columns
            )
            columns = [_column_values(c, k) for c, k in zip(table.columns, kinds, strict=True)]
            rows = list(zip(*columns, strict=True))
            return QueryResult(list(table.column_names), rows, table, types)
        if isinstance(client, ColumnsQuery):
            answer = client.query_columns(sql, *params)
            return QueryResult(
                answer.names or [],
                answer.rows,
                types=answer.type_codes,
                has_result=answer.names is not None,
                arrow_types=answer.arrow_types if typed else None,
            )
        rows = client.query(sql, *params)
        return QueryResult([], rows)
    except LoadstoneError:
        raise
    except Exception as exc:
        kind = client.query_error_kind(exc) if isinstance(client, QueryErrors) else "terminal"
        raise _QUERY_ERRORS[kind](f"query failed: {exc}\n  sql: {sql}") from exc


def execute_frame(
    client: DestinationClient, sql: str, params: Sequence[object] = ()
) -> pd.DataFrame | None:
    """``sql``'s result as DuckDB's own pandas DataFrame (None on a client that is not
    DuckDB-style): dlt 1.31's ``df()`` on DuckDB is DuckDB's, whose types differ from
    Arrow's (decimals as float64, dates as datetime64, integers with nulls as Int64)."""
    run_sql = getattr(client.connection, "sql", None)
    if run_sql is None:
        return None
    try:
        relation = run_sql(qmark_params(sql) if params else sql, params=list(params) or None)
        return None if relation is None else cast("pd.DataFrame", relation.df())
    except LoadstoneError:
        raise
    except Exception as exc:
        kind = client.query_error_kind(exc) if isinstance(client, QueryErrors) else "terminal"
        raise _QUERY_ERRORS[kind](f"query failed: {exc}\n  sql: {sql}") from exc


#: rows of one DuckDB vector: dlt 1.31 reads DuckDB's pandas frames one vector at a time
#: (DuckDB's ``fetch_df_chunk``), whatever ``chunk_size`` says
DUCKDB_VECTOR_ROWS = 2048


def frame_chunk_rows(client: DestinationClient) -> int | None:
    """The rows of every chunk of a frame (``df(chunk_size=)``, ``iter_df``): a DuckDB
    vector on a DuckDB-style client, as dlt 1.31's; None where ``chunk_size`` rows are."""
    return DUCKDB_VECTOR_ROWS if getattr(client.connection, "from_arrow", None) else None


def arrow_frame(client: DestinationClient, table: pa.Table) -> pd.DataFrame | None:
    """An Arrow result as DuckDB's own pandas frame (None on a client that is not
    DuckDB-style), the types ``execute_frame`` gives, without running the query again."""
    from_arrow = getattr(client.connection, "from_arrow", None)
    if from_arrow is None:
        return None
    return cast("pd.DataFrame", from_arrow(table).df())


#: a client's :meth:`~loadstone.destinations.query_protocols.QueryErrors.query_error_kind` -> error
_QUERY_ERRORS: dict[str, type[DatasetError]] = {
    "undefined_relation": DatabaseUndefinedRelation,
    "terminal": DatabaseTerminalError,
    "transient": DatabaseTransientError,
}
