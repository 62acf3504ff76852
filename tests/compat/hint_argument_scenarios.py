"""Compatibility scenarios of the hint arguments issue 36 found refused: table variants made
by ``apply_hints`` / ``merge_hints(create_table_variant=True)``, ``make_hints(incremental=,
nested_hints=)``, the other arguments of ``make_nested_hints`` and the cursor's column hint.

Each runs a program a dlt user writes, in several call shapes (decorator arguments,
``apply_hints``, ``with_hints`` in a yield, a transformer, dynamic table names), and records
the loaded tables, the schema's tables and what the resource says of itself. They register in
:data:`tests.compat.scenarios.SCENARIOS` (``scenarios.py`` imports this module), so
``tests/compat/record.py`` records them under dlt and ``tests/pipelines/test_compat_dlt.py``
compares them like every other scenario.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.compat.harness import Context
from tests.compat.scenarios import scenario

_ROWS = [
    {"id": 1, "lines": [{"q": 1}]},
    {"id": 2, "lines": [{"q": 2}]},
    {"id": 3, "lines": [{"q": 3}]},
]


def _schema(pipe: Any) -> dict[str, Any]:
    """Each data table of the pipeline's schema as a plain dict (its hints and columns)."""
    schema = pipe.default_schema
    return {
        name: {
            key: dict(value) if key == "columns" else value
            for key, value in schema.get_table(name).items()
        }
        for name in schema.data_table_names()
    }


def _run(ctx: Context, name: str, make: Callable[[], Any], runs: int = 1, **kwargs: Any) -> Any:
    """``runs`` runs of what ``make`` returns: each run's outcome, then the tables, the
    schema's tables and the resources' state."""
    pipe = ctx.pipeline(name)
    outcomes = [ctx.attempt(lambda: pipe.run(make(), **kwargs) and None) for _ in range(runs)]
    return {
        "runs": outcomes,
        "tables": ctx.tables(pipe),
        "schema": _schema(pipe),
        "state": (pipe.state.get("sources") or {}).get(name),
    }


def _error(action: Callable[[], Any]) -> Any:
    """The class and message of the error ``action`` raises (``None`` when none)."""
    try:
        action()
    except Exception as exc:  # the outcome is what we compare
        return [type(exc).__name__, str(exc)]
    return None


def _error_class(action: Callable[[], Any]) -> Any:
    """The class name of the error ``action`` raises (``None`` when none)."""
    error = _error(action)
    return None if error is None else error[0]


def _events(dlt: Any) -> Any:
    """A merging resource with a key and a column hint; one page goes to ``ev_b``."""

    @dlt.resource(
        name="ev",
        primary_key="id",
        write_disposition="merge",
        columns={"k": {"data_type": "text", "description": "k"}},
    )
    def ev() -> Any:
        yield {"id": 1, "k": "a"}
        yield dlt.mark.with_table_name({"id": 2, "x": 1.5, "k": "b"}, "ev_b")
        yield {"id": 3, "k": "c"}

    return ev()


@scenario
def table_variant_by_apply_hints(ctx: Context) -> Any:
    """``apply_hints(table_name=..., create_table_variant=True)`` keeps hints for that table:
    the page marked for it gets the resource's hints with the variant's over them (the
    variant's key replaces the resource's), the table records ``variant_name``; the
    resource's table and ``compute_table_schema()`` stay; a table name is required."""
    dlt = ctx.dlt
    ev = _events(dlt)
    ev.apply_hints(
        table_name="ev_b",
        columns={"x": {"data_type": "double"}},
        write_disposition="append",
        primary_key="x",
        create_table_variant=True,
    )
    meta = dlt.mark.with_table_name(None, "ev_b").meta
    declared = {
        "own": ev.compute_table_schema(),
        "variant": ev.compute_table_schema(meta=meta),
        "table_name": ev.table_name,
        "write_disposition": ev.write_disposition,
    }
    refused = {
        "no_table_name": _error(
            lambda: _events(dlt).apply_hints(columns={"x": {}}, create_table_variant=True)
        ),
        "dynamic_table_name": _error(
            lambda: _events(dlt).apply_hints(table_name=lambda i: "t", create_table_variant=True)
        ),
    }
    return {"declared": declared, "refused": refused, **_run(ctx, "variant_apply", lambda: ev)}


@scenario
def table_variant_by_merge_hints(ctx: Context) -> Any:
    """``merge_hints(make_hints(table_name=...), create_table_variant=True)`` makes the same
    variant; without a table name it fails as ``apply_hints`` does."""
    dlt = ctx.dlt
    ev = _events(dlt)
    hints = dlt.mark.make_hints(table_name="ev_b", columns={"x": {"data_type": "double"}})
    ev.merge_hints(hints, create_table_variant=True)
    no_name = dlt.mark.make_hints(columns={"x": {"data_type": "double"}})
    return {
        "own": ev.compute_table_schema(),
        "no_table_name": _error(lambda: _events(dlt).merge_hints(no_name, True)),
        **_run(ctx, "variant_merge", lambda: ev),
    }


def _dynamic(dlt: Any) -> Any:
    res = dlt.resource(
        [{"id": 1, "t": "dyn_a"}, {"id": 2, "t": "dyn_b"}],
        name="dyn",
        table_name=lambda item: item["t"],
    )
    return res.apply_hints(
        table_name="dyn_b",
        columns={"x": {"data_type": "text"}},
        primary_key="id",
        create_table_variant=True,
    )


def _two_variants(dlt: Any) -> Any:
    @dlt.resource(name="tw")
    def tw() -> Any:
        yield {"id": 1}
        yield dlt.mark.with_table_name({"id": 2, "a": 1, "b": 2}, "tw_v")

    res = tw()
    res.apply_hints(
        table_name="tw_v",
        columns={"a": {"data_type": "text"}},
        primary_key="id",
        create_table_variant=True,
    )
    return res.apply_hints(
        table_name="tw_v", columns={"b": {"data_type": "text"}}, create_table_variant=True
    )


def _mark_and_apply(dlt: Any) -> Any:
    @dlt.resource(name="mix")
    def mix() -> Any:
        hints = dlt.mark.make_hints(table_name="mix_v", columns={"b": {"data_type": "text"}})
        yield dlt.mark.with_hints({"id": 2, "a": 1, "b": 2}, hints, create_table_variant=True)
        yield dlt.mark.with_table_name({"id": 3, "a": 1, "b": 2}, "mix_v")

    return mix().apply_hints(
        table_name="mix_v", columns={"a": {"data_type": "text"}}, create_table_variant=True
    )


def _transformer(dlt: Any) -> Any:
    @dlt.resource(name="par")
    def par() -> Any:
        yield [{"id": 1}, {"id": 2}]

    @dlt.transformer(name="tr")
    def tr(items: Any) -> Any:
        for item in items:
            yield dlt.mark.with_table_name({"id": item["id"], "v": "x"}, "tr_v")

    piped = par | tr
    return piped.apply_hints(
        table_name="tr_v",
        write_disposition="merge",
        primary_key="id",
        columns={"v": {"data_type": "text", "nullable": False}},
        create_table_variant=True,
    )


def _unused(dlt: Any, name: str) -> Any:
    res = dlt.resource([{"id": 1}], name=name)
    return res.apply_hints(
        table_name="rt_v", columns={"z": {"data_type": "text"}}, create_table_variant=True
    )


@scenario
def table_variant_call_shapes(ctx: Context) -> Any:
    """Variants in the shapes a dlt program gives them: a dynamic table name that names one,
    two variants of one table (merged), a ``with_hints`` variant of a table ``apply_hints``
    declared (merged), a transformer's; one no page goes to, and ``run(table_name=)`` of
    the variant's name (neither uses it)."""
    dlt = ctx.dlt
    return {
        "dynamic": _run(ctx, "variant_dynamic", lambda: _dynamic(dlt)),
        "two_variants": _run(ctx, "variant_two", lambda: _two_variants(dlt)),
        "mark_and_apply": _run(ctx, "variant_mix", lambda: _mark_and_apply(dlt)),
        "transformer": _run(ctx, "variant_transformer", lambda: _transformer(dlt)),
        "never_used": _run(ctx, "variant_unused", lambda: _unused(dlt, "rt")),
        "run_table_name": _run(
            ctx, "variant_run_table", lambda: _unused(dlt, "rt2"), table_name="rt_v"
        ),
    }


@scenario
def make_hints_incremental(ctx: Context) -> Any:
    """``make_hints(incremental=...)``: through ``merge_hints`` it is the resource's cursor,
    as ``apply_hints(incremental=...)`` (rows filtered, state kept over two runs); in a
    ``with_hints`` page it only marks the cursor's column (nothing filtered)."""
    dlt = ctx.dlt

    def merged() -> Any:
        res = dlt.resource(list(_ROWS), name="mi")
        cursor = dlt.sources.incremental("id", initial_value=2)
        return res.merge_hints(dlt.mark.make_hints(incremental=cursor)) or res

    def applied() -> Any:
        res = dlt.resource(list(_ROWS), name="ai")
        return res.apply_hints(incremental=dlt.sources.incremental("id", initial_value=2))

    @dlt.resource(name="wi")
    def in_a_page() -> Any:
        cursor = dlt.sources.incremental("id", initial_value=2)
        yield dlt.mark.with_hints(_ROWS[:1], dlt.mark.make_hints(incremental=cursor))
        yield _ROWS[1:]

    return {
        "merge_hints": _run(ctx, "inc_merge", merged, runs=2),
        "apply_hints": _run(ctx, "inc_apply", applied, runs=2),
        "with_hints": _run(ctx, "inc_page", in_a_page, runs=2),
    }


@scenario
def make_hints_nested_hints(ctx: Context) -> Any:
    """``make_hints(nested_hints=...)`` in a ``with_hints`` page, in ``merge_hints`` and in a
    variant hint the nested tables as ``nested_hints=`` on the resource does; a second
    ``apply_hints(nested_hints=...)`` replaces the first."""
    dlt = ctx.dlt

    def text_q() -> Any:
        return {"lines": dlt.mark.make_nested_hints(columns={"q": {"data_type": "text"}})}

    @dlt.resource(name="wn")
    def in_a_page() -> Any:
        yield dlt.mark.with_hints(_ROWS[:1], dlt.mark.make_hints(nested_hints=text_q()))
        yield _ROWS[1:]

    def merged() -> Any:
        res = dlt.resource(list(_ROWS), name="mn")
        keyed = {"lines": dlt.mark.make_nested_hints(primary_key="q")}
        res.merge_hints(dlt.mark.make_hints(nested_hints=keyed))
        return res

    def applied_twice() -> Any:
        res = dlt.resource(list(_ROWS), name="an", nested_hints=text_q())
        z = {"lines": dlt.mark.make_nested_hints(columns={"z": {"data_type": "text"}})}
        return res.apply_hints(nested_hints=z)

    @dlt.resource(name="vn")
    def variant() -> Any:
        yield _ROWS[:1]
        hints = dlt.mark.make_hints(table_name="vn_v", nested_hints=text_q())
        yield dlt.mark.with_hints(_ROWS[1:], hints, create_table_variant=True)

    return {
        "with_hints": _run(ctx, "nested_page", in_a_page),
        "merge_hints": _run(ctx, "nested_merge", merged),
        "apply_hints_twice": _run(ctx, "nested_twice", applied_twice),
        "variant": _run(ctx, "nested_variant", variant),
    }


@scenario
def make_nested_hints_other_arguments(ctx: Context) -> Any:
    """``make_nested_hints`` takes ``make_hints``'s arguments: table and file format and
    additional hints go into the nested table; ``table_name``, ``incremental`` and
    ``nested_hints`` change nothing; an unknown one is a ``TypeError``."""
    dlt = ctx.dlt
    rows = [{"id": 1, "lines": [{"sku": "a", "parts": [{"p": 1}]}]}]
    shapes: dict[str, dict[str, Any]] = {
        "table_format": {"table_format": "delta"},
        "file_format": {"file_format": "parquet"},
        "additional_table_hints": {"additional_table_hints": {"x-owner": "me"}},
        "table_name": {"table_name": "x"},
        "incremental": {"incremental": dlt.sources.incremental("id")},
        "nested_hints": {
            "nested_hints": {
                "parts": dlt.mark.make_nested_hints(columns={"p": {"data_type": "text"}})
            }
        },
    }
    out: dict[str, Any] = {}
    for name, kwargs in shapes.items():
        hints = {"lines": dlt.mark.make_nested_hints(**kwargs)}
        res = dlt.resource(list(rows), name="o", nested_hints=hints)
        out[name] = _run(ctx, f"nested_arg_{name}", lambda res=res: res)
    out["unknown"] = _error(lambda: dlt.mark.make_nested_hints(no_such=1)) is not None
    return out


@scenario
def cursor_column_hint(ctx: Context) -> Any:
    """A cursor on a top-level field marks its column ``incremental: true`` (as given with
    ``apply_hints``, ``@resource(incremental=)``, a cursor argument, a transformer's); a
    JSON path marks none; a new cursor moves the mark."""
    dlt = ctx.dlt
    declared: dict[str, Any] = {}
    for path in ("Id", "id", "$.id", "n.k", "items[*].id"):
        res = dlt.resource([{"id": 1}], name="r")
        declared[path] = res.apply_hints(
            incremental=dlt.sources.incremental(path)
        ).compute_table_schema()["columns"]
    res = dlt.resource([{"id": 1}], name="r", columns={"id": {"data_type": "bigint"}})
    res.apply_hints(incremental=dlt.sources.incremental("id"))
    res.apply_hints(incremental=dlt.sources.incremental("other"))
    declared["moved"] = res.compute_table_schema()["columns"]

    @dlt.resource(name="dec", incremental=dlt.sources.incremental("id"))
    def dec() -> Any:
        yield [{"id": 1, "n": {"k": 2}}]

    @dlt.resource(name="arg")
    def arg(cur: Any = dlt.sources.incremental("id")) -> Any:
        yield [{"id": 1, "n": {"k": 2}}]

    @dlt.transformer(name="tr")
    def tr(items: Any, cur: Any = dlt.sources.incremental("id")) -> Any:
        yield items

    def nested_path() -> Any:
        res = dlt.resource([{"id": 1, "n": {"k": 2}}], name="np")
        return res.apply_hints(incremental=dlt.sources.incremental("n.k"))

    return {
        "declared": declared,
        "decorator": dec().compute_table_schema()["columns"],
        "decorator_run": _run(ctx, "cursor_dec", dec)["schema"],
        "argument_run": _run(ctx, "cursor_arg", arg)["schema"],
        "transformer_run": _run(
            ctx, "cursor_tr", lambda: dlt.resource([{"id": 1}], name="src") | tr
        )["schema"],
        "nested_path_run": _run(ctx, "cursor_np", nested_path)["schema"],
    }


@scenario
def hints_as_functions_of_the_item(ctx: Context) -> Any:
    """With a table name that is a function of the item, other hints may be too (dlt's
    dynamic hints): columns, keys and write dispositions per table, each item's merged into
    its table's, given to ``@resource`` or ``apply_hints``; ``compute_table_schema(item)``
    shows them; without a dynamic table name they are refused."""
    dlt = ctx.dlt
    rows = [
        {"t": "a", "id": 1, "v": 1, "w": 1, "l": [{"z": 1}]},
        {"t": "b", "id": 2, "v": 2, "w": 2, "l": [{"z": 1}]},
        {"t": "a", "id": 3, "v": 3, "w": 3},
    ]

    def by_table(item: Any) -> str:
        return str(item["t"])

    def columns(item: Any) -> Any:
        return {"v" if item["id"] == 1 else "w": {"data_type": "text"}}

    def decorated() -> Any:
        return dlt.resource(
            list(rows),
            name="dec",
            table_name=by_table,
            columns=columns,
            primary_key=lambda item: "id" if item["t"] == "a" else "v",
            write_disposition=lambda item: "merge" if item["t"] == "a" else "append",
        )

    def applied() -> Any:
        res = dlt.resource(list(rows), name="app")
        return res.apply_hints(
            table_name=lambda item: "app_" + item["t"],
            merge_key=lambda item: "w",
            schema_contract=lambda item: {"columns": "evolve"},
        )

    return {
        "declared": decorated().compute_table_schema(rows[0]),
        "decorator": _run(ctx, "dynamic_decorator", decorated, runs=2),
        "apply_hints": _run(ctx, "dynamic_apply", applied),
        "refused_in_decorator": _error_class(
            lambda: dlt.resource([{"v": 1}], name="r", columns=lambda item: {})
        ),
        "refused_in_apply_hints": _error_class(
            lambda: dlt.resource([{"v": 1}], name="r").apply_hints(primary_key=lambda i: "v")
        ),
    }
