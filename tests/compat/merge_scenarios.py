"""Compatibility scenarios of merge write dispositions across runs of one pipeline.

Found by differential programs (p400-p449): what a table keeps from one run to the next when
a later run says less than the first.
"""

from __future__ import annotations

from typing import Any

from tests.compat.harness import Context
from tests.compat.scenarios import scenario


def _rows(n: int) -> list[dict[str, int]]:
    return [{"id": i, "v": n} for i in range(n, n + 3)]


def _strategy(pipe: Any, table: str) -> list[Any]:
    stored = pipe.default_schema.tables[table]
    return [stored.get("write_disposition"), stored.get("x-merge-strategy")]


@scenario
def a_bare_merge_keeps_the_table_strategy(ctx: Context) -> Any:
    """dlt 1.31: ``write_disposition="merge"`` without a strategy keeps the table's strategy
    (scd2, insert-only, upsert), also after an ``append`` run; an explicit one switches it."""
    pipe = ctx.pipeline("sticky")
    out: dict[str, Any] = {}
    scd2 = {"disposition": "merge", "strategy": "scd2"}
    pipe.run(_rows(1), table_name="hist", write_disposition=scd2, primary_key="id")
    pipe.run(_rows(2), table_name="hist", write_disposition="merge", primary_key="id")
    out["hist"] = _strategy(pipe, "hist")
    insert_only = {"disposition": "merge", "strategy": "insert-only"}
    pipe.run(_rows(1), table_name="ins", write_disposition=insert_only, primary_key="id")
    pipe.run(_rows(2), table_name="ins", write_disposition="merge", primary_key="id")
    out["ins"] = _strategy(pipe, "ins")
    upsert = {"disposition": "merge", "strategy": "upsert"}
    pipe.run(_rows(1), table_name="ups", write_disposition=upsert, primary_key="id")
    pipe.run(_rows(2), table_name="ups", write_disposition="append")
    out["ups_after_append"] = _strategy(pipe, "ups")
    pipe.run(_rows(3), table_name="ups", write_disposition="merge")
    out["ups"] = _strategy(pipe, "ups")
    switch = {"disposition": "merge", "strategy": "delete-insert"}
    pipe.run(_rows(3), table_name="ins", write_disposition=switch, primary_key="id")
    out["ins_switched"] = _strategy(pipe, "ins")
    out["tables"] = {k: v for k, v in ctx.tables(pipe).items() if k != "hist"}  # timestamps
    out["hist_rows"] = ctx.sql(
        pipe, "SELECT id, v, _dlt_valid_to IS NULL FROM sticky_dataset.hist ORDER BY id, v"
    )
    return out
