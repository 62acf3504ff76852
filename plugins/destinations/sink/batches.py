"""A table's load files as the batches a sink function receives.

dlt 1.31 hands a custom destination ``batch_size`` rows at a time: with
``loader_file_format="typed-jsonl"`` (its default) a list of dicts of typed values (datetimes,
dates, Decimals; a ``json`` column's value as the Python object; keys whose value is null left
out), with ``"parquet"`` a ``pyarrow.RecordBatch``. The normalizer writes Parquet, so both are
cut from the same files: the rows of all files of a table are one stream, cut into
``batch_size`` rows, starting after the rows already delivered (``progress``). With
``skip_dlt_columns_and_tables`` the ``_dlt_*`` columns are left out of the rows and out of the
table schema passed beside them.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

DLT_PREFIX = "_dlt_"


def is_dlt_name(name: str) -> bool:
    """A system column or table (``_dlt_id``, ``_dlt_pipeline_state``)."""
    return name.lower().startswith(DLT_PREFIX)


def _joined(pieces: list[pa.RecordBatch]) -> pa.RecordBatch:
    """One record batch of pieces cut from files whose columns may differ."""
    if len(pieces) == 1:
        return pieces[0]
    tables = [pa.Table.from_batches([p]) for p in pieces]
    return pa.concat_tables(tables, promote_options="permissive").combine_chunks().to_batches()[0]


def record_batches(
    files: Sequence[Path], batch_size: int, start: int = 0
) -> Iterator[pa.RecordBatch]:
    """The rows of ``files`` after the first ``start``, ``batch_size`` at a time."""
    pending: list[pa.RecordBatch] = []
    count = 0
    skip = start
    for path in files:
        for part in pq.ParquetFile(path).iter_batches(batch_size=max(batch_size, 1024)):
            if skip >= part.num_rows:
                skip -= part.num_rows
                continue
            part, skip = part.slice(skip), 0
            while part.num_rows:
                take = min(batch_size - count, part.num_rows)
                pending.append(part.slice(0, take))
                count += take
                part = part.slice(take)
                if count == batch_size:
                    yield _joined(pending)
                    pending, count = [], 0
    if pending:
        yield _joined(pending)


def without_dlt_columns(batch: pa.RecordBatch) -> pa.RecordBatch:
    keep = [i for i, name in enumerate(batch.schema.names) if not is_dlt_name(name)]
    return batch.select(keep)


def as_rows(batch: pa.RecordBatch, json_columns: frozenset[str]) -> list[dict[str, Any]]:
    """A batch as dlt's typed-jsonl items: dicts without nulls, JSON values decoded."""
    rows = []
    for row in batch.to_pylist():
        item = {}
        for key, value in row.items():
            if value is None:
                continue
            if key in json_columns and isinstance(value, str):
                value = json.loads(value)
            elif isinstance(value, _dt.datetime) and value.tzinfo is not None:
                value = _in_utc(value)
            item[key] = value
        rows.append(item)
    return rows


def _in_utc(value: _dt.datetime) -> _dt.datetime:
    """A stored timestamp as dlt's rows give it: in ``datetime.timezone.utc`` (pyarrow reads
    the files' "UTC" as ``zoneinfo.ZoneInfo("UTC")``, which prints and compares by identity
    differently)."""
    return value.astimezone(_dt.timezone.utc)


def table_schema(
    tables: Mapping[str, Mapping[str, Any]], name: str, skip_dlt: bool
) -> dict[str, Any]:
    """The table's stored schema as the function receives it (dlt's ``TTableSchema``): a
    nested table carries its root's write disposition, as dlt's load table does."""
    # a copy the function may change
    table: dict[str, Any] = json.loads(json.dumps(tables[name], default=str))
    parent = str(table.get("parent") or "")
    while "write_disposition" not in table and parent in tables:
        if "write_disposition" in tables[parent]:
            table["write_disposition"] = tables[parent]["write_disposition"]
        parent = str(tables[parent].get("parent") or "")
    if skip_dlt:
        columns = table.get("columns") or {}
        table["columns"] = {k: v for k, v in columns.items() if not is_dlt_name(k)}
    return table


def json_columns(table: Mapping[str, Any]) -> frozenset[str]:
    columns = table.get("columns") or {}
    return frozenset(k for k, v in columns.items() if v.get("data_type") == "json")
