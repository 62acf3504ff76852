"""Compatibility scenarios for Arrow and pandas data: the same program under dlt 1.31 and
loadstone must give the same tables, column types, rows and state.

They register in :data:`tests.compat.scenarios.SCENARIOS` (``scenarios.py`` imports this
module), so ``tests/compat/record.py`` records them and ``tests/pipelines/test_compat_dlt.py``
compares them like every other scenario.
"""

from __future__ import annotations

import datetime as dt
import decimal
import os
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pyarrow as pa

from tests.compat.harness import Context
from tests.compat.scenarios import _state, scenario

UTC = dt.timezone.utc

#: PostgreSQL's own spelling of each column's type (``tests/fixtures/arrow/record.py`` and
#: ``tests/destinations/postgres/test_postgres_arrow.py`` both read the table with it)
POSTGRES_TYPES_SQL = (
    "SELECT a.attname, format_type(a.atttypid, a.atttypmod), NOT a.attnotnull "
    "FROM pg_attribute a JOIN pg_class c ON a.attrelid = c.oid "
    "JOIN pg_namespace n ON c.relnamespace = n.oid "
    "WHERE n.nspname = %s AND c.relname = %s AND a.attnum > 0 AND NOT a.attisdropped "
    "ORDER BY a.attnum"
)


def every_arrow_type(nested: bool = True) -> pa.Table:
    """One column per Arrow type a user hands a loader, with nulls where a type allows.

    ``nested=False`` leaves out the struct, list and map columns: dlt 1.31 cannot load those
    into PostgreSQL (its CSV writer refuses them).
    """
    stamp = dt.datetime(2024, 1, 1, 12, 30, 15, 123456, tzinfo=UTC)
    table = pa.table(
        {
            "Qty": pa.array([1, 2, None], pa.int32()),
            "i8": pa.array([1, -2, 3], pa.int8()),
            "i16": pa.array([1, 2, 3], pa.int16()),
            "i64": pa.array([1, 2, 2**40], pa.int64()),
            "u8": pa.array([1, 2, 127], pa.uint8()),
            "u32": pa.array([1, 2, 3], pa.uint32()),
            "f32": pa.array([1.5, 2.0, None], pa.float32()),
            "price": pa.array([1.5, 2.25, None]),
            "flag": pa.array([True, False, None]),
            "name": pa.array(["a", "b", None]),
            "big_text": pa.array(["x", None, "z"], pa.large_string()),
            "blob": pa.array([b"a", b"bc", None]),
            "amount": pa.array(
                [decimal.Decimal("1.25"), None, decimal.Decimal("-3.50")], pa.decimal128(9, 2)
            ),
            "day": pa.array([dt.date(2024, 1, 1), None, dt.date(2024, 2, 29)], pa.date32()),
            "at_time": pa.array([dt.time(1, 2, 3), None, dt.time(23, 59, 59)], pa.time64("us")),
            "ts_utc": pa.array([stamp, None, stamp], pa.timestamp("us", tz="UTC")),
            "ts_berlin": pa.array([stamp] * 3, pa.timestamp("ms", tz="Europe/Berlin")),
            "ts_naive": pa.array([stamp.replace(tzinfo=None)] * 3, pa.timestamp("us")),
            "ts_seconds": pa.array([stamp.replace(tzinfo=None)] * 3, pa.timestamp("s")),
            "ts_nanos": pa.array([stamp] * 3, pa.timestamp("ns", tz="UTC")),
            "label": pa.array(["x", "y", "x"]).dictionary_encode(),
            "point": pa.array([{"a": 1, "b": "x"}, None, {"a": 2, "b": None}]),
            "tags": pa.array([[1, 2], [], None]),
            "attrs": pa.array([[("k", 1)], None, []], pa.map_(pa.string(), pa.int64())),
            "nothing": pa.array([None, None, None], pa.null()),
        }
    )
    return table if nested else table.drop_columns(["point", "tags", "attrs"])


def _schema_columns(pipe: Any, table: str) -> dict[str, Any]:
    """The stored schema's columns of ``table``: the hints a user reads."""
    keys = ("data_type", "nullable", "precision", "scale", "primary_key", "timezone")
    columns = pipe.default_schema.to_dict()["tables"][table]["columns"]
    return {name: {k: column[k] for k in keys if k in column} for name, column in columns.items()}


def _types(ctx: Context, pipe: Any, table: str) -> Any:
    """The DuckDB column types of ``table`` (name -> type)."""
    rows = ctx.sql(
        pipe,
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = "
        f"'{pipe.dataset_name}' AND table_name = '{table}' ORDER BY ordinal_position",
    )
    return dict(rows)


def _described(ctx: Context, pipe: Any, table: str) -> dict[str, Any]:
    return {
        "schema": _schema_columns(pipe, table),
        "types": _types(ctx, pipe, table),
        "tables": ctx.tables(pipe),
    }


@scenario
def arrow_every_type(ctx: Context) -> Any:
    pipe = ctx.pipeline("arrow_types")
    pipe.run(every_arrow_type(), table_name="Readings")
    return _described(ctx, pipe, "readings")


@scenario
def arrow_time_units(ctx: Context) -> Any:
    """Times of each Arrow unit: dlt records seconds and milliseconds as a precision."""
    pipe = ctx.pipeline("arrow_time_units")
    at = [dt.time(1, 2, 3), None]
    table = pa.table(
        {
            "in_s": pa.array(at, pa.time32("s")),
            "in_ms": pa.array(at, pa.time32("ms")),
            "in_us": pa.array(at, pa.time64("us")),
            "in_ns": pa.array(at, pa.time64("ns")),
        }
    )
    pipe.run(table, table_name="times")
    return _described(ctx, pipe, "times")


@scenario
def arrow_record_batch_generator(ctx: Context) -> Any:
    def batches() -> Iterator[pa.RecordBatch]:
        for start in (0, 10, 20):
            yield pa.RecordBatch.from_pydict({"n": [start, start + 1], "even": [True, False]})

    pipe = ctx.pipeline("arrow_batches")
    pipe.run(batches(), table_name="numbers")
    return _described(ctx, pipe, "numbers")


@scenario
def arrow_tables_whose_columns_change(ctx: Context) -> Any:
    first = pa.table({"id": [1], "v": ["a"]})
    second = pa.table({"id": [2], "v": ["b"], "extra": [1.5]})
    pipe = ctx.pipeline("arrow_evolve")
    pipe.run([first, second], table_name="items")
    pipe.run(pa.table({"id": [3], "more": [True]}), table_name="items")
    return _described(ctx, pipe, "items")


@scenario
def pandas_frame_with_index_and_odd_names(ctx: Context) -> Any:
    frame = pd.DataFrame(
        {
            "Station Name": ["a", "b", "a"],
            "temp C": [1.5, None, 2.0],
            "n": [1, 2, 3],
            "when": pd.to_datetime(["2024-01-01", "2024-01-02", "2024-01-03"]),
            "when_utc": pd.to_datetime(["2024-01-01 10:00"] * 3).tz_localize("UTC"),
        },
        index=[10, 11, 12],
    )
    pipe = ctx.pipeline("pandas_run")
    pipe.run(frame, table_name="weather")
    return _described(ctx, pipe, "weather")


@scenario
def pandas_merge_on_primary_key(ctx: Context) -> Any:
    dlt = ctx.dlt

    @dlt.resource(write_disposition="merge", primary_key="station")
    def stations(frame: Any) -> Any:
        yield frame

    pipe = ctx.pipeline("pandas_merge")
    pipe.run(stations(pd.DataFrame({"station": ["a", "b", "a"], "v": [1, 2, 3]})))
    first = ctx.tables(pipe)
    pipe.run(stations(pd.DataFrame({"station": ["b", "c"], "v": [20, 30]})))
    return {"first": first, **_described(ctx, pipe, "stations")}


@scenario
def arrow_upsert_and_replace(ctx: Context) -> Any:
    dlt = ctx.dlt
    upsert = {"disposition": "merge", "strategy": "upsert"}

    @dlt.resource(write_disposition=upsert, primary_key="id")
    def people(table: Any) -> Any:
        yield table

    @dlt.resource(write_disposition="replace")
    def snapshot(table: Any) -> Any:
        yield table

    pipe = ctx.pipeline("arrow_dispositions")
    pipe.run([people(pa.table({"id": [1, 2], "v": ["a", "b"]})), snapshot(pa.table({"x": [1]}))])
    pipe.run([people(pa.table({"id": [2, 3], "v": ["B", "c"]})), snapshot(pa.table({"x": [2]}))])
    return ctx.tables(pipe)


@scenario
def arrow_incremental_two_runs(ctx: Context) -> Any:
    dlt = ctx.dlt

    @dlt.resource(primary_key="id")
    def events(table: Any, updated: Any = dlt.sources.incremental("updated")) -> Any:
        yield table

    pipe = ctx.pipeline("arrow_incremental")
    pipe.run(events(pa.table({"id": [1, 2, 3], "updated": [1, 2, 3]})))
    pipe.run(events(pa.table({"id": [3, 4, 5, 0], "updated": [3, 3, 4, 0]})))
    return {"tables": ctx.tables(pipe), "state": _state(pipe)}


@scenario
def pandas_incremental_on_timestamps(ctx: Context) -> Any:
    dlt = ctx.dlt
    day = pd.Timestamp("2024-05-01", tz="UTC")

    @dlt.resource(name="readings")
    def readings(frame: Any, at: Any = dlt.sources.incremental("at")) -> Any:
        yield frame

    pipe = ctx.pipeline("pandas_incremental")
    frame = pd.DataFrame({"at": [day, day + pd.Timedelta(hours=1)], "v": [1, 2]})
    pipe.run(readings(frame))
    later = pd.DataFrame({"at": [day, day + pd.Timedelta(hours=2)], "v": [1, 3]})
    pipe.run(readings(later))
    return {"tables": ctx.tables(pipe)}


@scenario
def arrow_column_hints(ctx: Context) -> Any:
    dlt = ctx.dlt
    columns = {
        "v": {"data_type": "text"},
        "Big Num": {"data_type": "decimal", "precision": 10, "scale": 3},
    }

    @dlt.resource(columns=columns, max_table_nesting=0)
    def hinted() -> Any:
        yield pa.table({"v": [1, 2], "Big Num": [1.5, 2.25], "st": [{"a": 1}, {"a": 2}]})

    pipe = ctx.pipeline("arrow_hints")
    pipe.run(hinted())
    return _described(ctx, pipe, "hinted")


@scenario
def arrow_names_that_collide(ctx: Context) -> Any:
    pipe = ctx.pipeline("arrow_collide")
    failed = ctx.attempt(lambda: pipe.run(pa.table({"A b": [1], "a_b": [2]}), table_name="c"))
    return {"failed": "error" in failed, "tables": ctx.tables(pipe)}


@scenario
def arrow_dlt_columns_switched_on(ctx: Context) -> Any:
    keys = (
        "NORMALIZE__PARQUET_NORMALIZER__ADD_DLT_LOAD_ID",
        "NORMALIZE__PARQUET_NORMALIZER__ADD_DLT_ID",
    )
    os.environ.update(dict.fromkeys(keys, "true"))
    try:
        pipe = ctx.pipeline("arrow_ids")
        pipe.run(pa.table({"a": [1, 2]}), table_name="t")
        described = ctx.tables(pipe)
        loaded = ctx.sql(
            pipe,
            "SELECT count(DISTINCT _dlt_id), count(DISTINCT _dlt_load_id) FROM arrow_ids_dataset.t",
        )
    finally:
        for key in keys:
            os.environ.pop(key, None)
    return {"tables": described, "distinct_ids": loaded, "types": _types(ctx, pipe, "t")}


@scenario
def arrow_steps_map_filter_limit(ctx: Context) -> Any:
    dlt = ctx.dlt

    @dlt.resource
    def pages() -> Any:
        for n in range(5):
            yield pa.table({"n": [n, n + 100]})

    res = pages()
    res.add_map(lambda table: table.append_column("double", pa.compute.multiply(table["n"], 2)))
    res.add_filter(lambda table: table["n"][0].as_py() != 1)
    res.add_limit(3)
    pipe = ctx.pipeline("arrow_steps")
    pipe.run(res)
    return ctx.tables(pipe)


@scenario
def arrow_contract_freezes_columns(ctx: Context) -> Any:
    dlt = ctx.dlt

    @dlt.resource(schema_contract={"columns": "freeze"})
    def frozen(table: Any) -> Any:
        yield table

    pipe = ctx.pipeline("arrow_freeze")
    pipe.run(frozen(pa.table({"id": [1]})))
    second = ctx.attempt(lambda: pipe.run(frozen(pa.table({"id": [2], "new": ["x"]}))))
    return {"second": "error" in second, "tables": ctx.tables(pipe)}


@scenario
def arrow_two_resources_one_table(ctx: Context) -> Any:
    dlt = ctx.dlt

    @dlt.resource(table_name="readings")
    def north() -> Any:
        yield pa.table({"id": [1, 2], "site": ["n", "n"]})

    @dlt.resource(table_name="readings")
    def south() -> Any:
        yield pa.table({"id": [3], "site": ["s"], "depth": [1.5]})

    @dlt.source
    def sites() -> Any:
        return north, south

    pipe = ctx.pipeline("arrow_two_resources")
    pipe.run(sites())
    return {"names": sorted(sites().resources.keys()), "tables": ctx.tables(pipe)}


@scenario
def arrow_and_dicts_in_one_resource(ctx: Context) -> Any:
    dlt = ctx.dlt

    @dlt.resource
    def readings() -> Any:
        yield {"id": 1, "val": "x"}
        yield pa.table({"id": [2, 3], "val": ["y", "z"]})

    pipe = ctx.pipeline("arrow_mixed")
    outcome = ctx.attempt(lambda: pipe.run(readings()) and None)
    return {"run": outcome, "tables": ctx.tables(pipe)}


@scenario
def arrow_scd2_and_merge_key(ctx: Context) -> Any:
    dlt = ctx.dlt
    scd2 = {"disposition": "merge", "strategy": "scd2"}

    @dlt.resource(write_disposition=scd2)
    def versions(table: Any) -> Any:
        yield table

    @dlt.resource(write_disposition="merge", merge_key="day")
    def daily(table: Any) -> Any:
        yield table

    # dlt needs _dlt_id on Arrow rows for scd2 (its row version); loadstone adds it anyway
    os.environ["NORMALIZE__PARQUET_NORMALIZER__ADD_DLT_ID"] = "true"
    try:
        return _scd2_runs(ctx, versions, daily)
    finally:
        os.environ.pop("NORMALIZE__PARQUET_NORMALIZER__ADD_DLT_ID", None)


def _scd2_runs(ctx: Context, versions: Any, daily: Any) -> Any:
    pipe = ctx.pipeline("arrow_scd2")
    pipe.run(
        [
            versions(pa.table({"id": [1, 2], "v": ["a", "b"]})),
            daily(pa.table({"day": [1, 1, 2], "n": [1, 2, 3]})),
        ]
    )
    pipe.run(
        [
            versions(pa.table({"id": [1, 2], "v": ["a", "B"]})),
            daily(pa.table({"day": [1], "n": [9]})),
        ]
    )
    active = ctx.sql(
        pipe,
        "SELECT id, v, _dlt_valid_to IS NULL FROM arrow_scd2_dataset.versions ORDER BY id, v",
    )
    return {"versions": active, "daily": ctx.tables(pipe)["daily"]}
