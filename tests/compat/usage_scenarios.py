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


@scenario
def sql_database_from_sqlite(ctx: Context) -> Any:
    """``sql_database`` over a SQLite file: chosen tables, an incremental cursor, two runs."""
    import sqlite3

    path = ctx.workdir / "shop.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, total NUMERIC(10,2), at TEXT)")
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        conn.executemany("INSERT INTO orders VALUES (?, ?, ?)", [(1, 9.5, "a"), (2, 3, "b")])
        conn.execute("INSERT INTO notes VALUES (1, 'hi')")
    from importlib import import_module

    sql = import_module(f"{ctx.dlt.__name__}.sources.sql_database")
    pipeline = ctx.pipeline("sqlite_src", dataset_name="d")
    source = sql.sql_database(f"sqlite:///{path}", table_names=["orders"])
    source.orders.apply_hints(incremental=ctx.dlt.sources.incremental("id"))
    first = pipeline.run(source)
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO orders VALUES (3, 1.25, 'c')")
    source = sql.sql_database(f"sqlite:///{path}", table_names=["orders"])
    source.orders.apply_hints(incremental=ctx.dlt.sources.incremental("id"))
    pipeline.run(source)
    cols = pipeline.default_schema.get_table_columns("orders")
    return {
        "first_failed": first.has_failed_jobs,
        "tables": ctx.tables(pipeline),
        "types": {
            k: [v.get("data_type"), v.get("nullable"), v.get("primary_key")]
            for k, v in cols.items()
        },
    }


@scenario
def filesystem_csv_and_jsonl(ctx: Context) -> Any:
    """``filesystem(...) | read_csv()`` and ``| read_jsonl()`` over a local folder."""
    from importlib import import_module

    data = ctx.workdir / "data"
    data.mkdir()
    (data / "a.csv").write_text("id,name\n1,ann\n2,bo\n")
    (data / "b.csv").write_text("id,name\n3,cy\n")
    (data / "c.jsonl").write_text('{"id": 1, "tags": ["x"]}\n{"id": 2, "tags": []}\n')
    fs = import_module(f"{ctx.dlt.__name__}.sources.filesystem")
    pipeline = ctx.pipeline("fs_src", dataset_name="d")
    csvs = fs.filesystem(bucket_url=str(data), file_glob="*.csv") | fs.read_csv()
    jsonl = fs.filesystem(bucket_url=str(data), file_glob="*.jsonl") | fs.read_jsonl()
    pipeline.run(csvs.with_name("people"))
    pipeline.run(jsonl.with_name("tagged"))
    return {"tables": ctx.tables(pipeline)}


@scenario
def contract_freeze_violation(ctx: Context) -> Any:
    """A frozen columns contract: a new column fails the run; what the program catches."""
    dlt = ctx.dlt

    @dlt.resource(schema_contract={"columns": "freeze"})
    def items(rows):
        yield rows

    pipeline = ctx.pipeline("freeze", dataset_name="d")
    pipeline.run(items([{"id": 1}]))
    outcome = ctx.attempt(lambda: pipeline.run(items([{"id": 2, "extra": "x"}])))
    return {"outcome": outcome, "tables": ctx.tables(pipeline)}


@scenario
def marks_and_hints_on_items(ctx: Context) -> Any:
    """``dlt.mark.with_table_name`` and ``with_hints`` route and shape items of one resource."""
    dlt = ctx.dlt

    @dlt.resource
    def mixed():
        yield dlt.mark.with_table_name({"id": 1, "kind": "a"}, "alpha")
        yield dlt.mark.with_hints(
            {"id": 2, "score": "7"},
            dlt.mark.make_hints(table_name="beta", columns={"score": {"data_type": "bigint"}}),
        )

    pipeline = ctx.pipeline("marks", dataset_name="d")
    pipeline.run(mixed())
    return {"tables": ctx.tables(pipeline)}


@scenario
def columns_as_list_and_compound_key(ctx: Context) -> Any:
    """Columns given as a list of dicts; a compound primary key; a non-nullable column."""
    dlt = ctx.dlt

    @dlt.resource(
        primary_key=["a", "b"],
        write_disposition="merge",
        columns=[
            {"name": "a", "data_type": "text"},
            {"name": "c", "data_type": "double", "nullable": False},
        ],
    )
    def pairs(rows):
        yield rows

    pipeline = ctx.pipeline("compound", dataset_name="d")
    pipeline.run(pairs([{"a": 1, "b": 1, "c": 1}, {"a": 1, "b": 2, "c": 2}]))
    pipeline.run(pairs([{"a": 1, "b": 2, "c": 5}]))
    cols = pipeline.default_schema.get_table_columns("pairs")
    return {
        "tables": ctx.tables(pipeline),
        "hints": {
            k: [v.get("data_type"), v.get("nullable"), v.get("primary_key")]
            for k, v in cols.items()
        },
    }


@scenario
def pipeline_properties_after_runs(ctx: Context) -> Any:
    """What programs read off a pipeline: first_run, dataset name, schema names, state."""
    pipeline = ctx.pipeline("props", dataset_name="My Data")
    before = pipeline.first_run
    info = pipeline.run([{"x": 1}], table_name="t")
    return {
        "first_run_before": before,
        "first_run_after": pipeline.first_run,
        "dataset_name": pipeline.dataset_name,
        "info_dataset": info.dataset_name,
        "schema_names": pipeline.schema_names,
        "default_schema_name": pipeline.default_schema_name,
        "has_pending": pipeline.has_pending_data,
        "rows": ctx.sql(pipeline, 'SELECT x FROM "my_data"."t"'),
    }


@scenario
def arrow_and_pandas_inputs(ctx: Context) -> Any:
    """An Arrow table and a pandas frame, yielded by resources, with a merge on a key."""
    import pandas as pd
    import pyarrow as pa

    dlt = ctx.dlt

    @dlt.resource(primary_key="id", write_disposition="merge")
    def frames(n):
        yield pd.DataFrame({"id": [1, 2], "v": [n * 1.5, n * 2.5], "s": ["a", None]})

    @dlt.resource
    def batches():
        yield pa.table(
            {"k": pa.array([1, 2], pa.int32()), "when": pa.array([0, 1], pa.timestamp("s"))}
        )

    pipeline = ctx.pipeline("arrow_pd", dataset_name="d")
    pipeline.run([frames(1), batches()])
    pipeline.run(frames(2))
    cols = {
        t: {k: v.get("data_type") for k, v in pipeline.default_schema.get_table_columns(t).items()}
        for t in ("frames", "batches")
    }
    return {"tables": ctx.tables(pipeline), "types": cols}


@scenario
def sources_and_resources_in_one_list(ctx: Context) -> Any:
    """``run([source, resource, other_source])``: each source loads under its own schema, the
    loose resources under the pipeline's; the first schema by name becomes the default, and
    the run loads the pipeline's state once."""
    dlt = ctx.dlt

    @dlt.source
    def shop():
        @dlt.resource
        def orders():
            dlt.current.source_state()["seen"] = 2
            yield [{"id": 1}, {"id": 2}]

        return orders

    @dlt.source
    def crm():
        return dlt.resource([{"who": "ann"}], name="contacts")

    @dlt.resource
    def clicks():
        yield {"n": 1}

    pipeline = ctx.pipeline("mixed_list", dataset_name="d")
    info = pipeline.run([shop(), clicks(), crm()])
    again = pipeline.run([clicks(), crm])
    return {
        "schemas": sorted(pipeline.schema_names),
        "default_schema": pipeline.default_schema_name,
        "packages": [package.schema_name for package in info.load_packages],
        "second_packages": [package.schema_name for package in again.load_packages],
        "shop_state": pipeline.state["sources"]["shop"],
        "tables": ctx.tables(pipeline),
    }


@scenario
def a_source_after_the_default_schema(ctx: Context) -> Any:
    """A pipeline whose default schema is its own runs a source: the source's package holds
    its rows, and the state goes to the destination in a package of the default schema (only
    that schema has the state table); a rerun that changes no state loads one package."""
    dlt = ctx.dlt

    @dlt.source
    def shop():
        @dlt.resource
        def orders():
            dlt.current.source_state()["runs"] = dlt.current.source_state().get("runs", 0) + 1
            yield {"id": 1, "lines": [{"sku": "a"}]}

        return orders

    @dlt.resource
    def clicks():
        yield {"n": 1}

    pipeline = ctx.pipeline("after_default", dataset_name="d")
    pipeline.run(clicks())
    pipeline.run(shop())
    pipeline.run(clicks())
    with pipeline.sql_client() as client:
        loads = client.execute_sql("SELECT schema_name FROM _dlt_loads ORDER BY load_id")
        state_rows = client.execute_sql("SELECT count(*) FROM _dlt_pipeline_state")[0][0]
    return {
        "default_schema": pipeline.default_schema_name,
        "schema_tables": {name: sorted(s.tables) for name, s in sorted(pipeline.schemas.items())},
        "loads": [row[0] for row in loads],
        "state_rows": state_rows,
        "shop_state": pipeline.state["sources"]["shop"],
        "tables": ctx.tables(pipeline),
    }


@scenario
def insert_only_merge_with_nested_rows(ctx: Context) -> Any:
    """``insert-only`` merge of rows with nested lists: a new key's row is inserted with its
    nested rows, an existing key's row is left as it is."""
    pipe = ctx.pipeline("ins_nested")
    wd = {"disposition": "merge", "strategy": "insert-only"}
    for rows in (
        [{"id": 1, "v": "a", "l": [1]}, {"id": 2, "v": "b"}],
        [{"id": 2, "v": "B", "l": [2, 3]}, {"id": 3, "v": "c", "l": [4]}],
    ):
        pipe.run(rows, table_name="t", write_disposition=wd, primary_key="id")
    return ctx.tables(pipe)


@scenario
def incremental_row_order_boundaries_and_included_none(ctx: Context) -> Any:
    """Descending rows with an end value skip the rows above it and stop below the start; an
    open start skips the rows equal to it; rows whose cursor is None and are included move
    the state on like any other; two runs of each."""
    import datetime as dt

    dlt = ctx.dlt
    hour = dt.timedelta(hours=1)
    first = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    rows = [{"id": i, "ts": first + i * hour} for i in range(8)]

    def resource(name: str, data: list[Any], **incremental: Any) -> Any:
        @dlt.resource(name=name, primary_key="id")
        def read(cursor=dlt.sources.incremental("ts", **incremental)):
            yield from data

        return read()

    cases = {
        "desc_range": (
            rows[::-1],
            {"initial_value": rows[1]["ts"], "end_value": rows[5]["ts"], "row_order": "desc"},
        ),
        "asc_open_start": (
            rows,
            {"initial_value": rows[2]["ts"], "range_start": "open", "row_order": "asc"},
        ),
        "none_included": (
            [*rows, {"id": 99, "ts": None}],
            {"initial_value": rows[5]["ts"], "on_cursor_value_missing": "include"},
        ),
    }
    pipe = ctx.pipeline("inc_bounds", dataset_name="d")
    for _ in range(2):
        for name, (data, incremental) in cases.items():
            pipe.run(resource(name, data, **incremental))
    states = pipe.state["sources"]["inc_bounds"]["resources"]
    return {
        "tables": ctx.tables(pipe),
        "state": {
            name: {
                k: str(v)
                for k, v in states[name]["incremental"]["ts"].items()
                if k in ("start_value", "last_value")
            }
            for name in sorted(states)
        },
    }
