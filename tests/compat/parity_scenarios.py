"""Compatibility scenarios for the rest of dlt's public API a ported program touches: the
Schema object, types inferred from Python values, traces, resource hints, cursors, loads that
leave different data, configuration accessors and LoadInfo.

They register in :data:`tests.compat.scenarios.SCENARIOS` (``scenarios.py`` imports this
module), so ``tests/compat/record.py`` records them and ``tests/pipelines/test_compat_dlt.py``
compares them like every other scenario.
"""

from __future__ import annotations

import json
import os
from typing import Any

import yaml

from tests.compat.harness import Context
from tests.compat.scenarios import scenario

USERS = [
    {"id": 1, "name": "ann", "kids": [{"age": 3}], "nothing": None},
    {"id": 2, "name": "bo", "kids": [], "nothing": None},
]


def _snap(value: Any) -> Any:
    """A copy of what a call returned, as it was then (dlt hands out its live dicts)."""
    return json.loads(json.dumps(value, default=str))


def _names(tables: list[Any]) -> list[str]:
    return [table["name"] for table in tables]


def _caught(action: Any) -> Any:
    """What a program sees: the result, or whether the error is a KeyError / ValueError."""
    try:
        return {"ok": action()}
    except Exception as exc:  # the outcome is what we compare
        return {"key_error": isinstance(exc, KeyError), "value_error": isinstance(exc, ValueError)}


# -- the Schema object ---------------------------------------------------------------------------
@scenario
def schema_object_reads(ctx: Context) -> Any:
    """What a program reads from ``pipeline.default_schema`` after a load."""
    pipe = ctx.pipeline("schema_reads")
    pipe.run(USERS, table_name="users", primary_key="id")
    schema = pipe.default_schema
    naming = schema.naming
    users = schema.get_table("users")
    return {
        "tables": sorted(schema.tables),
        "users_columns": users["columns"],
        "users_hints": {k: users.get(k) for k in ("write_disposition", "resource", "parent")},
        "nested_parent": schema.tables["users__kids"]["parent"],
        "get_table_columns": schema.get_table_columns("users"),
        "missing": _caught(lambda: schema.get_table_columns("nope")),
        "data_tables": _names(schema.data_tables()),
        "data_table_names": schema.data_table_names(),
        "seen_data": schema.data_table_names(seen_data_only=True),
        "dlt_tables": _names(schema.dlt_tables()),
        "dlt_table_names": schema.dlt_table_names(),
        "naming": [
            naming.normalize_identifier("Hello World"),
            naming.normalize_table_identifier("Orders Table"),
            naming.normalize_path("Parent__Child Name"),
            naming.make_path("a", "b"),
            naming.break_path("a__b"),
            naming.is_case_sensitive,
        ],
        "name": schema.name,
        "version": schema.version,
        "hash_is_text": isinstance(schema.version_hash, str),
        "stored_hash_is_current": schema.stored_version_hash == schema.version_hash,
        "to_dict_keys": list(schema.to_dict()),
        "to_dict_users": schema.to_dict()["tables"]["users"],
        "yaml_users": yaml.safe_load(schema.to_pretty_yaml())["tables"]["users"],
        "json_users": json.loads(schema.to_pretty_json())["tables"]["users"],
        "settings": schema.settings["default_hints"],
        "is_new_table": [schema.is_new_table("users"), schema.is_new_table("nope")],
    }


@scenario
def schema_object_changes(ctx: Context) -> Any:
    """A program that changes a schema through dlt's Schema methods, then loads with it."""
    dlt = ctx.dlt
    schema = dlt.Schema("shop")
    fresh = {"tables": list(schema.tables), "data": schema.data_table_names()}
    partial = schema.update_table(
        {"name": "Order Lines", "columns": {"Line No": {"name": "Line No", "nullable": False}}}
    )
    hinted_only = {
        "returned": _snap(partial),
        "data": schema.data_table_names(),
        "incomplete": schema.data_table_names(include_incomplete=True),
        "is_new": schema.is_new_table("order_lines"),
        "columns": _snap(schema.get_table_columns("order_lines")),
        "all_columns": _snap(schema.get_table_columns("order_lines", include_incomplete=True)),
    }
    schema.update_table(
        {"name": "order_lines", "columns": {"qty": {"name": "qty", "data_type": "bigint"}}}
    )
    schema.merge_hints({"partition": ["qty"]})
    schema.update_preferred_types({"price": "decimal"})
    copy = schema.clone(with_name="shop_copy")
    dumped = _snap(schema.to_dict(remove_defaults=True))
    pipe = ctx.pipeline("schema_changes")
    pipe.run([{"line_no": 1, "qty": 2, "price": 1.5}], table_name="order_lines", schema=schema)
    return {
        "fresh": fresh,
        "hinted_only": hinted_only,
        "typed": schema.get_table("order_lines")["columns"],
        "is_new": schema.is_new_table("order_lines"),
        "preferred": schema.get_preferred_type("price"),
        "clone": [copy.name, copy.version, sorted(copy.tables)],
        "removed_defaults": dumped["tables"]["order_lines"],
        "settings": dumped["settings"],
        "loaded_columns": pipe.default_schema.get_table_columns("order_lines"),
        "tables": ctx.tables(pipe),
    }


# -- types inferred from Python values -----------------------------------------------------------
@scenario
def python_value_types(ctx: Context) -> Any:
    """Decimal, date, time, bytes and a wei-sized int: the column types and values loaded."""
    import datetime as dt
    import decimal

    rows = [
        {
            "id": 1,
            "amount": decimal.Decimal("12.50"),
            "day": dt.date(2024, 2, 29),
            "at": dt.time(13, 45, 1),
            "blob": b"\x00\x01hi",
            "stamp": dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc),
            "wei": 10**18,
        },
        {
            "id": 2,
            "amount": decimal.Decimal("-0.001"),
            "day": dt.date(1999, 12, 31),
            "at": dt.time(0, 0),
            "blob": b"\xff",
            "stamp": dt.datetime(2024, 1, 2, 3, 4, 5, 123456),
            "wei": decimal.Decimal(2**70),
        },
    ]
    pipe = ctx.pipeline("py_types")
    pipe.run(rows, table_name="values", columns={"wei": {"data_type": "wei"}})
    columns = pipe.default_schema.get_table_columns("values")
    db_types = ctx.sql(
        pipe,
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = "
        f"'values' AND table_schema = '{pipe.dataset_name}' ORDER BY column_name",
    )
    return {
        "schema": {name: column.get("data_type") for name, column in columns.items()},
        "precision": {n: [c.get("precision"), c.get("scale")] for n, c in columns.items()},
        "db_types": db_types,
        "tables": ctx.tables(pipe),
        "blob_hex": ctx.sql(
            pipe, f'SELECT hex(blob) FROM {pipe.dataset_name}."values" ORDER BY id'
        ),
    }


# -- traces --------------------------------------------------------------------------------------
def _trace_view(trace: Any) -> Any:
    """What a program reads from a trace: its steps and each step's row counts."""
    if trace is None:
        return None
    return {
        "steps": [step.step for step in trace.steps],
        "extract": trace.last_extract_info is not None,
        "normalize_rows": None
        if trace.last_normalize_info is None
        else trace.last_normalize_info.row_counts,
        "load": trace.last_load_info is not None,
    }


@scenario
def trace_of_steps_called_one_by_one(ctx: Context) -> Any:
    pipe = ctx.pipeline("trace_steps")
    before = pipe.last_trace
    pipe.extract([{"id": 1, "kids": [{"k": 1}, {"k": 2}]}], table_name="items")
    after_extract = _trace_view(pipe.last_trace)
    pipe.normalize()
    after_normalize = _trace_view(pipe.last_trace)
    pipe.load()
    after_load = _trace_view(pipe.last_trace)
    pipe.run([{"id": 2}], table_name="items")
    return {
        "before": before,
        "after_extract": after_extract,
        "after_normalize": after_normalize,
        "after_load": after_load,
        "after_run": _trace_view(pipe.last_trace),
    }


# -- resource and hint details -------------------------------------------------------------------
@scenario
def resource_name_from_arguments(ctx: Context) -> Any:
    dlt = ctx.dlt

    @dlt.resource(name=lambda args: args["feed"])
    def feed_items(feed: str, n: int = 2) -> Any:
        yield from ({"feed": feed, "i": i} for i in range(n))

    pipe = ctx.pipeline("named_by_args")
    res = feed_items("news")
    pipe.run([res, feed_items("sport", n=1)])
    return {"name": res.name, "tables": ctx.tables(pipe)}


@scenario
def resource_key_wins_over_column_key(ctx: Context) -> Any:
    dlt = ctx.dlt
    res = dlt.resource(
        [{"sensor": "a", "batch": 1, "v": 1.5}],
        name="readings",
        primary_key="sensor",
        columns={"batch": {"primary_key": True}},
    )
    pipe = ctx.pipeline("keys")
    pipe.run(res)
    columns = pipe.default_schema.get_table_columns("readings")
    return {n: c.get("primary_key") for n, c in columns.items() if not n.startswith("_dlt")}


@scenario
def nested_hints_schema_contract(ctx: Context) -> Any:
    dlt = ctx.dlt
    rows = [{"id": 1, "items": [{"sku": "a", "qty": 1}]}]
    hints = {"items": dlt.mark.make_nested_hints(schema_contract={"columns": "freeze"})}
    pipe = ctx.pipeline("nested_contract")
    first = ctx.attempt(lambda: pipe.run(dlt.resource(rows, name="orders", nested_hints=hints)))
    more = [{"id": 2, "items": [{"sku": "b", "qty": 2, "extra": True}]}]
    second = ctx.attempt(lambda: pipe.run(dlt.resource(more, name="orders", nested_hints=hints)))
    nested = pipe.default_schema.get_table("orders__items")
    return {
        "first": {"error": first.get("error")},
        "second": {k: second.get(k) for k in ("error", "step")},
        "contract": nested.get("schema_contract"),
        "tables": ctx.tables(pipe),
    }


@scenario
def materialize_table_with_key(ctx: Context) -> Any:
    dlt = ctx.dlt

    @dlt.resource(
        name="empty_keyed",
        primary_key="id",
        columns={"id": {"data_type": "bigint"}, "name": {"data_type": "text"}},
    )
    def empty_keyed() -> Any:
        yield dlt.mark.materialize_table_schema()

    pipe = ctx.pipeline("materialize_keyed")
    run = ctx.attempt(lambda: pipe.run(empty_keyed()) and None)
    return {"run": run, "tables": ctx.tables(pipe)}


@scenario
def resources_add_transformer(ctx: Context) -> Any:
    dlt = ctx.dlt

    @dlt.resource(name="users")
    def users() -> Any:
        yield [{"id": 1}, {"id": 2}]

    @dlt.transformer(name="details")
    def details(page: Any) -> Any:
        yield [{"user_id": user["id"], "detail": user["id"] * 10} for user in page]

    @dlt.source(name="crm")
    def crm() -> Any:
        return users()

    source = crm()
    source.resources.add(users | details)
    pipe = ctx.pipeline("add_transformer")
    pipe.run(source)
    return {"resources": sorted(source.resources), "tables": ctx.tables(pipe)}


@scenario
def import_schema_path_first_run(ctx: Context) -> Any:
    import os

    pipe = ctx.pipeline("imp_first", import_schema_path="schemas/import")
    pipe.run([{"id": 1, "name": "a"}], table_name="people")
    files = sorted(os.listdir("schemas/import")) if os.path.isdir("schemas/import") else None
    written = None
    if files:
        with open(os.path.join("schemas/import", files[0]), encoding="utf-8") as handle:
            written = yaml.safe_load(handle)
    return {
        "files": files,
        "tables": None if written is None else sorted(written.get("tables") or {}),
        "people": None if written is None else written["tables"].get("people"),
    }


# -- cursors -------------------------------------------------------------------------------------
@scenario
def cursor_fetches_continue(ctx: Context) -> Any:
    pipe = ctx.pipeline("cursor")
    pipe.run([{"n": n} for n in range(6)], table_name="numbers")
    with pipe.sql_client() as client:
        with client.execute_query("SELECT n FROM numbers ORDER BY n") as cursor:
            one = cursor.fetchone()
            two = cursor.fetchmany(2)
            rest = cursor.fetchall()
            after = cursor.fetchone()
        with client.execute_query("SELECT n FROM numbers ORDER BY n") as cursor:
            cursor.fetchone()
            chunks = list(cursor.iter_fetch(2))
    return {"one": one, "two": two, "rest": rest, "after": after, "chunks": chunks}


# -- loads that leave different data -------------------------------------------------------------
@scenario
def replace_with_nothing_empties_table(ctx: Context) -> Any:
    dlt = ctx.dlt

    @dlt.resource(name="stock", write_disposition="replace")
    def stock(rows: Any) -> Any:
        yield from rows

    pipe = ctx.pipeline("replace_empty")
    pipe.run(stock([{"sku": "a", "n": 1}, {"sku": "b", "n": 2}]))
    before = ctx.tables(pipe)
    pipe.run(stock([]))
    return {"before": before, "after": ctx.tables(pipe)}


@scenario
def run_with_a_pending_package(ctx: Context) -> Any:
    """A run that finds a pending package finishes it and returns: its own data waits."""
    pipe = ctx.pipeline("pending_then_new")
    pipe.run([{"id": 0}], table_name="first")
    pipe.extract([{"id": 1}], table_name="old_rows")
    pipe.normalize()
    normalized = pipe.run([{"id": 2}], table_name="new_rows")
    after_normalized = ctx.tables(pipe)
    pipe.extract([{"id": 5}], table_name="extracted_only")
    extracted = pipe.run([{"id": 3}], table_name="new_rows")
    after_extracted = ctx.tables(pipe)
    pipe.run([{"id": 4}], table_name="new_rows")
    return {
        "packages": [len(normalized.loads_ids), len(extracted.loads_ids)],
        "steps": [step.step for step in pipe.last_trace.steps],
        "after_normalized": sorted(after_normalized),
        "after_extracted": sorted(after_extracted),
        "tables": ctx.tables(pipe),
    }


@scenario
def run_with_a_pending_package_on_first_run(ctx: Context) -> Any:
    pipe = ctx.pipeline("pending_first_run")
    pipe.extract([{"id": 1}], table_name="old_rows")
    pipe.normalize()
    pipe.run([{"id": 2}], table_name="new_rows")
    return {"tables": ctx.tables(pipe)}


@scenario
def failed_load_job_leaves_table(ctx: Context) -> Any:
    pipe = ctx.pipeline("failed_job")
    pipe.run([{"id": 1, "v": "x"}], table_name="things")
    # DECIMAL(3,0) cannot hold 12345: the table is created, its load job fails
    outcome = ctx.attempt(
        lambda: (
            pipe.run(
                [{"id": 2, "amount": 12345}],
                table_name="fresh",
                columns={"amount": {"data_type": "decimal", "precision": 3, "scale": 0}},
            )
            and None
        )
    )
    return {"outcome": outcome, "tables": ctx.tables(pipe)}


# -- configuration, LoadInfo and errors ----------------------------------------------------------
@scenario
def config_and_secrets_item_access(ctx: Context) -> Any:
    dlt = ctx.dlt
    os.environ["SOURCES__SHOP__API_URL"] = "http://127.0.0.1:9/api"
    os.environ["SOURCES__SHOP__API_KEY"] = "k-123"
    try:
        return {
            "config": dlt.config["sources.shop.api_url"],
            "secret": dlt.secrets["sources.shop.api_key"],
            "missing": _caught(lambda: dlt.config["sources.shop.no_such"]),
        }
    finally:
        del os.environ["SOURCES__SHOP__API_URL"], os.environ["SOURCES__SHOP__API_KEY"]


@scenario
def pipeline_and_load_info_members(ctx: Context) -> Any:
    pipe = ctx.pipeline("Info Pipe", dataset_name="My Data")
    first = pipe.run([{"id": 1, "tags": ["a"]}], table_name="items")
    second = pipe.run([{"id": 2, "tags": []}], table_name="items")
    package = first.load_packages[0]
    return {
        "dataset_name": pipe.dataset_name,
        "destination_name": pipe.destination.destination_name,
        "first_run": [first.first_run, second.first_run],
        "package_state": package.state,
        "package_jobs": sorted(j.job_file_info.table_name for j in package.jobs["completed_jobs"]),
        "failed_jobs": len(package.jobs["failed_jobs"]),
        "normalized_pending": pipe.list_normalized_load_packages(),
        "tables": sorted(ctx.tables(pipe)),
    }


@scenario
def errors_users_catch(ctx: Context) -> Any:
    pipe = ctx.pipeline("errors")
    pipe.run([{"id": 1, "name": "a"}], table_name="people")
    contract: dict[str, Any] = {}
    try:
        pipe.run([{"id": 2, "extra": 1}], table_name="people", schema_contract="freeze")
    except Exception as exc:
        cause = getattr(exc, "exception", None)
        inner = None if cause is None else (cause.__cause__ or cause.__context__)
        contract = {
            "error": type(exc).__name__,
            "cause": type(cause).__name__,
            "inner": type(inner).__name__,
            **{
                name: getattr(inner, name, None)
                for name in ("table_name", "column_name", "schema_entity", "contract_mode")
            },
        }
    null_key = ctx.attempt(
        lambda: (
            pipe.run(
                [{"id": 1, "name": "x"}, {"id": None, "name": "y"}],
                table_name="keyed",
                primary_key="id",
            )
            and None
        )
    )
    xlsx = ctx.attempt(
        lambda: (
            ctx.pipeline("xlsx").run([{"a": 1}], table_name="t", loader_file_format="xlsx") and None
        )
    )
    return {"contract": contract, "null_key": null_key, "xlsx": xlsx, "tables": ctx.tables(pipe)}


@scenario
def user_keys_named_like_dlt_columns(ctx: Context) -> Any:
    """A root table keeps a user's ``_dlt_list_idx`` (text, not null); nested rows get dlt's
    own ``_dlt_parent_id`` and ``_dlt_list_idx`` whatever the item holds."""
    pipe = ctx.pipeline("dlt_keys")
    item = {
        "id": 1,
        "_dlt_list_idx": "x",
        "kids": [{"k": 1, "_dlt_parent_id": "m", "_dlt_list_idx": 7}],
    }
    pipe.run([item], table_name="t")
    types = ctx.sql(
        pipe,
        "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns "
        "WHERE table_schema = 'dlt_keys_dataset' AND column_name LIKE '_dlt_%' ORDER BY 1, 2",
    )
    kids = ctx.sql(pipe, "SELECT k, _dlt_list_idx FROM dlt_keys_dataset.t__kids")
    root = ctx.sql(pipe, "SELECT id, _dlt_list_idx FROM dlt_keys_dataset.t")
    return {"types": types, "kids": kids, "root": root}


@scenario
def module_level_run(ctx: Context) -> Any:
    """``dlt.run(data, destination=...)`` loads through the default pipeline of the script."""
    body = (
        "import duckdb, json\n"
        "dlt.run([{'id': 1}, {'id': 2}], destination='duckdb', dataset_name='d', table_name='t')\n"
        "name = dlt.pipeline().pipeline_name\n"
        "rows = duckdb.connect(name + '.duckdb').execute('select id from d.t order by id').fetchall()\n"
        "print(json.dumps([name, rows]))\n"
    )
    return ctx.run_script(body)


@scenario
def load_info_and_trace_times(ctx: Context) -> Any:
    """``LoadInfo`` and ``PipelineTrace`` carry the run's start and end as aware datetimes."""
    import datetime as dt

    pipe = ctx.pipeline("times")
    info = pipe.run([{"id": 1}], table_name="t")
    trace = pipe.last_trace

    def aware(value: Any) -> bool:
        return isinstance(value, dt.datetime) and value.tzinfo is not None

    return {
        "info": [aware(info.started_at), aware(info.finished_at), info.is_empty],
        "ordered": info.started_at <= info.finished_at,
        "trace": [aware(trace.started_at), aware(trace.finished_at)],
        "trace_dict": isinstance(trace.asdict(), dict) and "pipeline_name" in trace.asdict(),
    }


@scenario
def source_add_limit(ctx: Context) -> Any:
    """``source.add_limit(n)`` limits each of its resources to n pages."""
    dlt = ctx.dlt

    @dlt.source
    def pages() -> Any:
        @dlt.resource
        def numbers() -> Any:
            for n in range(5):
                yield [{"n": n}]

        @dlt.resource
        def letters() -> Any:
            for c in "abcde":
                yield {"c": c}

        return numbers, letters

    pipe = ctx.pipeline("limited")
    pipe.run(pages().add_limit(2))
    return ctx.tables(pipe)
