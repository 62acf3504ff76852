"""Builders shared by the DuckDB destination tests (no tests here).

Schemas are written in dlt's stored form (the format ``Schema.to_dict()`` produces), Parquet
inputs with pyarrow exactly as the normalizer writes them, so the loader is tested against
its documented inputs.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from loadstone.destinations.contract import Destination, LoadRequest, PipelineStateRow
from loadstone.plugins.destinations.duckdb import DUCKDB
from loadstone.schema import Schema
from tests.destinations.schema_support import stored_schema

_files = itertools.count()
_load_ids = itertools.count(1)

SYSTEM = {
    "_dlt_id": {"data_type": "text", "nullable": False, "row_key": True, "unique": True},
    "_dlt_load_id": {"data_type": "text", "nullable": False},
}
NESTED = {
    "_dlt_parent_id": {"data_type": "text", "nullable": False, "parent_key": True},
    "_dlt_list_idx": {"data_type": "bigint", "nullable": False},
    "_dlt_id": {"data_type": "text", "nullable": False, "row_key": True, "unique": True},
}
ROOT_KEY = {"_dlt_root_id": {"data_type": "text", "nullable": False, "root_key": True}}


def table(
    columns: dict[str, dict[str, Any]],
    *,
    parent: str | None = None,
    write_disposition: str | None = None,
    strategy: str | None = None,
    root_key: bool = False,
) -> dict[str, Any]:
    """A stored table: data columns plus the system columns the normalizer adds."""
    cols = dict(columns)
    if parent is None:
        cols.update(SYSTEM)
    else:
        cols.update(NESTED)
        if root_key:
            cols.update(ROOT_KEY)
    out: dict[str, Any] = {"columns": {n: {"name": n, **c} for n, c in cols.items()}}
    if parent is not None:
        out["parent"] = parent
    if write_disposition:
        out["write_disposition"] = write_disposition
    if strategy:
        out["x-merge-strategy"] = strategy
    return out


def schema(name: str = "shop", version: int = 1, **tables: dict[str, Any]) -> dict[str, Any]:
    """A stored schema with the given tables; version_hash changes with the version."""
    return {
        "name": name,
        "version": version,
        "version_hash": f"hash-{name}-{version}",
        "engine_version": 11,
        "tables": {n: {"name": n, **t} for n, t in tables.items()},
        "normalizers": {"names": "snake_case"},
    }


def parquet(
    tmp: Path, rows: list[dict[str, Any]], types: dict[str, pa.DataType] | None = None
) -> Path:
    """Write rows to a Parquet file (column types inferred unless given)."""
    tmp.mkdir(parents=True, exist_ok=True)
    path = tmp / f"part-{next(_files):05d}.parquet"
    names = list(dict.fromkeys(k for r in rows for k in r)) or list(types or {})
    arrays = {}
    for n in names:
        values = [r.get(n) for r in rows]
        arrays[n] = pa.array(values, type=(types or {}).get(n))
    pq.write_table(pa.table(arrays), path)
    return path


def new_load_id() -> str:
    return f"1700000{next(_load_ids):03d}.5"


def request(
    stored: dict[str, Any] | Schema,
    tables: dict[str, Any],
    load_id: str | None = None,
    state: dict[str, Any] | None = None,
) -> LoadRequest:
    """The request of a package; a stored document is read into its ``Schema`` first."""
    return LoadRequest(
        load_id=load_id or new_load_id(),
        schema=stored if isinstance(stored, Schema) else stored_schema(stored),
        tables=tables,
        pipeline_state=PipelineStateRow("shop", state) if state is not None else None,
    )


def duckdb_destination(path: str | Path = "shop.duckdb", **config: Any) -> Destination:
    return DUCKDB.configured(credentials=str(path), **config)


def rows(client: Any, table: str, order: str = "1", columns: str = "*") -> list[tuple[Any, ...]]:
    """Rows of a table, fetched through Arrow (DuckDB's tuple fetch of TIMESTAMPTZ needs pytz)."""
    result = client.connection.sql(
        f"SELECT {columns} FROM {client.qualified(table)} ORDER BY {order}"
    ).to_arrow_table()
    return [tuple(r.values()) for r in result.to_pylist()]
