"""Pure SQL rules for PostgreSQL: types as dlt 1.31 makes them, placeholders, comparison.

Types (checked against ``information_schema.columns`` of tables dlt 1.31 made, see
``tests/fixtures/postgres/``): text ``character varying`` (``(n)`` with a precision),
double ``double precision``, bool ``boolean``, bigint by precision bits ``smallint`` /
``integer`` / ``bigint``, timestamp ``timestamp(p) with[out] time zone``, date, time
``time(p) without time zone``, binary ``bytea``, json ``jsonb``, decimal ``numeric(p,s)``
(the column's own, ``loadstone.schema.decimals.shape_of``: 38,9 when none is declared) and wei ``numeric(156,78)``.

Types are spelled as ``format_type()`` prints them, so a column read back from the catalog
compares with the one the schema asks for as text.
"""

from __future__ import annotations

from loadstone.exceptions import UnsupportedType
from loadstone.plugins.destinations.sql.dialect import Dialect
from loadstone.schema import Column
from loadstone.schema.decimals import shape_of

WEI = (156, 78)
#: PostgreSQL's largest NUMERIC precision and its finest timestamp precision
MAX_NUMERIC_PRECISION = 1000
MAX_TIMESTAMP_PRECISION = 6


def _int_type(bits: int | None, table: str, name: str) -> str:
    if bits is None or 32 < bits <= 64:
        return "bigint"
    if bits <= 16:
        return "smallint"
    if bits <= 32:
        return "integer"
    raise UnsupportedType(table, name, "bigint", f"precision {bits} bits exceeds bigint (64)")


def _fraction(precision: int | None) -> str:
    if precision is None or precision >= MAX_TIMESTAMP_PRECISION:
        return ""  # the default, 6: format_type prints no typmod for it
    return f"({precision})"


def _decimal_type(column: Column, table: str, name: str) -> str:
    shape = shape_of(column.precision, column.scale)
    p, s = shape.precision, shape.scale
    if not 0 < p <= MAX_NUMERIC_PRECISION or s > p:
        raise UnsupportedType(table, name, "decimal", f"numeric({p},{s}) is not a valid type")
    return f"numeric({p},{s})"


def postgres_type(column: Column, table: str = "?") -> str:
    """The PostgreSQL type of a schema column ."""
    data_type = column.data_type
    precision = column.precision
    name = column.name
    simple = {
        "double": "double precision",
        "bool": "boolean",
        "date": "date",
        "binary": "bytea",
        "json": "jsonb",
        "wei": f"numeric({WEI[0]},{WEI[1]})",
    }
    if data_type in simple:
        return simple[data_type]
    if data_type == "text":
        return "character varying" if precision is None else f"character varying({precision})"
    if data_type == "bigint":
        return _int_type(precision, table, name)
    if data_type == "timestamp":
        zone = "without" if column.timezone is False else "with"
        return f"timestamp{_fraction(precision)} {zone} time zone"
    if data_type == "time":
        return f"time{_fraction(precision)} without time zone"
    if data_type == "decimal":
        return _decimal_type(column, table, name)
    raise UnsupportedType(table, name, str(data_type), "PostgreSQL has no mapping for this type")


def types_compatible(existing: str, expected: str) -> bool:
    """Whether a column already there (``format_type`` text) takes the expected type's values.

    Exact match, or json into a text column (dlt treats json as "JSON or string").
    """
    if existing == expected:
        return True
    return expected == "jsonb" and existing.startswith("character varying")


def numbered_placeholders(sql: str) -> str:
    """``?`` placeholders as PostgreSQL's ``$1, $2, ...``; quoted text is left alone.

    The shared SQL uses ``?``; psycopg's raw cursor sends ``$n`` to the server as is, so no
    character of an identifier (``%`` included) is ever taken for a placeholder.
    """
    out: list[str] = []
    quote_char: str | None = None
    count = 0
    for char in sql:
        if quote_char is not None:
            if char == quote_char:
                quote_char = None  # a doubled quote re-opens at once: same result
        elif char in ('"', "'"):
            quote_char = char
        elif char == "?":
            count += 1
            out.append(f"${count}")
            continue
        out.append(char)
    return "".join(out)


#: PostgreSQL for the shared write dispositions: ``ctid`` orders a freshly filled staging
#: table by insertion; TRUNCATE empties a table inside the package transaction.
DIALECT = Dialect(
    name="postgres",
    column_type=postgres_type,
    row_order="ctid",
    empty_table="TRUNCATE {table}",
    move_table="ALTER TABLE {table} SET SCHEMA {dataset}",
    types_compatible=types_compatible,
)
