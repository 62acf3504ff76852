"""Writing one table's normalized Parquet files as Parquet, JSONL or CSV files.

Parquet files are copied byte for byte: the normalizer already wrote them in the types the
destination stores (see docs/ARCHITECTURE.md), so their rows never pass through the loader.
JSONL and CSV are written from Arrow batches, gzipped by default with ``.gz`` after the
format's extension, as dlt 1.31 does. JSON values: timestamps and dates in ISO 8601,
decimals as exact text, binary as base64.
"""

from __future__ import annotations

import base64
import csv
import decimal
import gzip
import io
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from loadstone.destinations.contract import LoadFileSpec, from_arrow, load_files
from loadstone.plugins.destinations.filesystem.configuration import CsvFormat
from loadstone.schema import Column


def extension(file_format: str, compress: bool) -> str:
    """The ``{ext}`` of the layout: ``parquet``, ``jsonl.gz``, ``csv.gz`` (or without ``.gz``)."""
    if file_format == "parquet" or not compress:
        return file_format
    return f"{file_format}.gz"


def list_parquet(spec: LoadFileSpec) -> list[Path]:
    """The non-empty Parquet files of a load request entry (the contract's one rule)."""
    return [f for f in load_files(spec) if pq.ParquetFile(f).metadata.num_rows > 0]


def _json_default(value: object) -> str:
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def _batches(source: Path) -> Iterator[pa.RecordBatch]:
    yield from pq.ParquetFile(source).iter_batches(batch_size=10_000)


def naive_columns(columns: Sequence[Column]) -> list[str]:
    """The timestamp columns without time zone (``timezone: false``)."""
    return [c.name for c in columns if c.data_type == "timestamp" and c.timezone is False]


def without_zone(table: pa.Table, naive: Sequence[str]) -> pa.Table:
    """``table`` with the ``naive`` columns as timestamps without zone: the normalizer
    writes every timestamp in UTC with its zone; dlt's files hold these as written (naive),
    and a reader of the files sees them so."""
    fields = []
    for field in table.schema:
        if field.name in naive and pa.types.is_timestamp(field.type) and field.type.tz:
            field = field.with_type(pa.timestamp(field.type.unit))
        fields.append(field)
    schema = pa.schema(fields, metadata=table.schema.metadata)
    return table if schema.equals(table.schema) else table.cast(schema)


def has_zoned(source: Path, naive: Sequence[str]) -> bool:
    """Whether the Parquet file ``source`` holds one of the ``naive`` columns with a zone."""
    schema = pq.read_schema(source)
    return any(pa.types.is_timestamp(f.type) and bool(f.type.tz) for f in schema if f.name in naive)


def parquet_without_zone(source: Path, naive: Sequence[str]) -> bytes:
    """The Parquet file ``source`` rewritten with its ``naive`` columns without zone."""
    buffer = io.BytesIO()
    pq.write_table(without_zone(pq.read_table(source), naive), buffer)
    return buffer.getvalue()


def render(
    source: Path,
    file_format: str,
    compress: bool,
    columns: Sequence[str] = (),
    naive: Sequence[str] = (),
    json_columns: Sequence[str] = (),
    csv_format: CsvFormat | None = None,
) -> bytes:
    """The bytes of ``source`` in ``file_format`` (JSONL / CSV), gzipped when ``compress``.

    A CSV file has every column of ``columns`` (the table's, in its order), empty where the
    package had no value for it, as dlt writes them: a later load's file has the header of a
    table that grew meanwhile. The ``naive`` columns are written without zone; in JSONL the
    ``json_columns`` (JSON text in the Parquet) are written as the JSON values they hold, as
    dlt writes them (an object, not a string holding one).

    dlt 1.31 writes a file made from rows (dicts) otherwise than one made from Arrow items
    (:func:`~loadstone.destinations.contract.from_arrow`): its JSONL lines leave out the
    keys whose value is null, its CSV is Python's ``csv`` module's (``True``/``False``,
    floats as Python prints them, ``2.0`` and not ``2``, every text quoted, null as ``""``).
    ``csv_format``: dlt's delimiter, header and quoting settings.
    """
    rows = not from_arrow(source)
    if file_format == "jsonl":
        data = _jsonl(source, naive, json_columns, rows)
    elif file_format == "csv":
        table = without_zone(_with_columns(pq.read_table(source), columns), naive)
        shape = csv_format or CsvFormat()
        data = _rows_csv(table, shape) if rows else _arrow_csv(table, shape)
    else:
        raise ValueError(f"render() writes jsonl or csv, not {file_format}")
    return gzip.compress(data, mtime=0) if compress else data


def _jsonl(source: Path, naive: Sequence[str], json_columns: Sequence[str], rows: bool) -> bytes:
    """JSON lines of ``source``; without null values where it was made from rows."""
    buffer = io.BytesIO()
    for batch in _batches(source):
        batch = without_zone(pa.Table.from_batches([batch]), naive)
        for row in batch.to_pylist():
            if rows:  # dlt's row: its own keys first, then the _dlt_ ones, nulls left out
                kept = [(name, value) for name, value in row.items() if value is not None]
                ordered = sorted(kept, key=lambda item: item[0].startswith("_dlt_"))
                row = dict(ordered)
            for name in json_columns:
                if isinstance(row.get(name), str):
                    row[name] = orjson.Fragment(row[name])
            buffer.write(orjson.dumps(row, default=_json_default))
            buffer.write(b"\n")
    return buffer.getvalue()


_ROWS_QUOTING: dict[str, Any] = {"quote_all": csv.QUOTE_ALL, "quote_none": csv.QUOTE_NONE}
_ARROW_QUOTING = {"quote_all": "all_valid", "quote_none": "none"}


def _arrow_csv(table: pa.Table, shape: CsvFormat) -> bytes:
    """CSV as pyarrow writes it (dlt's writer of Arrow items); struct, list and map columns
    (kept so for Parquet) as their JSON text, where dlt's writer refuses them."""
    for index, field in enumerate(table.schema):
        if pa.types.is_nested(field.type):
            texts = [_json_text(v) for v in table.column(index).to_pylist()]
            table = table.set_column(index, field.name, pa.array(texts, pa.string()))
    buffer = io.BytesIO()
    bare_header = shape.include_header and shape.quoting == "quote_none"
    if bare_header:  # pyarrow quotes a header in every style; dlt's has none here
        buffer.write((shape.delimiter.join(table.column_names) + "\n").encode())
    options = pa_csv.WriteOptions(
        include_header=shape.include_header and not bare_header,
        delimiter=shape.delimiter,
        quoting_style=_ARROW_QUOTING.get(shape.quoting, "needed"),
    )
    pa_csv.write_csv(table.cast(_csv_schema(table.schema)), buffer, options)
    return buffer.getvalue()


def _json_text(value: object) -> str | None:
    return None if value is None else orjson.dumps(value, default=_json_default).decode()


def _rows_csv(table: pa.Table, shape: CsvFormat) -> bytes:
    """CSV as Python's ``csv`` module writes rows (dlt's writer of rows): numbers and
    booleans bare, every other value quoted as its ``str``, binary as its UTF-8 text."""
    text = io.StringIO()
    quoting = _ROWS_QUOTING.get(shape.quoting, csv.QUOTE_NONNUMERIC)
    writer = csv.writer(text, quoting=quoting, delimiter=shape.delimiter, lineterminator="\n")
    if shape.include_header:
        writer.writerow(table.column_names)
    for batch in table.to_batches(max_chunksize=10_000):
        for row in batch.to_pylist():
            writer.writerow(_csv_value(value) for value in row.values())
    return text.getvalue().encode("utf-8")


def _csv_value(value: object) -> object:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8")
    return value


def _with_columns(table: pa.Table, columns: Sequence[str]) -> pa.Table:
    """``table`` with exactly ``columns`` in that order (nulls for the ones it lacks); as it
    is when no columns are given."""
    if not columns:
        return table
    arrays = [
        table.column(name) if name in table.column_names else pa.nulls(table.num_rows, pa.string())
        for name in columns
    ]
    extra = [name for name in table.column_names if name not in columns]
    arrays += [table.column(name) for name in extra]
    return pa.Table.from_arrays(arrays, names=[*columns, *extra])


def _csv_schema(schema: pa.Schema) -> pa.Schema:
    """CSV holds text: binary and nested values are written as strings."""
    fields = []
    for field in schema:
        if pa.types.is_binary(field.type) or pa.types.is_large_binary(field.type):
            fields.append(field.with_type(pa.string()))
        else:
            fields.append(field)
    return pa.schema(fields)
