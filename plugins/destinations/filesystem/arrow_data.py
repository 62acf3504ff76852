"""A package's Parquet files of one table as one Arrow table a lakehouse format accepts.

Files of one table may have different column sets; they are unified by name. Every field is
made nullable (a later load may lack a column, and both formats refuse a required column
that arrives empty). Types a format cannot hold are narrowed losslessly to text: 256-bit
``wei`` decimals (both formats stop at 38 digits) and, for Delta, times of day.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from loadstone.normalizers.contract import arrow_type
from loadstone.schema import Column

#: Arrow types of columns that hold no value yet, by the schema's data type
_EMPTY_TYPES: Mapping[str, pa.DataType] = {
    "text": pa.string(),
    "bigint": pa.int64(),
    "double": pa.float64(),
    "bool": pa.bool_(),
    "timestamp": pa.timestamp("us", tz="UTC"),
    "date": pa.date32(),
    "json": pa.string(),
    "binary": pa.binary(),
}


def fits(data_type: pa.DataType, table_format: str, naive: bool = False) -> pa.DataType:
    """``data_type`` or the text type that keeps every value of it in ``table_format``; a
    ``naive`` column's timestamps without their zone (dlt 1.31 stores a ``timezone: false``
    column as ``timestamp_ntz`` / Iceberg ``timestamp``, as given; the normalizer's files
    hold it in UTC)."""
    if naive and pa.types.is_timestamp(data_type) and data_type.tz:
        return pa.timestamp(data_type.unit)
    if pa.types.is_decimal(data_type) and data_type.precision > 38:
        return pa.string()
    if table_format == "delta" and pa.types.is_time(data_type):
        return pa.string()
    if pa.types.is_large_string(data_type):
        return pa.string()
    return data_type


def format_schema(schema: pa.Schema, table_format: str, naive: Collection[str] = ()) -> pa.Schema:
    """``schema`` with the format's types (:func:`fits`), every field nullable."""
    return pa.schema(
        [
            pa.field(f.name, fits(f.type, table_format, f.name in naive), nullable=True)
            for f in schema
        ]
    )


def file_schema(files: Sequence[Path], table_format: str, naive: Collection[str] = ()) -> pa.Schema:
    """The columns of ``files`` (from their footers, no rows read) with the format's types."""
    schemas = [pq.read_schema(f) for f in files]
    unified = pa.unify_schemas(schemas, promote_options="permissive")
    return format_schema(unified, table_format, naive)


def naive_columns(columns: Sequence[Column], stored: pa.Schema | None) -> frozenset[str]:
    """The ``timezone: false`` timestamp columns a table format stores without zone: all of
    them, but those the stored table (``stored``, None when new) already holds with a zone
    (written so by an earlier loadstone), which keep it."""
    zoned = {
        f.name for f in stored or () if pa.types.is_timestamp(f.type) and f.type.tz is not None
    }
    return frozenset(
        c.name
        for c in columns
        if c.data_type == "timestamp" and c.timezone is False and c.name not in zoned
    )


def read_table(
    files: Sequence[Path], table_format: str, naive: Collection[str] = ()
) -> pa.Table | None:
    """All rows of ``files`` in one table with the format's types, or None without files."""
    if not files:
        return None
    parts = [pq.read_table(f) for f in files]
    target = file_schema(files, table_format, naive)
    aligned = []
    for part in parts:
        columns = []
        for field in target:
            if field.name in part.column_names:
                columns.append(part.column(field.name).cast(field.type))
            else:
                columns.append(pa.nulls(part.num_rows, field.type))
        aligned.append(pa.Table.from_arrays(columns, schema=target))
    return pa.concat_tables(aligned)


def _empty_type(column: Column, naive: Collection[str]) -> pa.DataType:
    """A column's Arrow type with no value yet; a decimal keeps its precision and scale (the
    text type beyond 38 digits, as :func:`fits` stores it)."""
    if column.data_type == "decimal":
        return fits(arrow_type("decimal", column.precision, column.scale), "")
    found = _EMPTY_TYPES.get(str(column.data_type), pa.string())
    return fits(found, "", column.name in naive)


def empty_table(columns: Sequence[Column], naive: Collection[str] = ()) -> pa.Table:
    """An empty table of the schema's columns (a replace that brought no rows)."""
    fields = [pa.field(c.name, _empty_type(c, naive), nullable=True) for c in columns]
    return pa.Table.from_pylist([], schema=pa.schema(fields))
