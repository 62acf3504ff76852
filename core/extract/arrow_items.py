"""Arrow tables, record batches and pandas DataFrames as items: kept columnar, never per row.

A resource may yield ``pyarrow.Table``, ``pyarrow.RecordBatch`` or ``pandas.DataFrame``
items (dlt's fastest path: its SQL and file sources yield Arrow). Each is written as it is
into Arrow IPC files of the package (``extracted/a<table>.<chunk>.arrow``): IPC keeps every
Arrow type exactly (Parquet would turn ``timestamp[s]`` into milliseconds) and costs no
encoding. The normalizer reads those, and Parquet inputs, with Arrow and writes the table's
output with Arrow compute (``plugins/normalizers/relational/arrow_tables.py``). Nothing here
looks at a row.

pandas is never imported here: a DataFrame is recognized by its class, so loadstone works
without pandas installed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

from loadstone.storage.load_package import ExtractedFile
from loadstone.typing import TDataItem

if TYPE_CHECKING:  # pyarrow is imported when Arrow data first arrives, not with loadstone
    import pyarrow as pa

#: An Arrow file of a package is closed once it holds this many rows.
ARROW_CHUNK_ROWS = 1_000_000
#: Rows per record batch written (the unit the normalizer reads and splits work by).
ARROW_BATCH_ROWS = 128 * 1024

#: Suffix of Parquet inputs copied into a package.
PARQUET_SUFFIX = ".parquet"
#: Suffix of the package files that hold Arrow items (Arrow IPC file format).
ARROW_SUFFIX = ".arrow"


def is_pandas_frame(value: TDataItem) -> bool:
    """A ``pandas.DataFrame`` (told by its class: pandas need not be installed)."""
    cls = type(value)
    return cls.__name__ == "DataFrame" and cls.__module__.startswith("pandas.")


def is_arrow_item(value: TDataItem) -> bool:
    """An item the Arrow path takes: a pyarrow Table or RecordBatch, or a pandas DataFrame."""
    cls = type(value)
    if cls.__module__.startswith("pyarrow") and cls.__name__ in ("Table", "RecordBatch"):
        return True
    return is_pandas_frame(value)


def is_arrow_file(path: Path | str) -> bool:
    """An extracted file of the Arrow path (Arrow IPC or Parquet), not JSON lines."""
    return str(path).lower().endswith((ARROW_SUFFIX, PARQUET_SUFFIX))


def read_schema(path: Path | str) -> pa.Schema:
    """The Arrow schema of an extracted Arrow file (IPC or Parquet)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if str(path).lower().endswith(PARQUET_SUFFIX):
        return pq.read_schema(path)
    with pa.memory_map(str(path)) as source:
        return pa.ipc.open_file(source).schema


def iter_batches(
    path: Path | str, batch_rows: int, part: tuple[int, int] | None = None
) -> Iterator[pa.RecordBatch]:
    """The record batches of an extracted Arrow file, or of its ``part`` (units ``[a, b)``:
    row groups of a Parquet file, record batches of an IPC file; see :func:`parts`)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if str(path).lower().endswith(PARQUET_SUFFIX):
        handle = pq.ParquetFile(path)
        groups = None if part is None else list(range(*part))
        yield from handle.iter_batches(batch_size=batch_rows, row_groups=groups)
        return
    with pa.memory_map(str(path)) as source:
        reader = pa.ipc.open_file(source)
        first, stop = part if part is not None else (0, reader.num_record_batches)
        for index in range(first, stop):
            yield reader.get_batch(index)


def parts(path: Path | str, part_rows: int) -> list[tuple[int, int]]:
    """The file cut into parts of about ``part_rows`` rows, along its row groups (Parquet)
    or record batches (IPC), so that parts can be normalized side by side."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if str(path).lower().endswith(PARQUET_SUFFIX):
        meta = pq.ParquetFile(path).metadata
        sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    else:
        with pa.memory_map(str(path)) as source:
            reader = pa.ipc.open_file(source)
            sizes = [reader.get_batch(i).num_rows for i in range(reader.num_record_batches)]
    cut: list[tuple[int, int]] = []
    start, rows = 0, 0
    for index, size in enumerate(sizes):
        rows += size
        if rows >= part_rows:
            cut.append((start, index + 1))
            start, rows = index + 1, 0
    if start < len(sizes) or not cut:
        cut.append((start, len(sizes)))
    return cut


class ArrowItemError(ValueError):
    """An Arrow or pandas item cannot be turned into an Arrow table (cause in one line)."""


def as_arrow_table(item: TDataItem) -> pa.Table:
    """``item`` as a ``pyarrow.Table``; a DataFrame's index is not a column (as in dlt)."""
    import pyarrow as pa

    if isinstance(item, pa.Table):
        table = item
    elif isinstance(item, pa.RecordBatch):
        table = pa.Table.from_batches([item])
    else:
        try:
            table = _from_pandas(item)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as error:
            cause = str(error).splitlines()[0]
            raise ArrowItemError(f"the pandas DataFrame cannot be read as Arrow: {cause}") from None
    _refuse_durations(table.schema)
    return table


def _refuse_durations(schema: pa.Schema) -> None:
    """A duration or interval column (a pandas ``timedelta64`` column) has no data type to
    load as: its text would be a count of nanoseconds. Refused by name, as dlt 1.31 refuses
    it (``UnsupportedArrowTypeException``), with what to convert it to."""
    import pyarrow as pa

    for field in schema:
        if pa.types.is_duration(field.type) or pa.types.is_interval(field.type):
            raise ArrowItemError(
                f"column {field.name!r} has the Arrow type {field.type}, which has no data type "
                f"to load as: convert it first (seconds: df[{field.name!r}].dt.total_seconds())"
            )


def _from_pandas(frame: TDataItem) -> pa.Table:
    """``pyarrow.Table.from_pandas`` (index left out), with columns of ``Decimal`` objects
    converted through their text: Arrow's own conversion of Decimal objects costs about 2 s
    per million values, most of a frame's conversion (:func:`decimals_as_arrow`)."""
    import pyarrow as pa

    converted = {}
    for name in frame.columns:
        column = frame[name]
        if column.dtype == object:
            first = column.first_valid_index()
            if first is not None and isinstance(column[first], Decimal):
                array = decimals_as_arrow(column.tolist())
                if array is not None:
                    converted[name] = array
    if not converted:
        return pa.Table.from_pandas(frame, preserve_index=False)
    rest = pa.Table.from_pandas(frame.drop(columns=list(converted)), preserve_index=False)
    arrays = [converted[name] if name in converted else rest.column(name) for name in frame.columns]
    return pa.Table.from_arrays(arrays, names=[str(n) for n in frame.columns])


def decimals_as_arrow(values: list[TDataItem]) -> pa.Array | None:
    """``Decimal`` values (or None) as the ``decimal128`` array ``pyarrow.array`` infers
    (same precision and scale), built from their text with Arrow compute; None when a value
    is not a plain finite decimal (exponents, NaN, another type) or needs over 38 digits.

    Arrow's rule, per value: scale = digits after the point; integer digits = digits before
    it without sign and leading zeros, except that a whole zero (``0``) counts one; the
    array's scale and integer digits are the largest of its values'.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if not all(v is None or type(v) is Decimal for v in values):
        return None
    texts = pa.array([None if v is None else str(v) for v in values], pa.string())
    if (
        texts.null_count == len(texts)
        or pc.any(pc.match_substring_regex(texts, "[^0-9.-]")).as_py()
    ):
        return None  # 1E+2, NaN, Infinity, all nulls: Arrow's own path decides
    point = pc.find_substring(texts, ".")
    has_fraction = pc.greater_equal(point, 0)
    scales = pc.if_else(has_fraction, pc.subtract(pc.subtract(pc.utf8_length(texts), point), 1), 0)
    whole = pc.list_element(pc.split_pattern(texts, ".", max_splits=1), 0)
    digits = pc.utf8_length(pc.utf8_ltrim(pc.replace_substring(whole, "-", ""), "0"))
    whole_zero = pc.and_(pc.equal(digits, 0), pc.invert(has_fraction))
    int_digits = pc.if_else(whole_zero, 1, digits)
    scale = int(pc.max(scales).as_py() or 0)
    precision = max(1, int(pc.max(int_digits).as_py() or 0) + scale)
    if precision > 38:
        return None
    return pc.cast(texts, pa.decimal128(precision, scale))


def _plain_schema(table: pa.Table) -> pa.Schema:
    """The schema without pandas' metadata (it differs between frames of equal columns)."""
    return table.schema.remove_metadata()


class ArrowTableWriter:
    """Writes the Arrow items of one table into rotating Arrow IPC files of a package.

    Items of one schema share a file; an item with other columns or types starts a new file
    (the normalizer reads each file's own schema). A file is closed at
    :data:`ARROW_CHUNK_ROWS` rows.
    """

    def __init__(self, extracted_dir: Path, table_name: str, index: int) -> None:
        self.extracted_dir = extracted_dir
        self.table_name = table_name
        self.index = index
        self.chunk = 0
        self.rows = 0
        self.files: list[ExtractedFile] = []
        self._writer: pa.ipc.RecordBatchFileWriter | None = None
        self._schema: pa.Schema | None = None
        self._path: Path | None = None
        self._chunk_rows = 0

    def write(self, table: pa.Table) -> int:
        """Append ``table``; returns the rows written."""
        table = table.replace_schema_metadata(None)
        schema = _plain_schema(table)
        if self._writer is not None and (self._schema is None or not schema.equals(self._schema)):
            self._close()
        if self._writer is None:
            self._open(schema)
        assert self._writer is not None
        self._writer.write_table(table, max_chunksize=ARROW_BATCH_ROWS)
        self._chunk_rows += table.num_rows
        self.rows += table.num_rows
        if self._chunk_rows >= ARROW_CHUNK_ROWS:
            self._close()
        return int(table.num_rows)

    def _open(self, schema: pa.Schema) -> None:
        import pyarrow as pa

        self._path = self.extracted_dir / f"a{self.index:04d}.{self.chunk:05d}{ARROW_SUFFIX}"
        self._writer = pa.ipc.new_file(str(self._path), schema)
        self._schema = schema
        self._chunk_rows = 0
        self.chunk += 1

    def _close(self) -> None:
        if self._writer is None:
            return
        self._writer.close()
        assert self._path is not None
        with open(self._path, "rb") as handle:
            os.fsync(handle.fileno())
        size = self._path.stat().st_size
        self.files.append(
            ExtractedFile(self._path, self.table_name, items=self._chunk_rows, size=size)
        )
        self._writer = None
        self._schema = None

    @property
    def bytes(self) -> int:
        return sum(f.size or 0 for f in self.files)

    def close(self) -> list[ExtractedFile]:
        self._close()
        return self.files
