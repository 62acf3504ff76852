"""``batch_size=0``: the sink function receives the path of each load file, not rows.

dlt 1.31 then calls the function once per file of a table, with the file's path as ``items``
(the table schema beside it as usual), and leaves reading it to the function: copying Parquet
to a bucket, bulk-loading into a database. The file holds the rows as written, ``_dlt_*``
columns included, named as dlt names its files (``<table>.<file id>.0.<format>``: code that
takes the table from the name works). With ``"parquet"`` it is the package's own Parquet file
(linked under that name). With dlt's default ``"typed-jsonl"`` it is a gzipped file of JSON
lines, each line a JSON list of rows whose typed values carry dlt's marker character before
their text (:mod:`loadstone.storage.typed_marks`), null values left out, a ``json`` column's
value as JSON: the shape dlt writes, so code that reads dlt's files reads these.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import gzip
import os
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson
import pyarrow.parquet as pq

from loadstone.plugins.destinations.sink import batches
from loadstone.storage.typed_marks import marked

#: rows per line of a typed-jsonl file (one list per line, as dlt's writer buffers them)
ROWS_PER_LINE = 5000


def _typed(value: Any) -> Any:
    """A value JSON has no type for as dlt's marked text (:mod:`loadstone.storage.typed_marks`),
    datetimes in UTC and decimals without their column's padding, as dlt writes them."""
    if isinstance(value, _dt.datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=_dt.timezone.utc)
        value = aware.astimezone(_dt.timezone.utc)
    elif isinstance(value, decimal.Decimal):
        value = decimal.Decimal(_decimal_text(value))
    return marked(value)


def _decimal_text(value: decimal.Decimal) -> str:
    """The Parquet column's scale pads fractions with zeros (``1.500000000``); dlt writes the
    value as the item gave it, most often without them (``1.5``)."""
    text = str(value)
    if "." in text and "E" not in text.upper():
        text = text.rstrip("0").rstrip(".")
    return text


def _encode(value: Any) -> Any:
    """Values orjson writes itself stay; typed ones (it would write datetimes bare) get marked."""
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if isinstance(value, (decimal.Decimal, _dt.date, _dt.time, bytes)):
        return _typed(value)
    return value


def _job_name(table: str, source: Path, extension: str) -> str:
    return f"{table}.{source.name.split('.', 1)[0]}.0.{extension}"


def _linked_parquet(table: str, source: Path, folder: Path) -> Path:
    """The package's Parquet file under dlt's name (a hard link; a copy across devices)."""
    target = folder / _job_name(table, source, "parquet")
    folder.mkdir(parents=True, exist_ok=True)
    target.unlink(missing_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)
    return target


def _typed_jsonl(table: str, source: Path, json_columns: frozenset[str], folder: Path) -> Path:
    """The rows of the Parquet file ``source`` as dlt's gzipped typed-jsonl file."""
    target = folder / _job_name(table, source, "typed-jsonl.gz")
    folder.mkdir(parents=True, exist_ok=True)
    with gzip.open(target, "wb") as out:
        for part in pq.ParquetFile(source).iter_batches(batch_size=ROWS_PER_LINE):
            rows = [_encode(row) for row in batches.as_rows(part, json_columns)]
            out.write(orjson.dumps(rows) + b"\n")
    return target


def job_files(
    table: str,
    files: Sequence[Path],
    file_format: str,
    json_columns: frozenset[str],
    folder: Path,
) -> Iterator[tuple[str, int]]:
    """(path given to the function, rows in it) per load file of ``table``."""
    for source in files:
        rows = pq.ParquetFile(source).metadata.num_rows
        if file_format == "parquet":
            yield str(_linked_parquet(table, source, folder)), rows
        else:
            yield str(_typed_jsonl(table, source, json_columns, folder)), rows
