"""Compatibility scenarios written the way dlt users write pipelines: sources with several
resources, incremental cursors, merges of nested data, hints applied later, dataset reads,
state, and the errors programs catch. Each compares what a program sees and what is loaded.

They register in :data:`tests.compat.scenarios.SCENARIOS` like every other scenario.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from tests.compat.harness import Context
from tests.compat.scenarios import scenario


@scenario
def source_with_incremental_and_merge(ctx: Context) -> Any:
    """A source of two resources, one merged on its key with an incremental cursor."""
    dlt = ctx.dlt
    pages = [
        [{"id": 1, "ts": 1, "tags": ["a", "b"], "meta": {"x": 1}}, {"id": 2, "ts": 2, "tags": []}],
        [{"id": 2, "ts": 3, "tags": ["c"]}, {"id": 3, "ts": 4, "tags": ["d", "e"]}],
    ]

    def make_source(page: list[dict[str, Any]]) -> Any:
        @dlt.resource(primary_key="id", write_disposition="merge")
        def items(updated=dlt.sources.incremental("ts", initial_value=0)):
            yield from (row for row in page if row["ts"] > updated.last_value)

        @dlt.resource(write_disposition="replace")
        def users():
            yield [{"user": "ann", "n": len(page)}]

        @dlt.source
        def api():
            return items, users

        return api()

    runs = []
    for page in pages:
        pipeline = ctx.pipeline("src_inc_merge", dataset_name="d")
        info = pipeline.run(make_source(page))
        runs.append({"failed": info.has_failed_jobs, "packages": len(info.loads_ids)})
    cursor = pipeline.state["sources"]["api"]["resources"]["items"]["incremental"]["ts"]
    # the row hashes are each library's own: compared by count
    kept = {**cursor, "unique_hashes": len(cursor["unique_hashes"])}
    return {"runs": runs, "tables": ctx.tables(pipeline), "cursor": kept}


@scenario
def with_resources_and_apply_hints(ctx: Context) -> Any:
    """``with_resources`` picks resources; ``apply_hints`` changes table name and columns."""
    dlt = ctx.dlt

    @dlt.source
    def shop():
        @dlt.resource
        def orders():
            yield [{"id": 1, "amount": "12.5", "when": "2024-01-02T03:04:05Z"}]

        @dlt.resource
        def refunds():
            yield [{"id": 9}]

        return orders, refunds

    source = shop().with_resources("orders")
    source.orders.apply_hints(
        table_name="sales",
        columns={"amount": {"data_type": "decimal", "precision": 10, "scale": 2}},
    )
    pipeline = ctx.pipeline("with_res", dataset_name="d")
    pipeline.run(source)
    schema = pipeline.default_schema
    return {
        "tables": ctx.tables(pipeline),
        "types": {
            name: {c: col.get("data_type") for c, col in table["columns"].items()}
            for name, table in schema.tables.items()
            if not name.startswith("_dlt")
        },
        "selected": sorted(source.selected_resources.keys()),
    }


@scenario
def python_types_round_trip(ctx: Context) -> Any:
    """Values of many Python types, nested at several levels, and how they load."""
    rows = [
        {
            "id": 1,
            "price": Decimal("1.10"),
            "day": dt.date(2024, 5, 6),
            "at": dt.datetime(2024, 5, 6, 7, 8, 9, tzinfo=dt.timezone.utc),
            "naive": dt.datetime(2024, 5, 6, 7, 8, 9),
            "flag": True,
            "ratio": 0.25,
            "blob": b"\x00\x01",
            "nested": {"deep": {"deeper": {"v": 1}}, "list": [1, 2, 3]},
            "matrix": [[1, 2], [3]],
        }
    ]
    pipeline = ctx.pipeline("py_types", dataset_name="d")
    pipeline.run(rows, table_name="things")
    cols = pipeline.default_schema.get_table_columns("things")
    return {
        "tables": ctx.tables(pipeline),
        "types": {name: [c.get("data_type"), c.get("nullable")] for name, c in cols.items()},
        "tables_in_schema": sorted(pipeline.default_schema.data_table_names()),
    }


@scenario
def max_table_nesting_and_columns(ctx: Context) -> Any:
    """``max_table_nesting`` keeps deeper data as JSON; a column hint of type json likewise."""
    dlt = ctx.dlt

    @dlt.resource(max_table_nesting=1, columns={"raw": {"data_type": "json"}})
    def events():
        yield {"id": 1, "a": {"b": {"c": [1, 2]}}, "items": [{"k": [1]}], "raw": {"x": [1]}}

    pipeline = ctx.pipeline("nesting", dataset_name="d")
    pipeline.run(events())
    return {"tables": ctx.tables(pipeline)}


@scenario
def dataset_reads(ctx: Context) -> Any:
    """Reading loaded data back: sql_client queries and fetches."""
    pipeline = ctx.pipeline("reads", dataset_name="d")
    pipeline.run([{"id": i, "v": i * 2} for i in range(5)], table_name="nums")
    with pipeline.sql_client() as client:
        rows = client.execute_sql("SELECT id, v FROM nums ORDER BY id")
        with client.execute_query("SELECT count(*) FROM nums") as cursor:
            count = cursor.fetchall()
        name = client.make_qualified_table_name("nums")
    return {"rows": [list(r) for r in rows], "count": [list(r) for r in count], "name": name}


@scenario
def state_in_resources(ctx: Context) -> Any:
    """A resource keeps its own state across runs through ``dlt.current.resource_state()``."""
    dlt = ctx.dlt
    seen = []
    for _ in range(2):

        @dlt.resource
        def counter():
            state = dlt.current.resource_state()
            state["runs"] = state.get("runs", 0) + 1
            seen.append(state["runs"])
            yield {"run": state["runs"]}

        pipeline = ctx.pipeline("res_state", dataset_name="d")
        pipeline.run(counter())
    return {"seen": seen, "tables": ctx.tables(pipeline)}


@scenario
def add_map_and_filter(ctx: Context) -> Any:
    """``add_map`` and ``add_filter`` steps change items before they are written."""
    dlt = ctx.dlt

    @dlt.resource
    def people():
        yield from [
            {"name": "ann", "age": 30},
            {"name": "bo", "age": 12},
            {"name": "cy", "age": 50},
        ]

    res = people().add_filter(lambda p: p["age"] >= 18).add_map(lambda p: {**p, "adult": True})
    pipeline = ctx.pipeline("map_filter", dataset_name="d")
    pipeline.run(res)
    return {"tables": ctx.tables(pipeline)}


@scenario
def table_name_from_items(ctx: Context) -> Any:
    """A table name function of the item routes rows to several tables."""
    dlt = ctx.dlt

    @dlt.resource(table_name=lambda e: e["type"] + "_event")
    def events():
        yield [{"type": "push", "n": 1}, {"type": "Pull Request", "n": 2}, {"type": "push", "n": 3}]

    pipeline = ctx.pipeline("dyn_table", dataset_name="d")
    pipeline.run(events())
    return {"tables": ctx.tables(pipeline)}


@scenario
def schema_evolution_new_columns(ctx: Context) -> Any:
    """A later run adds columns and a variant of a changed type."""
    pipeline = ctx.pipeline("evolve", dataset_name="d")
    pipeline.run([{"id": 1, "v": 1}], table_name="t")
    pipeline.run([{"id": 2, "v": "text", "w": 2.5}], table_name="t")
    pipeline.run([{"id": 3, "v": 3, "x": None}], table_name="t")
    cols = pipeline.default_schema.get_table_columns("t")
    return {
        "tables": ctx.tables(pipeline),
        "columns": {k: v.get("data_type") for k, v in cols.items()},
    }


@scenario
def merge_dedup_sort_and_hard_delete(ctx: Context) -> Any:
    """Merge with dedup_sort and a hard_delete column."""
    dlt = ctx.dlt

    @dlt.resource(
        primary_key="id",
        write_disposition="merge",
        columns={"seq": {"dedup_sort": "desc"}, "deleted": {"hard_delete": True}},
    )
    def rows(batch):
        yield batch

    pipeline = ctx.pipeline("dedup", dataset_name="d")
    pipeline.run(
        rows(
            [
                {"id": 1, "seq": 1, "v": "a"},
                {"id": 1, "seq": 2, "v": "b"},
                {"id": 2, "seq": 1, "v": "c"},
            ]
        )
    )
    pipeline.run(
        rows([{"id": 2, "seq": 2, "v": "c", "deleted": True}, {"id": 3, "seq": 1, "v": "d"}])
    )
    return {"tables": ctx.tables(pipeline)}


@scenario
def transformer_pipe(ctx: Context) -> Any:
    """A transformer fed by a resource with ``|``, both loaded, the parent deselected."""
    dlt = ctx.dlt

    @dlt.resource(selected=False)
    def ids():
        yield [1, 2, 3]

    @dlt.transformer(data_from=ids)
    def details(batch):
        for i in batch:
            yield {"id": i, "square": i * i}

    @dlt.source
    def s():
        return ids, details

    pipeline = ctx.pipeline("xform", dataset_name="d")
    pipeline.run(s())
    return {"tables": ctx.tables(pipeline)}


@scenario
def refresh_drop_sources(ctx: Context) -> Any:
    """``refresh="drop_sources"`` drops the tables and state of the sources run."""
    dlt = ctx.dlt

    @dlt.resource(write_disposition="append")
    def a(n=1):
        yield [{"n": n}]

    pipeline = ctx.pipeline("refresh", dataset_name="d")
    pipeline.run(a(1))
    pipeline.run(a(2))
    pipeline.run(a(3), refresh="drop_sources")
    return {"tables": ctx.tables(pipeline)}
