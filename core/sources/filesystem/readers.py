"""The readers: transformers that turn file items into rows, as dlt's ``read_*`` do.

Each takes pages of :class:`~loadstone.sources.filesystem.files.FileItemDict` (piped from
``filesystem(...)``) and yields pages of rows. Their output matches dlt 1.31's, because the
loaded tables must match: ``read_csv`` parses with pandas (so ``"2024-01-01"`` stays text
and ``**pandas_kwargs`` mean what they mean in dlt), ``read_jsonl`` and ``read_parquet``
yield dicts (the tables get ``_dlt_id`` / ``_dlt_load_id`` as under dlt), and
``read_parquet(use_pyarrow=True)`` / ``read_csv_duckdb(use_pyarrow=True)`` yield Arrow
tables, which load column by column without ``_dlt_*`` columns, as in dlt.

A file that disappears or cannot be parsed fails the run with one line naming its URL
(:class:`~loadstone.sources.filesystem.files.FileReadError`).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from loadstone.exceptions import FileReadError
from loadstone.sources.filesystem.files import FileItemDict
from loadstone.typing import TDataItem


@contextlib.contextmanager
def _reading(item: FileItemDict) -> Iterator[None]:
    """Errors while reading ``item`` become one line naming the file."""
    try:
        yield
    except FileReadError:
        raise
    except (OSError, ValueError, ImportError) as error:
        raise FileReadError(item["file_url"], error) from None
    except Exception as error:  # parser errors of pandas / pyarrow / duckdb have own classes
        if type(error).__module__.startswith(("pandas", "pyarrow", "duckdb", "_duckdb")):
            raise FileReadError(item["file_url"], error) from None
        raise


def _nan_to_none(row: dict[str, TDataItem]) -> dict[str, TDataItem]:
    """pandas' NaN for an empty cell is a NULL in dlt's tables."""
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}


def read_csv_items(
    items: Iterable[FileItemDict], chunksize: int = 10000, **pandas_kwargs: object
) -> Iterator[list[dict[str, TDataItem]]]:
    """Rows of CSV files, ``chunksize`` rows per page, parsed by ``pandas.read_csv``."""
    import pandas as pd  # type: ignore[import-untyped,unused-ignore]  # pandas ships no stubs

    kwargs = {"header": "infer", **pandas_kwargs, "chunksize": chunksize}
    for item in items:
        with _reading(item), item.open() as handle:
            for frame in pd.read_csv(handle, **kwargs):
                yield [_nan_to_none(row) for row in frame.to_dict(orient="records")]


def read_jsonl_items(
    items: Iterable[FileItemDict], chunksize: int = 1000
) -> Iterator[list[TDataItem]]:
    """Objects of JSON lines files (gzip or not), ``chunksize`` per page."""
    for item in items:
        with _reading(item), item.open() as handle:
            page: list[TDataItem] = []
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    page.append(orjson.loads(line))
                except orjson.JSONDecodeError as error:
                    cause = ValueError(f"line {number}: {error}")
                    raise FileReadError(item["file_url"], cause) from None
                if len(page) >= chunksize:
                    yield page
                    page = []
            if page:
                yield page


def read_parquet_items(
    items: Iterable[FileItemDict], chunksize: int = 1000, use_pyarrow: bool = False
) -> Iterator[TDataItem]:
    """Rows of Parquet files: pages of dicts, or Arrow tables with ``use_pyarrow``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for item in items:
        with _reading(item), item.open() as handle:
            for batch in pq.ParquetFile(handle).iter_batches(batch_size=chunksize):
                yield pa.Table.from_batches([batch]) if use_pyarrow else batch.to_pylist()


def read_csv_duckdb_items(
    items: Iterable[FileItemDict],
    chunk_size: int | None = 5000,
    use_pyarrow: bool = False,
    **duckdb_kwargs: Any,
) -> Iterator[TDataItem]:
    """Rows of CSV files parsed by DuckDB's ``read_csv`` (its type sniffing, its options:
    ``duckdb_kwargs`` take the types of DuckDB's parameters)."""
    import duckdb
    import pyarrow as pa

    batch_rows = chunk_size or 1_000_000
    for item in items:
        with _reading(item), duckdb.connect() as conn, item.open() as handle:
            relation = conn.read_csv(handle, **duckdb_kwargs)
            for batch in relation.to_arrow_reader(batch_rows):
                yield pa.Table.from_batches([batch]) if use_pyarrow else batch.to_pylist()
