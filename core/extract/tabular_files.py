"""Parquet and CSV files as inputs: they take the Arrow path, as Arrow items do.

* A Parquet file is copied into the package whole (the kernel moves the bytes); its row
  count comes from the footer. The normalizer reads it like any Arrow file of a package.
* A CSV file (maybe ``.gz``) is read by pyarrow's streaming CSV reader, with the types it
  infers, batch by batch, into the package's Arrow files: the file is never held whole. A
  file with only a header is an empty table (no rows, no error).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from loadstone.extract.arrow_items import PARQUET_SUFFIX
from loadstone.storage.load_package import ExtractedFile

if TYPE_CHECKING:  # pyarrow is imported when a table file is read, not with loadstone
    import pyarrow as pa

#: File suffixes read as tables by ``run`` (``.csv.gz`` too).
TABULAR_SUFFIXES = (".parquet", ".csv")


class TabularFileError(ValueError):
    """A Parquet or CSV input cannot be read (the cause in one line, the file named)."""


def tabular_kind(value: object) -> str | None:
    """``"parquet"`` or ``"csv"`` for a str/Path naming such a file, else None."""
    if not isinstance(value, (str, Path)) or "\n" in str(value):
        return None
    lowered = str(value).lower()
    if lowered.endswith(".csv.gz") or lowered.endswith(".csv"):
        return "csv"
    if lowered.endswith(PARQUET_SUFFIX):
        return "parquet"
    return None


def copy_parquet(path: Path, target: Path, table_name: str) -> ExtractedFile:
    """``path`` copied to ``target`` (made durable); refused unless it is readable Parquet."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        rows = pq.ParquetFile(path).metadata.num_rows
    except (pa.ArrowInvalid, OSError) as error:
        raise TabularFileError(f"{path} is not a readable Parquet file: {error}") from None
    shutil.copyfile(path, target)
    with open(target, "rb") as handle:
        os.fsync(handle.fileno())
    return ExtractedFile(
        target, table_name, source=str(path), items=rows, size=target.stat().st_size
    )


def read_csv_batches(path: Path, write: Callable[[pa.Table], int]) -> int:
    """Stream the CSV file at ``path`` into ``write`` batch by batch; returns the rows.

    A bad value (a row with more fields than the header, say) is reported with the file;
    pyarrow's message names the row.
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv

    try:
        stream = pa.input_stream(str(path), compression="detect")
        reader = pacsv.open_csv(stream)
    except pa.ArrowInvalid as error:
        if "Empty CSV file" in str(error):
            return 0
        raise TabularFileError(f"{path} cannot be read as CSV: {_first(error)}") from None
    rows = 0
    try:
        for batch in reader:
            if batch.num_rows:
                rows += write(pa.Table.from_batches([batch]))
    except pa.ArrowInvalid as error:
        raise TabularFileError(f"{path} cannot be read as CSV: {_first(error)}") from None
    return rows


def _first(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [repr(error)])[0]
