"""Parquet files into a PostgreSQL table through ``COPY ... FROM STDIN (FORMAT csv)``.

Measured against the alternatives (README, "PostgreSQL"): Arrow's C++ CSV writer turns each
record batch into CSV text on all cores and psycopg streams it to the server, so no Python
code touches a value. CSV keeps NULL (unquoted empty) apart from the empty string (Arrow
quotes every string); ``bytea`` values are sent as ``\\x`` hex text.

Files of one table may have different column sets (each normalizer task writes what it
saw); every file is copied with its own column list, and a column it lacks stays NULL.
"""

from __future__ import annotations

import io
import queue
import threading
from collections.abc import Generator, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from loadstone.plugins.destinations.sql.dialect import quote

#: rows per record batch sent to COPY (bounded memory whatever the file size)
BATCH_ROWS = 65_536
#: CSV batches prepared ahead of the one being sent (memory: this many batches at most)
READ_AHEAD = 2
T = TypeVar("T")
_CSV = pa_csv.WriteOptions(include_header=False, quoting_style="needed")


def _hex_binary(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    r"""``bytea`` input text: ``\x`` and two hex digits per byte."""
    values = column.to_pylist()
    return pa.array([None if v is None else "\\x" + v.hex() for v in values], pa.string())


def _csv_ready(batch: pa.RecordBatch) -> pa.RecordBatch:
    """The batch with binary columns as ``bytea`` hex text (CSV has no bytes)."""
    if not any(
        pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type) for f in batch.schema
    ):
        return batch
    arrays = [
        _hex_binary(col)
        if pa.types.is_binary(col.type) or pa.types.is_large_binary(col.type)
        else col
        for col in batch.columns
    ]
    return pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)


def csv_chunks(file: Path, columns: Sequence[str]) -> Iterator[bytes]:
    """The file's ``columns`` as CSV text, one chunk per record batch."""
    parquet = pq.ParquetFile(file)
    for batch in parquet.iter_batches(batch_size=BATCH_ROWS, columns=list(columns)):
        sink = io.BytesIO()
        pa_csv.write_csv(_csv_ready(batch), sink, _CSV)
        yield sink.getvalue()


def copy_statement(target: str, columns: Sequence[str]) -> str:
    names = ", ".join(quote(c) for c in columns)
    return f"COPY {target} ({names}) FROM STDIN (FORMAT csv)"


def file_columns(file: Path, wanted: Sequence[str]) -> list[str]:
    """The ``wanted`` columns (schema order) that the file has."""
    present = set(pq.read_schema(file).names)
    return [c for c in wanted if c in present]


def file_batches(
    files: Sequence[Path], wanted: Sequence[str]
) -> Iterator[tuple[tuple[Path, tuple[str, ...]], bytes]]:
    """Each file's CSV batches, keyed by the file and the columns its COPY names."""
    for file in files:
        names = file_columns(file, wanted)
        for chunk in csv_chunks(file, names) if names else ():
            yield (file, tuple(names)), chunk


def read_ahead(items: Iterator[T], depth: int = READ_AHEAD) -> Generator[T, None, None]:
    """``items``, produced by a thread up to ``depth`` ahead of the consumer.

    Why: the COPY's server process parses and stores one batch while the next is read from
    Parquet and written as CSV (Arrow's reader and writer release the GIL), instead of
    waiting for it: on 2 cores the client's 7 CPU s at 100k events otherwise add to the
    server's 48. An error in the producer is raised in the consumer; a consumer that stops
    early (its COPY failed) stops the producer.
    """
    slots: queue.Queue[tuple[str, object]] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(entry: tuple[str, object]) -> bool:
        while not stop.is_set():
            try:
                slots.put(entry, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put(("item", item)):
                    return
        except BaseException as exc:  # handed to the consumer, which raises it
            put(("error", exc))
            return
        put(("done", None))

    thread = threading.Thread(target=produce, name="copy-read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            kind, value = slots.get()
            if kind == "done":
                return
            if kind == "error":
                assert isinstance(value, BaseException)
                raise value
            yield value  # type: ignore[misc]  # an "item" entry holds a T
    finally:
        stop.set()
        thread.join()
