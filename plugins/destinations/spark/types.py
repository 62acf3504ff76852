"""Pure rules for Spark SQL: quoting identifiers and mapping schema types to Spark SQL types.

Kept apart from the client so they can be tested without a JVM. Every identifier that reaches
Spark goes through :func:`quote` (backticks, a backtick inside doubled).

What is lossy (README "Spark catalog tables"):

* ``wei`` → ``DECIMAL(38,0)``: Spark's decimals stop at 38 digits. The profile says so
  (``wei_precision=(38, 0)``), so the normalizer puts a larger value into the column's text
  variant (``<column>__v_text``) with every digit; an ANSI cast fails the load on anything
  else that does not fit, before the package is visible.
* ``decimal`` wider than 38 digits is refused before any work (:class:`UnsupportedType`).
* ``timestamp`` precision above 6 (nanoseconds) is cut to microseconds, Spark's precision.
* ``time`` → ``STRING`` (``HH:MM:SS.ffffff``): Spark has no time-of-day type it reads from
  Parquet, nor has the Hive metastore.
* ``json`` → ``STRING`` holding the JSON text.
"""

from __future__ import annotations

from loadstone.exceptions import UnsupportedType
from loadstone.schema import Column
from loadstone.schema.decimals import shape_of

#: Spark's largest DECIMAL precision.
MAX_DECIMAL_PRECISION = 38


def quote(ident: str) -> str:
    """Quote an identifier for Spark SQL: wrap in backticks and double any backtick inside."""
    return "`" + ident.replace("`", "``") + "`"


def qualified(*parts: str | None) -> str:
    """```catalog`.`dataset`.`table```, leaving out a part that is None."""
    return ".".join(quote(p) for p in parts if p is not None)


def literal(value: str) -> str:
    """A Spark SQL string literal (backslash escapes are on by default, so escape them)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _int_type(bits: int | None) -> str:
    if bits is None or 32 < bits <= 64:
        return "BIGINT"
    if bits <= 8:
        return "TINYINT"
    if bits <= 16:
        return "SMALLINT"
    if bits <= 32:
        return "INT"
    return "DECIMAL(38,0)"


def spark_type(column: Column, table: str = "?") -> str:
    """The Spark SQL type of a schema column ; see module docs."""
    data_type = column.data_type
    precision = column.precision
    name = column.name
    simple = {
        "text": "STRING",
        "json": "STRING",
        "time": "STRING",
        "double": "DOUBLE",
        "bool": "BOOLEAN",
        "date": "DATE",
        "binary": "BINARY",
        "wei": "DECIMAL(38,0)",
    }
    if data_type in simple:
        return simple[data_type]
    if data_type == "bigint":
        return _int_type(precision)
    if data_type == "timestamp":
        return "TIMESTAMP" if column.timezone is not False else "TIMESTAMP_NTZ"
    if data_type == "decimal":
        return _decimal_type(precision, column.scale, table, name)
    raise UnsupportedType(table, name, str(data_type), "Spark has no mapping for this data type")


def _decimal_type(precision: int | None, scale: int | None, table: str, name: str) -> str:
    shape = shape_of(precision, scale)
    p, s = shape.precision, shape.scale
    if p > MAX_DECIMAL_PRECISION:
        raise UnsupportedType(
            table, name, "decimal", f"precision {p} exceeds Spark's maximum of 38 digits"
        )
    if s > p:
        raise UnsupportedType(table, name, "decimal", f"scale {s} exceeds precision {p}")
    return f"DECIMAL({p},{s})"


def normalize_type_name(type_name: str) -> str:
    """Canonical spelling of a Spark type (``DESCRIBE``/catalog give ``bigint``,
    ``decimal(38,0)``, ``timestamp``), for comparison."""
    t = "".join(type_name.upper().split())
    aliases = {"INTEGER": "INT", "LONG": "BIGINT", "SHORT": "SMALLINT", "BYTE": "TINYINT"}
    return aliases.get(t, t)


def types_compatible(existing: str, expected: str) -> bool:
    """Whether a column already in the catalog holds values of the expected type."""
    return normalize_type_name(existing) == normalize_type_name(expected)
