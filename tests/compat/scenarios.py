"""The compatibility scenarios: small dlt-style programs, each returning what it observed.

Every function takes a :class:`~tests.compat.harness.Context` whose ``dlt`` is the library
under test. The data are made up for these tests. Outcomes are compared whole, so a scenario
returns only what a user can observe and what must not differ: tables and rows, errors (class,
step, cause), state a user reads.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from tests.compat.harness import Context, decode_state

SCENARIOS: dict[str, Callable[[Context], Any]] = {}


def scenario(func: Callable[[Context], Any]) -> Callable[[Context], Any]:
    SCENARIOS[func.__name__] = func
    return func


ORDERS = [
    {"id": 1, "updated": 10, "customer": {"name": "ann", "tier": 2}, "lines": [{"sku": "a"}]},
    {"id": 2, "updated": 10, "customer": {"name": "bo", "tier": 1}, "lines": []},
    {"id": 3, "updated": 11, "customer": {"name": "cy", "tier": 1}, "lines": [{"sku": "b"}]},
    {"id": 4, "updated": 12, "customer": {"name": "di", "tier": 3}, "lines": [{"sku": "c"}]},
]


def _state(pipeline: Any) -> Any:
    """The sources' state without the opaque row hashes (only how many there are)."""

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {
                k: (len(v) if k == "unique_hashes" else strip(v))
                for k, v in node.items()
                if k != "unique_hashes" or v is not None
            }
        return node

    return strip(pipeline.state.get("sources") or {})


# -- nothing silently ignored -------------------------------------------------------------------
@scenario
def unknown_keywords(ctx: Context) -> Any:
    dlt = ctx.dlt
    pipe = ctx.pipeline("kw")
    return {
        "pipeline": ctx.attempt(lambda: dlt.pipeline("kw2", destination="duckdb", no_such=1)),
        "resource": ctx.attempt(lambda: dlt.resource([{"a": 1}], name="r", no_such=1)),
        "source": ctx.attempt(lambda: dlt.source(lambda: [], no_such=1)),
        "run": ctx.attempt(lambda: pipe.run([{"a": 1}], table_name="t", no_such=1)),
        "tables": ctx.tables(pipe),
    }


@scenario
def merge_key_not_in_data(ctx: Context) -> Any:
    pipe = ctx.pipeline("mk")
    first = ctx.attempt(
        lambda: (
            pipe.run([{"a": 1}], table_name="m", write_disposition="merge", primary_key="no_such")
            and None
        )
    )
    return {"first": first, "tables": ctx.tables(pipe)}


@scenario
def table_name_setter(ctx: Context) -> Any:
    res = ctx.dlt.resource([{"a": 1}], name="r")
    res.table_name = "other"
    pipe = ctx.pipeline("tn")
    pipe.run(res)
    return ctx.tables(pipe)


@scenario
def max_table_nesting_on_instance(ctx: Context) -> Any:
    res = ctx.dlt.resource(ORDERS, name="orders")
    res.max_table_nesting = 0
    pipe = ctx.pipeline("mtn")
    pipe.run(res)
    return {"nesting": res.max_table_nesting, "tables": ctx.tables(pipe)}


@scenario
def max_table_nesting_one(ctx: Context) -> Any:
    pipe = ctx.pipeline("mtn1")
    pipe.run(ctx.dlt.resource(ORDERS, name="orders", max_table_nesting=1))
    return ctx.tables(pipe)


# -- incremental -------------------------------------------------------------------------------
def _incremental_resource(dlt: Any, **incremental: Any) -> Any:
    @dlt.resource(name="orders", primary_key="id")
    def orders(rows: Any = None, updated: Any = dlt.sources.incremental("updated", **incremental)):
        yield from rows

    return orders


@scenario
def incremental_two_runs(ctx: Context) -> Any:
    orders = _incremental_resource(ctx.dlt, initial_value=10)
    pipe = ctx.pipeline("inc")
    pipe.run(orders(ORDERS[:3]))
    after_first = ctx.tables(pipe)["orders"]["rows"]
    more = [*ORDERS, {"id": 5, "updated": 12, "customer": None, "lines": []}]
    pipe.run(orders(more))
    return {"first": after_first, "tables": ctx.tables(pipe), "state": _state(pipe)}


@scenario
def incremental_initial_value_filters(ctx: Context) -> Any:
    pipe = ctx.pipeline("inc_init")
    pipe.run(_incremental_resource(ctx.dlt, initial_value=11)(ORDERS))
    return {"tables": ctx.tables(pipe), "state": _state(pipe)}


@scenario
def incremental_end_value_backfill(ctx: Context) -> Any:
    pipe = ctx.pipeline("inc_end")
    pipe.run(_incremental_resource(ctx.dlt, initial_value=10, end_value=12)(ORDERS))
    return {"tables": ctx.tables(pipe), "state": _state(pipe)}


@scenario
def incremental_min_func(ctx: Context) -> Any:
    pipe = ctx.pipeline("inc_min")
    pipe.run(_incremental_resource(ctx.dlt, initial_value=11, last_value_func=min)(ORDERS))
    return {"tables": ctx.tables(pipe), "state": _state(pipe)}


@scenario
def incremental_row_order_stops(ctx: Context) -> Any:
    dlt = ctx.dlt
    read: dict[str, list[int]] = {"desc": [], "asc": []}

    @dlt.resource(name="desc")
    def newest_first(
        cursor: Any = dlt.sources.incremental("updated", initial_value=11, row_order="desc"),
    ):
        for row in sorted(ORDERS, key=lambda r: -r["id"]):
            read["desc"].append(row["id"])
            yield {"id": row["id"], "updated": row["updated"]}

    @dlt.resource(name="asc")
    def oldest_first(
        cursor: Any = dlt.sources.incremental(
            "updated", initial_value=0, end_value=11, row_order="asc"
        ),
    ):
        for row in ORDERS:
            read["asc"].append(row["id"])
            yield {"id": row["id"], "updated": row["updated"]}

    pipe = ctx.pipeline("inc_order")
    pipe.run([newest_first(), oldest_first()])
    return {"read": read, "tables": ctx.tables(pipe)}


@scenario
def incremental_cursor_missing(ctx: Context) -> Any:
    dlt = ctx.dlt
    rows = [{"id": 1, "ts": 5}, {"id": 2}, {"id": 3, "ts": None}]
    out: dict[str, Any] = {}
    for mode in ("raise", "include", "exclude"):

        @dlt.resource(name=f"m_{mode}")
        def missing(cursor: Any = dlt.sources.incremental("ts", on_cursor_value_missing=mode)):
            yield from rows

        pipe = ctx.pipeline(f"inc_missing_{mode}")
        out[mode] = {
            "run": ctx.attempt(lambda pipe=pipe, missing=missing: pipe.run(missing()) and None),
            "tables": ctx.tables(pipe),
        }
    return out


@scenario
def incremental_apply_hints_nested_path(ctx: Context) -> Any:
    res = ctx.dlt.resource(ORDERS, name="orders")
    res.apply_hints(incremental=ctx.dlt.sources.incremental("customer.tier", initial_value=2))
    pipe = ctx.pipeline("inc_hint")
    pipe.run(res)
    return {"tables": ctx.tables(pipe), "state": _state(pipe)}


@scenario
def incremental_last_value_seen_by_function(ctx: Context) -> Any:
    dlt = ctx.dlt
    seen: list[Any] = []

    @dlt.resource(name="pages", primary_key="id")
    def pages(cursor: Any = dlt.sources.incremental("updated", initial_value=0)):
        seen.append(cursor.last_value)
        yield [row for row in ORDERS if row["updated"] >= cursor.last_value]

    pipe = ctx.pipeline("inc_seen")
    pipe.run(pages())
    pipe.run(pages())
    return {"seen": seen, "rows": len(ctx.tables(pipe)["pages"]["rows"])}


# -- transformers, async, maps ----------------------------------------------------------------
@scenario
def transformer_pipe(ctx: Context) -> Any:
    dlt = ctx.dlt

    @dlt.resource
    def customers():
        yield {"id": 1}
        yield {"id": 2}

    @dlt.resource
    def customer_pages():
        yield [{"id": 1}, {"id": 2}]

    @dlt.transformer
    def details(customer: Any):
        yield {"customer_id": customer["id"], "detail": f"d{customer['id']}"}

    @dlt.transformer(data_from=customer_pages, table_name="pairs")
    def pairs(page: Any, factor: int = 10):
        for customer in page:
            yield {"value": customer["id"] * factor}

    pipe = ctx.pipeline("tr")
    pipe.run([customers, customers | details, pairs(factor=3)])
    return ctx.tables(pipe)


@scenario
def transformer_in_source(ctx: Context) -> Any:
    dlt = ctx.dlt

    @dlt.source
    def shop():
        @dlt.resource(selected=False)
        def ids():
            yield from [1, 2, 3]

        @dlt.transformer
        def item(i: int):
            return {"id": i, "square": i * i}

        return ids, ids | item

    pipe = ctx.pipeline("tr_src")
    pipe.run(shop())
    return ctx.tables(pipe)


@scenario
def async_generator_resource(ctx: Context) -> Any:
    dlt = ctx.dlt

    @dlt.resource
    async def ticks():
        for i in range(3):
            yield {"tick": i}

    pipe = ctx.pipeline("asy")
    pipe.run(ticks())
    return ctx.tables(pipe)


@scenario
def maps_and_filters(ctx: Context) -> Any:
    dlt = ctx.dlt
    res = dlt.resource([{"n": i} for i in range(6)], name="numbers")
    res.add_filter(lambda row: row["n"] % 2 == 0)
    res.add_map(lambda row: {**row, "double": row["n"] * 2})
    res.add_yield_map(lambda row: ({"n": row["n"], "copy": c} for c in range(2)))
    pipe = ctx.pipeline("maps")
    pipe.run(res)
    return ctx.tables(pipe)


@scenario
def add_limit_counts_pages(ctx: Context) -> Any:
    dlt = ctx.dlt

    @dlt.resource
    def paged():
        for page in range(10):
            yield [{"page": page, "i": i} for i in range(3)]

    pipe = ctx.pipeline("lim")
    pipe.run(paged().add_limit(2))
    return ctx.tables(pipe)


# -- marks and table schema --------------------------------------------------------------------
@scenario
def mark_with_table_name(ctx: Context) -> Any:
    dlt = ctx.dlt

    @dlt.resource
    def events():
        yield dlt.mark.with_table_name({"id": 1, "kind": "push"}, "pushes")
        yield dlt.mark.with_table_name([{"id": 2, "kind": "pull"}], "pulls")
        yield {"id": 3, "kind": "other"}

    pipe = ctx.pipeline("mark_tn")
    pipe.run(events())
    return ctx.tables(pipe)


@scenario
def mark_with_hints(ctx: Context) -> Any:
    dlt = ctx.dlt

    @dlt.resource
    def users():
        yield dlt.mark.with_hints(
            {"id": 1, "name": "a"},
            dlt.mark.make_hints(write_disposition="merge", primary_key="id"),
        )
        yield {"id": 1, "name": "b"}

    pipe = ctx.pipeline("mark_h")
    pipe.run(users())
    pipe.run(users())
    return {
        "tables": ctx.tables(pipe),
        "hints": dlt.mark.make_hints(primary_key="id", write_disposition="merge"),
    }


@scenario
def materialize_empty_table(ctx: Context) -> Any:
    dlt = ctx.dlt

    @dlt.resource(columns={"id": {"data_type": "bigint"}, "note": {"data_type": "text"}})
    def empty():
        yield dlt.mark.materialize_table_schema()

    pipe = ctx.pipeline("mat")
    pipe.run(empty())
    return ctx.tables(pipe)


@scenario
def compute_table_schema(ctx: Context) -> Any:
    dlt = ctx.dlt
    plain = dlt.resource([{"a": 1}], name="plain")
    keyed = dlt.resource(
        [{"a": 1}], name="keyed", table_name="keyed_t", write_disposition="merge", primary_key="a"
    )
    nested = dlt.resource([{"a": 1}], name="nested", max_table_nesting=0)
    return {r.name: r.compute_table_schema() for r in (plain, keyed, nested)}


# -- injection, attach, errors, merge ------------------------------------------------------------
@scenario
def secrets_injection(ctx: Context) -> Any:
    dlt = ctx.dlt

    @dlt.source
    def api(api_key: str = dlt.secrets.value, page_size: int = dlt.config.value):
        return dlt.resource([{"key": api_key, "size": page_size}], name="settings")

    os.environ["SOURCES__API__API_KEY"] = "k-123"
    os.environ["SOURCES__PAGE_SIZE"] = "50"
    try:
        pipe = ctx.pipeline("inj")
        pipe.run(api())
        passed = list(api(api_key="given", page_size=1).resources["settings"])
        del os.environ["SOURCES__API__API_KEY"]
        missing = ctx.attempt(lambda: api())
    finally:
        os.environ.pop("SOURCES__API__API_KEY", None)
        os.environ.pop("SOURCES__PAGE_SIZE", None)
    return {"tables": ctx.tables(pipe), "passed": passed, "missing": missing}


@scenario
def attach_existing(ctx: Context) -> Any:
    pipe = ctx.pipeline("att", dataset_name="att_data")
    pipe.run([{"a": 1}], table_name="t")
    attached = ctx.dlt.attach("att", pipelines_dir=str(ctx.workdir / "pipelines"))
    return {
        "name": attached.pipeline_name,
        "dataset": attached.dataset_name,
        "schemas": attached.schema_names,
        "missing": ctx.attempt(
            lambda: ctx.dlt.attach("never_ran", pipelines_dir=str(ctx.workdir / "pipelines"))
        ),
    }


@scenario
def step_failed_in_extract(ctx: Context) -> Any:
    dlt = ctx.dlt

    @dlt.resource
    def broken():
        yield {"a": 1}
        raise ValueError("source went away")

    pipe = ctx.pipeline("fail")
    try:
        pipe.run(broken())
        outcome: dict[str, Any] = {"raised": None}
    except Exception as exc:  # the outcome is what we compare
        cause = getattr(exc, "exception", None)
        outcome = {
            "raised": type(exc).__name__,
            "step": getattr(exc, "step", None),
            "cause": type(cause).__name__ if cause is not None else None,
            "message_has_cause": "source went away" in str(exc),
            "has_load_id": getattr(exc, "load_id", None) is not None,
        }
    return {"outcome": outcome, "tables": ctx.tables(pipe)}


@scenario
def insert_only_merge(ctx: Context) -> Any:
    pipe = ctx.pipeline("ins")
    wd = {"disposition": "merge", "strategy": "insert-only"}
    pipe.run(
        [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}],
        table_name="t",
        write_disposition=wd,
        primary_key="id",
    )
    pipe.run(
        [{"id": 2, "v": "changed"}, {"id": 3, "v": "c"}],
        table_name="t",
        write_disposition=wd,
        primary_key="id",
    )
    return ctx.tables(pipe)


@scenario
def scd2_default_columns(ctx: Context) -> Any:
    pipe = ctx.pipeline("scd0")
    wd = {"disposition": "merge", "strategy": "scd2"}
    pipe.run([{"id": 1, "v": "a"}], table_name="dim", write_disposition=wd, primary_key="id")
    pipe.run([{"id": 1, "v": "b"}], table_name="dim", write_disposition=wd, primary_key="id")
    return ctx.sql(
        pipe,
        "SELECT id, v, _dlt_valid_to IS NULL FROM scd0_dataset.dim ORDER BY v",
    )


@scenario
def scd2_options(ctx: Context) -> Any:
    pipe = ctx.pipeline("scd")
    wd = {
        "disposition": "merge",
        "strategy": "scd2",
        "validity_column_names": ["valid_from", "valid_until"],
        "boundary_timestamp": "2024-01-01T00:00:00+00:00",
        "active_record_timestamp": "9999-12-31T00:00:00+00:00",
        "row_version_column_name": "row_hash",
    }
    res = ctx.dlt.resource(
        [{"id": 1, "v": "a", "row_hash": "1a"}, {"id": 2, "v": "b", "row_hash": "2b"}],
        name="dim",
        write_disposition=wd,
        primary_key="id",
    )
    pipe.run(res)
    wd2 = {**wd, "boundary_timestamp": "2024-06-01T00:00:00+00:00"}
    res2 = ctx.dlt.resource(
        [{"id": 1, "v": "a2", "row_hash": "1a2"}, {"id": 2, "v": "b", "row_hash": "2b"}],
        name="dim",
        write_disposition=wd2,
        primary_key="id",
    )
    pipe.run(res2)
    return ctx.tables(pipe)


# -- refresh -----------------------------------------------------------------------------------
def _refresh_source(dlt: Any) -> Any:
    @dlt.source(name="shop")
    def shop():
        @dlt.resource(name="orders")
        def orders(cursor: Any = dlt.sources.incremental("updated")):
            yield ORDERS

        @dlt.resource(name="notes")
        def notes():
            yield [{"note": "x"}]

        return orders, notes

    return shop


@scenario
def refresh_on_run(ctx: Context) -> Any:
    shop = _refresh_source(ctx.dlt)
    pipe = ctx.pipeline("rf")
    pipe.run(shop())
    pipe.run(shop())
    out: dict[str, Any] = {"before": ctx.tables(pipe)}
    for mode in ("drop_resources", "drop_data", "drop_sources"):
        pipe.run(shop().with_resources("orders"), refresh=mode)
        out[mode] = {"tables": ctx.tables(pipe), "state": _state(pipe)}
    return out


@scenario
def refresh_on_pipeline(ctx: Context) -> Any:
    shop = _refresh_source(ctx.dlt)
    ctx.pipeline("rfp").run(shop())
    pipe = ctx.pipeline("rfp", refresh="drop_data")
    pipe.run(shop())
    pipe.run(shop())
    return ctx.tables(pipe)


# -- bookkeeping -------------------------------------------------------------------------------
@scenario
def default_pipeline_name(ctx: Context) -> Any:
    return ctx.run_script("print(dlt.pipeline(destination='duckdb').pipeline_name)\n")


@scenario
def schema_bookkeeping(ctx: Context) -> Any:
    pipe = ctx.pipeline("book")
    pipe.run(ctx.dlt.resource(ORDERS, name="orders"))
    tables = pipe.default_schema.to_dict()["tables"]
    stored = ctx.sql(
        pipe, f"SELECT schema FROM {pipe.dataset_name}._dlt_version ORDER BY inserted_at"
    )
    import json

    stored_tables = json.loads(stored[-1][0])["tables"]
    return {
        "x-normalizer": {name: t.get("x-normalizer") for name, t in sorted(tables.items())},
        "state_table_in_schema": "_dlt_pipeline_state" in tables,
        "state_table_in_stored_schema": "_dlt_pipeline_state" in stored_tables,
    }


@scenario
def pipeline_state_row(ctx: Context) -> Any:
    pipe = ctx.pipeline("strow")
    pipe.run([{"a": 1}], table_name="t")
    row = ctx.sql(
        pipe,
        "SELECT version, engine_version, pipeline_name, state FROM "
        f"{pipe.dataset_name}._dlt_pipeline_state",
    )[0]
    state = decode_state(row[3])
    return {
        "version": row[0],
        "engine_version": row[1],
        "pipeline_name": row[2],
        "state_keys": sorted(state),
        "destination_type": state.get("destination_type"),
        "destination_name": state.get("destination_name"),
        "state_version": state.get("_state_version"),
    }


@scenario
def dlt_config_folder(ctx: Context) -> Any:
    (ctx.workdir / ".dlt").mkdir(exist_ok=True)
    (ctx.workdir / ".dlt" / "config.toml").write_text(
        '[sources.cfg]\ngreeting = "from .dlt"\n', encoding="utf-8"
    )
    return ctx.run_script(
        "@dlt.source(name='cfg')\n"
        "def cfg(greeting=dlt.config.value):\n"
        "    return dlt.resource([{'greeting': greeting}], name='hello')\n"
        "print(list(cfg().resources['hello']))\n"
    )


@scenario
def sql_client_queries(ctx: Context) -> Any:
    pipe = ctx.pipeline("sqlc")
    pipe.run([{"a": i, "b": str(i)} for i in range(5)], table_name="t")
    with pipe.sql_client() as client:
        params = client.execute_sql("SELECT a FROM t WHERE a > %s ORDER BY a", 2)
        qualified = client.make_qualified_table_name("t")
        counted = client.execute_sql(f"SELECT count(*) FROM {qualified}")
        with client.execute_query("SELECT a, b FROM t ORDER BY a") as cursor:
            fetched = cursor.fetchmany(2)
    return {"params": params, "qualified": qualified, "fetched": fetched, "counted": counted}


@scenario
def dataset_queries(ctx: Context) -> Any:
    pipe = ctx.pipeline("dsq")
    people = [{"id": i, "name": f"n{i}", "score": i * 1.5, "kids": [i, i + 1]} for i in range(5)]
    pipe.run(people, table_name="people")
    ds = pipe.dataset()
    rel = ds.people
    out: dict[str, Any] = {
        "columns": rel.columns,
        "where_gt": rel.where("id", "gt", 2).select("id").order_by("id").fetchall(),
        "where_in": rel.where("id", "in", [1, 3]).select("id").order_by("id").fetchall(),
        "where_chain": rel.where("id", "gte", 3).where("id", "lt", 4).select("id").fetchall(),
        "head": len(rel.head().fetchall()),
        "head_2": len(rel.head(2).fetchall()),
        "max": rel.select("score").max().fetchscalar(),
        "min": rel.select("id").min().fetchscalar(),
        "columns_list": rel[["id", "name"]].order_by("id").fetchmany(2),
        "order_desc": rel.order_by("id", "desc").select("id").fetchall(),
        "iter_fetch": [len(chunk) for chunk in rel.iter_fetch(chunk_size=2)],
        "sql_unqualified": ds("SELECT count(*) FROM people").fetchall(),
        "join_columns": rel.join("people__kids").columns,
        "join_rows": len(rel.join("people__kids").fetchall()),
    }
    with ds as opened:
        out["with"] = opened.people.select("id").order_by("id").fetchmany(2)
    with pipe.sql_client() as client:
        with client.execute_query("SELECT id FROM people ORDER BY id") as cursor:
            out["cursor_iter_fetch"] = [len(chunk) for chunk in cursor.iter_fetch(2)]
    return out


@scenario
def incremental_repeated_runs_load_once(ctx: Context) -> Any:
    orders = _incremental_resource(ctx.dlt, initial_value=10)
    pipe = ctx.pipeline("inc_rep")
    counts = []
    for _ in range(3):
        pipe.run(orders(ORDERS))
        counts.append(len(ctx.tables(pipe)["orders"]["rows"]))
    return {"counts": counts, "state": _state(pipe)}


@scenario
def colliding_keys_holding_lists(ctx: Context) -> Any:
    row = {
        "id": 1,
        "a b": [1, 2],
        "a_b": [3],
        "A-B": [{"x": 1}],
        "c d": {"e": 1},
        "c_d": {"e": 2},
        "Tags": ["t"],
        "tags": ["u"],
    }
    pipe = ctx.pipeline("coll")
    pipe.run([row], table_name="t")
    return ctx.tables(pipe)


@scenario
def incremental_datetime_cursor(ctx: Context) -> Any:
    import datetime as dt

    dlt = ctx.dlt
    day = dt.datetime(2024, 5, 1, tzinfo=dt.timezone.utc)
    events = [{"id": i, "at": day + dt.timedelta(hours=i)} for i in range(4)]

    @dlt.resource(primary_key="id")
    def timeline(rows: Any = None, at: Any = dlt.sources.incremental("at", initial_value=day)):
        yield from rows

    pipe = ctx.pipeline("inc_dt")
    pipe.run(timeline(events[:2]))
    pipe.run(timeline(events))
    pipe.run(timeline(events))
    return ctx.tables(pipe)


@scenario
def incremental_without_dedup(ctx: Context) -> Any:
    dlt = ctx.dlt

    @dlt.resource
    def same(cursor: Any = dlt.sources.incremental("v", primary_key=())):
        yield [{"v": 1, "n": "a"}, {"v": 2, "n": "b"}]

    pipe = ctx.pipeline("inc_nodedup")
    pipe.run(same())
    pipe.run(same())
    return {"tables": ctx.tables(pipe), "state": _state(pipe)}


@scenario
def nested_hints(ctx: Context) -> Any:
    """Hints for a nested table (its columns)."""

    def run() -> Any:
        res = ctx.dlt.resource(
            ORDERS,
            name="orders",
            nested_hints={
                "lines": ctx.dlt.mark.make_nested_hints(
                    columns={"sku": {"data_type": "text", "nullable": False}}
                )
            },
        )
        pipe = ctx.pipeline("nh")
        pipe.run(res)
        sku = pipe.default_schema.to_dict()["tables"]["orders__lines"]["columns"]["sku"]
        return {"tables": ctx.tables(pipe), "sku": sku}

    return ctx.attempt(run)


@scenario
def resource_state_kept(ctx: Context) -> Any:
    dlt = ctx.dlt

    @dlt.source(name="counter_src")
    def counter_src():
        @dlt.resource(name="counter")
        def counter():
            state = dlt.current.resource_state()
            start = state.setdefault("next", 0)
            yield [{"n": n} for n in range(start, start + 2)]
            state["next"] = start + 2

        return counter

    pipe = ctx.pipeline("rstate")
    pipe.run(counter_src())
    pipe.run(counter_src())
    return {"tables": ctx.tables(pipe), "state": _state(pipe)}


@scenario
def hints_changed_between_runs(ctx: Context) -> Any:
    res = ctx.dlt.resource([{"id": 1, "v": "a"}], name="items", primary_key="id")
    pipe = ctx.pipeline("hints2")
    pipe.run(res)
    res2 = ctx.dlt.resource([{"id": 1, "v": "b"}, {"id": 2, "v": "c"}], name="items")
    res2.apply_hints(write_disposition="merge", primary_key="id")
    pipe.run(res2)
    res3 = ctx.dlt.resource([{"id": 9, "v": "z"}], name="items")
    res3.write_disposition = "replace"
    pipe.run(res3)
    return {"after_merge_then_replace": ctx.tables(pipe)}


# Arrow and pandas scenarios, and the rest of dlt's public API, live in their own modules and
# register here.
from tests.compat import (  # noqa: E402, F401  # they register
    arrow_scenarios,
    contract_scenarios,
    hint_argument_scenarios,
    hint_scenarios,
    incremental_scenarios,
    load_info_scenarios,
    merge_scenarios,
    nested_hint_scenarios,
    not_null_scenarios,
    parity_scenarios,
    pipeline_surface_scenarios,
    refused_scenarios,
    resource_step_scenarios,
    source_scenarios,
    usage_scenarios,
)
