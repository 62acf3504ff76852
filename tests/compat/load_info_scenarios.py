"""Compatibility scenarios of ``LoadInfo`` as data: ``info.asdict()`` and dlt's documented
``pipeline.run([info], table_name="_load_info")``, which loads that dict.

Ids, times, paths and hashes are each library's own: the scenarios compare key names,
value shapes and the tables and columns the info makes, not the values.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from tests.compat.harness import Context
from tests.compat.scenarios import scenario

ROWS = [{"id": 1, "items": [{"x": 1}, {"x": 2}]}, {"id": 2, "items": []}]


def shape(value: Any) -> Any:
    """The shape of an ``asdict()`` value: dicts by key, a list as the union of its items'
    shapes (a key's first non-null shape wins), scalars by type, times as ``datetime``."""
    if isinstance(value, dict):
        return {str(key): shape(item) for key, item in sorted(value.items())}
    if isinstance(value, (list, tuple)):
        merged: Any = None
        for item in value:
            merged = _merge(merged, shape(item))
        return [] if merged is None else [merged]
    if isinstance(value, dt.datetime):
        return "datetime"
    return type(value).__name__


def _merge(seen: Any, new: Any) -> Any:
    if isinstance(seen, dict) and isinstance(new, dict):
        keys = sorted({*seen, *new})
        return {k: _merge(seen.get(k), new.get(k)) for k in keys}
    if isinstance(seen, list) and isinstance(new, list) and seen and new:
        return [_merge(seen[0], new[0])]
    if seen is None or seen == "NoneType":
        return new
    return seen


@scenario
def load_info_asdict_shape(ctx: Context) -> Any:
    """``info.asdict()`` of a run with a nested list: every key and its value's shape."""
    pipeline = ctx.pipeline("info_dict", dataset_name="d")
    info = pipeline.run(ROWS, table_name="things")
    data = info.asdict()
    # dlt names its own factory, loadstone its own ("loadstone.destinations.duckdb")
    kind = data["destination_type"].rsplit(".", 1)[-1]
    return {"shape": shape(data), "type_ends": kind, "top_keys": sorted(data)}


@scenario
def load_info_loaded_as_data(ctx: Context) -> Any:
    """dlt's documented pattern: the load info of a run loaded into ``_load_info``."""
    pipeline = ctx.pipeline("info_rows", dataset_name="d")
    info = pipeline.run(ROWS, table_name="things")
    again = pipeline.run([info], table_name="_load_info")
    tables = ctx.tables(pipeline)
    typed = ctx.sql(
        pipeline,
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = 'd' AND table_name LIKE '\\_load\\_info%' ESCAPE '\\' "
        "ORDER BY 1, 2",
    )
    return {
        "tables": {name: table["columns"] for name, table in tables.items()},
        "types": typed,
        "rows": {
            name: len(tables[name]["rows"]) for name in ("_load_info", "_load_info__loads_ids")
        },
        "packages": len(again.loads_ids),
    }
