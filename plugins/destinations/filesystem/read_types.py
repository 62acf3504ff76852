"""The schema's types on the views ``pipeline.dataset()`` reads over a bucket's files.

DuckDB guesses the types of JSONL and CSV columns from their text: a decimal written as
``"12.50"`` comes back as text (JSONL) or a double (CSV), binary as its base64 or raw text,
a timestamp without time zone (``timezone: false``) as one with, and a column that is null in
every file as text. dlt 1.31's dataset gives the schema's types (``decimal128(10, 2)``,
``binary``, a naive ``timestamp``), whatever the file format (differential program p722).
The normalizer's Parquet holds a naive timestamp with UTC as its zone. Each view casts the
columns whose type DuckDB read otherwise; CSV reads decimals as text first, so the cast is
exact.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from loadstone.destinations.query_results import quote_identifier as _quote
from loadstone.plugins.destinations.duckdb.sql import timestamp_type
from loadstone.schema import Column

#: the DuckDB type of a schema type whose text is enough to cast (decimal, binary and
#: timestamps are handled by :func:`target_type`)
_SIMPLE = {
    "bigint": "BIGINT",
    "double": "DOUBLE",
    "bool": "BOOLEAN",
    "date": "DATE",
    "time": "TIME",
    "text": "VARCHAR",
    "json": "VARCHAR",
}
_INTEGERS = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT")


def target_type(column: Column) -> str | None:
    """The DuckDB type ``column`` reads as, or None when there is nothing to enforce."""
    kind = column.data_type
    if kind == "decimal":
        return (
            f"DECIMAL({column.precision or 38},{column.scale if column.scale is not None else 9})"
        )
    if kind == "wei":
        return "DECIMAL(38,0)"
    if kind == "timestamp":  # a naive one by its precision (TIMESTAMP_S rounds), as dlt's
        return timestamp_type(column.precision, column.timezone is not False)
    if kind == "binary":
        return "BLOB"
    return _SIMPLE.get(kind or "")


def csv_text_columns(columns: Sequence[Column]) -> list[str]:
    """Columns a CSV scan reads as text: text and JSON (never guessed), decimals (cast
    exactly afterwards)."""
    return [c.name for c in columns if c.data_type in ("text", "json", "decimal", "wei")]


def typed_select(
    select: str, file_format: str, columns: Sequence[Column], found: Mapping[str, str]
) -> str:
    """``select`` with every column whose guessed type (``found``: name -> DuckDB type) is
    not the schema's cast to it; unchanged when all match."""
    replaced, missing = [], []
    for column in columns:
        guessed, target = found.get(column.name), target_type(column)
        if guessed is None:  # in the schema, in no file (an scd2 table's _dlt_valid_to)
            missing.append(f"CAST(NULL AS {target or 'VARCHAR'}) AS {_quote(column.name)}")
            continue
        if target is None or _same(guessed, target):
            continue
        if file_format == "parquet" and _nested(guessed):
            continue  # an Arrow item's struct or list, kept so in the file: read as it is
        replaced.append(
            f"{_cast(column.name, guessed, target, file_format)} AS {_quote(column.name)}"
        )
    if replaced:
        select = f"SELECT * REPLACE ({', '.join(replaced)}) FROM ({select})"
    if missing:  # the schema's order, as dlt's views select the schema's columns
        named = {c.name for c in columns}
        order = [_quote(c.name) for c in columns] + [_quote(n) for n in found if n not in named]
        listed = ", ".join(order)
        select = f"SELECT {listed} FROM (SELECT *, {', '.join(missing)} FROM ({select}))"
    return select


def _nested(duckdb_type: str) -> bool:
    """A DuckDB struct, list, array or map type (``STRUCT(a BIGINT)``, ``BIGINT[]``)."""
    return duckdb_type.startswith(("STRUCT", "MAP", "UNION")) or duckdb_type.endswith("]")


def _same(guessed: str, target: str) -> bool:
    if target == "BIGINT":
        return guessed in _INTEGERS
    if target == "TIMESTAMP WITH TIME ZONE":
        return guessed in ("TIMESTAMP WITH TIME ZONE", "TIMESTAMPTZ")
    return guessed == target


def _cast(name: str, guessed: str, target: str, file_format: str) -> str:
    column = _quote(name)
    if target == "BLOB" and guessed == "VARCHAR":
        # JSONL holds binary as base64 (as dlt writes it), CSV as its raw text
        return f"from_base64({column})" if file_format == "jsonl" else f"encode({column})"
    if target == "VARCHAR" and guessed != "VARCHAR" and file_format == "jsonl":
        return f"CAST(to_json({column}) AS VARCHAR)"  # a JSON object or list, as its JSON text
    return f"CAST({column} AS {target})"
