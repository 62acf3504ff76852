"""Compatibility scenarios of incremental cursors across runs of one pipeline.

Found by differential programs (p400-p449): where a cursor sits among a resource's steps, and
what it keeps in state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.compat.harness import Context
from tests.compat.scenarios import scenario


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
