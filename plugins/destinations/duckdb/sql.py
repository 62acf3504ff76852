"""Pure SQL text rules for DuckDB: quoting identifiers and mapping schema types to DuckDB types.

Kept apart from the client so the rules can be tested without a database and read in one
place. Quoting is the shared one (``sql/dialect.py``): a column named
``"; DROP TABLE users; --`` is a column. :data:`DIALECT` is what the shared write
dispositions (``sql/merge.py``) need to know about DuckDB.
"""

from __future__ import annotations

from loadstone.exceptions import UnsupportedType
from loadstone.plugins.destinations.sql.dialect import Dialect, literal, qualified, quote
from loadstone.schema import Column
from loadstone.schema.decimals import shape_of

__all__ = ["DIALECT", "duckdb_type", "literal", "qualified", "quote", "types_compatible"]

#: DuckDB's largest DECIMAL precision.
MAX_DECIMAL_PRECISION = 38


def _int_type(bits: int | None) -> str:
    if bits is None:
        return "BIGINT"
    if bits <= 8:
        return "TINYINT"
    if bits <= 16:
        return "SMALLINT"
    if bits <= 32:
        return "INTEGER"
    if bits <= 64:
        return "BIGINT"
    return "HUGEINT"


def timestamp_type(precision: int | None, timezone: bool) -> str:
    """DuckDB's timestamp type of a column: one with time zone, a naive one by precision."""
    if timezone:
        # DuckDB has one time-zone-aware timestamp type (microseconds).
        return "TIMESTAMP WITH TIME ZONE"
    if precision is None:
        return "TIMESTAMP"
    if precision == 0:
        return "TIMESTAMP_S"
    if precision <= 3:
        return "TIMESTAMP_MS"
    if precision <= 6:
        return "TIMESTAMP"
    return "TIMESTAMP_NS"


def duckdb_type(column: Column, table: str = "?") -> str:
    """The DuckDB type of a schema column .

    * ``wei`` → ``DECIMAL(38,0)`` as dlt 1.31: the normalizer puts a wider value into the
      column's ``__v_text`` variant (the profile's ``wei_precision``), so no digit is lost.
    * ``decimal`` with a precision above 38 → ``VARCHAR`` for the same reason (lossless).
    * ``timestamp``: ``timezone`` false → naive ``TIMESTAMP`` by precision (0 → _S, 3 → _MS,
      6 → plain, 9 → _NS); time-zone aware is always ``TIMESTAMP WITH TIME ZONE``.
    * ``bigint`` precision is in bits: TINYINT / SMALLINT / INTEGER / BIGINT / HUGEINT.
    * ``text``/``binary`` precision is accepted and ignored (DuckDB has no length limit).
    """
    data_type = column.data_type
    precision = column.precision
    name = column.name
    if data_type == "text":
        return "VARCHAR"
    if data_type == "wei":
        return "DECIMAL(38,0)"
    if data_type == "double":
        return "DOUBLE"
    if data_type == "bool":
        return "BOOLEAN"
    if data_type == "bigint":
        return _int_type(precision)
    if data_type == "timestamp":
        return timestamp_type(precision, column.timezone is not False)
    if data_type == "date":
        return "DATE"
    if data_type == "time":
        return "TIME"
    if data_type == "binary":
        return "BLOB"
    if data_type == "json":
        return "JSON"
    if data_type == "decimal":
        shape = shape_of(precision, column.scale)
        p, s = shape.precision, shape.scale
        if p > MAX_DECIMAL_PRECISION:
            return "VARCHAR"
        if s > p:
            raise UnsupportedType(table, name, "decimal", f"scale {s} exceeds precision {p}")
        return f"DECIMAL({p},{s})"
    raise UnsupportedType(table, name, str(data_type), "DuckDB has no mapping for this data type")


def normalize_type_name(type_name: str) -> str:
    """Canonical spelling of a DuckDB type as information_schema reports it, for comparison."""
    t = " ".join(type_name.upper().split())
    aliases = {
        "TIMESTAMPTZ": "TIMESTAMP WITH TIME ZONE",
        "TIMESTAMP_US": "TIMESTAMP",
        "INT8": "BIGINT",
        "LONG": "BIGINT",
        "INT4": "INTEGER",
        "INT": "INTEGER",
        "INT2": "SMALLINT",
        "INT1": "TINYINT",
        "INT128": "HUGEINT",
        "FLOAT8": "DOUBLE",
        "BOOL": "BOOLEAN",
        "STRING": "VARCHAR",
        "TEXT": "VARCHAR",
        "BYTEA": "BLOB",
        "NUMERIC": "DECIMAL(18,3)",
        "DECIMAL": "DECIMAL(18,3)",
    }
    if t.startswith("VARCHAR("):
        return "VARCHAR"
    t = t.replace(", ", ",")
    return aliases.get(t, t)


def types_compatible(existing: str, expected: str) -> bool:
    """Whether a column already in the destination can take values of the expected type.

    Exact match after canonical spelling, plus JSON held in a VARCHAR column (dlt itself
    treats json as "JSON or string").
    """
    e, x = normalize_type_name(existing), normalize_type_name(expected)
    if e == x:
        return True
    return x == "JSON" and e == "VARCHAR"


#: DuckDB for the shared write dispositions: ``rowid`` orders a table by insertion.
DIALECT = Dialect(
    name="duckdb",
    column_type=duckdb_type,
    row_order="rowid",
    types_compatible=types_compatible,
    type_name=normalize_type_name,
    unique_on_add=False,
)
