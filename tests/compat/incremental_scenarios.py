"""Compatibility scenarios of incremental cursors across runs of one pipeline.

Found by differential programs (p400-p449): where a cursor sits among a resource's steps, and
what it keeps in state.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tests.compat.harness import Context
from tests.compat.scenarios import scenario


def _as_json(value: Any) -> Any:
    """A state as plain JSON (each library's state may be a mapping of its own)."""
    return json.loads(json.dumps(value, default=str, sort_keys=True))


def _tenfold(item: dict[str, int]) -> dict[str, int]:
    return {**item, "v": item["v"] * 10}


def _plus_one(item: dict[str, int]) -> dict[str, int]:
    return {**item, "v": item["v"] + 1}


@scenario
def a_cursor_sees_what_the_maps_and_filters_give(ctx: Context) -> Any:
    """dlt 1.31 keeps the incremental step last in the pipe: an appended ``add_map`` /
    ``add_filter`` runs before it (the cursor's last value is the mapped one), ``insert_at=1``
    before it too, ``insert_at=2`` after it; a cursor from ``apply_hints`` goes last."""
    dlt = ctx.dlt

    @dlt.resource(primary_key="id")
    def d(c: Any = dlt.sources.incremental("v", initial_value=1)) -> Any:
        yield [{"id": i, "v": i, "keep": i % 2 == 0} for i in range(8)]

    @dlt.resource(primary_key="id")
    def plain() -> Any:
        yield [{"id": i, "v": i, "keep": i % 2 == 0} for i in range(8)]

    def hinted() -> Any:
        res = plain().add_map(_tenfold)
        res.apply_hints(incremental=dlt.sources.incremental("v", initial_value=1))
        return res

    cases: dict[str, Callable[[], Any]] = {
        "map": lambda: d().add_map(_tenfold),
        "map_at_1": lambda: d().add_map(_tenfold, insert_at=1),
        "map_at_2": lambda: d().add_map(_tenfold, insert_at=2),
        "two_maps": lambda: d().add_map(_tenfold).add_map(_plus_one, insert_at=1),
        "filter": lambda: d().add_filter(lambda x: x["keep"]),
        "hints_after_map": hinted,
        "limit": lambda: d().add_map(_tenfold).add_limit(1),
    }
    out: dict[str, Any] = {}
    for name, make in cases.items():
        pipe = ctx.pipeline(f"cur_{name}")
        res = make()
        pipe.run(res, table_name="t")
        state = pipe.state["sources"][pipe.pipeline_name]["resources"][res.name]
        out[name] = {"last_value": state["incremental"]["v"]["last_value"]}
        out[name]["rows"] = ctx.tables(pipe)["t"]["rows"]
    return out


@scenario
def a_replacing_cursor_starts_from_its_initial_value(ctx: Context) -> Any:
    """dlt 1.31 starts the cursor of a ``replace`` resource (hint, ``apply_hints`` or
    ``run(write_disposition="replace")``) from ``initial_value`` on every run, so the table is
    made again from the whole range; a merge resource goes on from its last value. The cursor
    argument may be annotated ``incremental[int]``, as dlt's docs write it."""
    dlt = ctx.dlt
    rows = [{"id": i, "ts": 100 + i} for i in range(5)]

    @dlt.resource(write_disposition="replace")
    def rep(c: Any = dlt.sources.incremental("ts", initial_value=101)) -> Any:
        yield rows

    @dlt.resource(write_disposition="merge", primary_key="id")
    def mer(
        c: dlt.sources.incremental[int] = dlt.sources.incremental("ts", initial_value=101),
    ) -> Any:  # type: ignore[name-defined]  # dlt's generic form, as users write it
        yield rows

    @dlt.resource
    def by_run(c: Any = dlt.sources.incremental("ts", initial_value=101)) -> Any:
        yield rows

    pipe = ctx.pipeline("restart")
    out: dict[str, Any] = {}
    for run in range(3):
        pipe.run([rep(), mer()])
        pipe.run(by_run(), write_disposition="replace")
        out[f"run_{run}"] = ctx.tables(pipe)
        rows.append({"id": 10 + run, "ts": 200 + run})
    resources = pipe.state["sources"]["restart"]["resources"]
    out["state"] = {name: dict(res["incremental"]["ts"]) for name, res in resources.items()}
    for cursor in out["state"].values():
        cursor["unique_hashes"] = len(cursor["unique_hashes"])
    return out


@scenario
def a_cursor_keeps_its_first_initial_value_in_state(ctx: Context) -> Any:
    """dlt 1.31 keeps the ``initial_value`` a cursor's state was made with: a later run whose
    ``apply_hints(incremental=...)`` gives another one filters from the last value and leaves
    the stored one (differential program p419)."""
    dlt = ctx.dlt

    @dlt.resource
    def orders(created: Any = dlt.sources.incremental("created")) -> Any:
        yield [{"n": i, "created": f"2024-01-{i + 1:02d}"} for i in range(8)]

    pipe = ctx.pipeline("first_initial")
    pipe.run(orders().add_filter(lambda r: r["n"] < 4))
    later = orders()
    later.apply_hints(incremental=dlt.sources.incremental("created", initial_value="2024-01-07"))
    pipe.run(later)
    cursor = pipe.state["sources"]["first_initial"]["resources"]["orders"]["incremental"]
    return {"state": {k: v for k, v in cursor["created"].items() if k != "unique_hashes"},
            "tables": ctx.tables(pipe)}  # fmt: skip


@scenario
def the_first_run_reads_its_cursor_in_state(ctx: Context) -> Any:
    """dlt 1.31 puts a cursor's entry in the resource state when the run binds it, so the
    resource body of the first run reads ``resource_state()["incremental"]`` (start, last and
    initial value, no hashes); a backfill range (``end_value``) leaves the state alone."""
    dlt = ctx.dlt
    seen: dict[str, Any] = {}

    @dlt.resource
    def r(u: Any = dlt.sources.incremental("u", initial_value=10)) -> Any:
        seen["r"] = _as_json(dlt.current.resource_state())
        yield [{"u": i} for i in range(3)]

    @dlt.resource
    def backfill(u: Any = dlt.sources.incremental("u", initial_value=1, end_value=5)) -> Any:
        seen["backfill"] = _as_json(dlt.current.resource_state())
        yield [{"u": i} for i in range(3)]

    pipe = ctx.pipeline("first_state")
    pipe.run([r(), backfill()])
    seen["after"] = _as_json(pipe.state["sources"]["first_state"]["resources"])
    return seen


def _rows_with_cursor(dlt: Any, name: str, initial: Any, rows: list[dict[str, Any]]) -> Any:
    """A resource yielding ``rows`` through a cursor on ``c`` starting at ``initial``."""

    @dlt.resource(name=name)
    def res(c: Any = dlt.sources.incremental("c", initial_value=initial)) -> Any:
        yield rows

    return res


@scenario
def a_cursor_value_of_another_type_fails_the_extract(ctx: Context) -> Any:
    """dlt 1.31 fails the extract with ``IncrementalCursorInvalidCoercion`` (the step's
    exception itself, not a resource's extraction error) when a cursor value does not compare
    with the initial or last value: an int against a text, a datetime against a date."""
    dlt = ctx.dlt
    cases = {
        "text_initial_int_rows": ("2024-01-01", [{"c": 5}]),
        "int_initial_text_rows": (5, [{"c": "7"}]),
        "no_initial_mixed_rows": (None, [{"c": 1}, {"c": "x"}]),
    }
    out: dict[str, Any] = {}
    for name, (initial, rows) in cases.items():
        res = _rows_with_cursor(dlt, name, initial, rows)
        pipe = ctx.pipeline(f"coerce_{name}")
        out[name] = ctx.attempt(lambda pipe=pipe, res=res: pipe.run(res()) and None)
    return out


@scenario
def a_run_primary_key_is_the_key_a_cursor_deduplicates_by(ctx: Context) -> Any:
    """dlt 1.31 applies ``run(primary_key=...)`` to the resource before its cursor binds: rows
    at the last value are deduplicated by that key, over the resource's own key or the row's
    content (a changed row of a key already seen at the boundary is skipped)."""
    dlt = ctx.dlt
    batches = [
        [{"id": 1, "u": 5, "v": "a"}, {"id": 2, "u": 5, "v": "b"}],
        [{"id": 1, "u": 5, "v": "a2"}, {"id": 3, "u": 5, "v": "c"}],
    ]

    @dlt.resource
    def plain(c: Any = dlt.sources.incremental("u")) -> Any:
        yield batches[0]

    @dlt.resource(primary_key="v")
    def keyed(c: Any = dlt.sources.incremental("u")) -> Any:
        yield batches[0]

    pipe = ctx.pipeline("run_key")
    for _ in range(2):
        pipe.run([plain(), keyed()], primary_key="id", write_disposition="merge")
        batches.pop(0) if len(batches) > 1 else None
    resources = pipe.state["sources"]["run_key"]["resources"]
    hashes = {n: sorted(r["incremental"]["u"]["unique_hashes"]) for n, r in resources.items()}
    return {"tables": ctx.tables(pipe), "hashes": hashes}
