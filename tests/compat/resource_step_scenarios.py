"""Compatibility scenarios of a resource's steps (``add_map``/``add_filter``/``add_limit``
and their ``insert_at``) and of selecting a source's resources.

They register in :data:`tests.compat.scenarios.SCENARIOS` (``scenarios.py`` imports this
module), so ``tests/compat/record.py`` records them under dlt and
``tests/pipelines/test_compat_dlt.py`` compares them like every other scenario.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.compat.harness import Context
from tests.compat.scenarios import scenario


def _tag(mark: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda row: {**row, "trail": row.get("trail", "") + mark}


@scenario
def insert_at_counts_the_pipe_head(ctx: Context) -> Any:
    """``insert_at`` is an index in the resource's pipe: 0 is the data itself (refused for a
    resource that is not a transformer), 1 the first step after it; limits do not count."""
    dlt = ctx.dlt

    @dlt.resource
    def ids() -> Any:
        for page in range(3):
            yield [{"id": page * 10 + i} for i in range(2)]

    def trails(res: Any) -> list[Any]:
        return sorted({row.get("trail") for row in res})

    out: dict[str, Any] = {}
    for at in (1, 2, 3, 9):
        res = ids().add_map(_tag("a")).add_map(_tag("b"))
        out[f"at_{at}"] = trails(res.add_map(_tag("X"), insert_at=at))
    limited = ids().add_limit(1).add_map(_tag("a"))
    out["after_a_limit"] = trails(limited.add_filter(lambda row: row["id"] < 10, insert_at=1))
    try:
        ids().add_map(_tag("X"), insert_at=0)
        out["at_0"] = "accepted"
    except Exception as exc:  # the outcome is what we compare
        out["at_0"] = type(exc).__name__
    pipe = ctx.pipeline("insert_at")
    pipe.run(ids().add_map(_tag("a")).add_map(_tag("X"), insert_at=1), table_name="rows")
    out["tables"] = ctx.tables(pipe)
    return out


@scenario
def unknown_resources_of_a_source(ctx: Context) -> Any:
    """``with_resources`` and ``resources.select`` of a name the source lacks raise dlt's
    ``ResourcesNotFoundError`` naming the source, the missing and the available ones."""
    dlt = ctx.dlt

    @dlt.source
    def shop() -> Any:
        return dlt.resource([1], name="a"), dlt.resource([2], name="b")

    out: dict[str, Any] = {}
    for name, select in {
        "with_resources": lambda: shop().with_resources("a", "nope"),
        "select": lambda: shop().resources.select("zz"),
    }.items():
        try:
            select()
            out[name] = "selected"
        except Exception as exc:  # the outcome is what we compare
            out[name] = [
                type(exc).__name__,
                sorted(exc.not_found_resources),  # type: ignore[attr-defined]  # dlt's error
                sorted(exc.available_resources),  # type: ignore[attr-defined]  # dlt's error
            ]
    return out


@scenario
def apply_hints_replaces_and_removes(ctx: Context) -> Any:
    """``apply_hints`` with a new write disposition replaces the old one's strategy
    (``upsert`` does not outlive ``merge``); an empty ``merge_key`` or ``schema_contract``
    removes that hint."""
    dlt = ctx.dlt

    @dlt.resource(
        primary_key="id",
        merge_key="id",
        schema_contract="freeze",
        write_disposition={"disposition": "merge", "strategy": "upsert"},
    )
    def items() -> Any:
        yield [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}]

    def declared(res: Any) -> Any:
        table = res.compute_table_schema()
        return {
            "keys": sorted(k for k in table if k not in ("columns", "name", "resource")),
            "strategy": table.get("x-merge-strategy"),
            "columns": {n: sorted(c) for n, c in table["columns"].items()},
        }

    res = items()
    res.apply_hints(write_disposition="replace")
    out: dict[str, Any] = {"replace": declared(res)}
    res.apply_hints(write_disposition="merge", merge_key="", schema_contract={})
    out["merge"] = declared(res)
    pipe = ctx.pipeline("hints_replaced")
    pipe.run(res)
    pipe.run(res)
    table = pipe.default_schema.get_table("items")
    out["stored"] = [table.get("write_disposition"), table.get("x-merge-strategy")]
    out["tables"] = ctx.tables(pipe)
    return out
