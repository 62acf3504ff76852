"""Scenarios of the pipeline and dataset surface: dev mode, the working folder, the dataset's
members (found by differential programs p250-p299)."""

from __future__ import annotations

from typing import Any

from tests.compat.harness import Context
from tests.compat.scenarios import _state, scenario


def _events(dlt: Any, n: int) -> Any:
    @dlt.resource(name="ev")
    def ev(cursor: Any = dlt.sources.incremental("id", initial_value=0)) -> Any:
        yield [{"id": i} for i in range(1, n + 1)]

    return ev


@scenario
def dev_mode_then_production_restores_the_cursor(ctx: Context) -> Any:
    """A pipeline made without dev mode after a dev-mode one starts again from the
    destination's state: the dev run's cursor (rows 4 and 5, loaded elsewhere) is not kept."""
    prod = ctx.pipeline("devprod", dataset_name="prod")
    prod.run(_events(ctx.dlt, 3))
    ctx.pipeline("devprod", dataset_name="prod", dev_mode=True).run(_events(ctx.dlt, 5))
    back = ctx.pipeline("devprod", dataset_name="prod")
    first_run = back.first_run
    back.run(_events(ctx.dlt, 7))
    return {"first_run_after_dev": first_run, "tables": ctx.tables(back), "state": _state(back)}


@scenario
def dropped_pending_package_then_a_run_sends_the_state(ctx: Context) -> Any:
    """A package dropped before it loaded took the state's change with it: the run that
    extracts the same change again sends the state, so a folder restored from the destination
    continues the cursor (was: no state row, and the restored run loaded every row again)."""
    import shutil

    pipe = ctx.pipeline("dropped", dataset_name="d")
    pipe.extract(_events(ctx.dlt, 5))
    pipe.drop_pending_packages()
    pipe.run(_events(ctx.dlt, 5))
    state_rows = ctx.sql(pipe, "SELECT count(*) FROM d._dlt_pipeline_state")
    shutil.rmtree(pipe.working_dir)
    again = ctx.pipeline("dropped", dataset_name="d")
    again.run(_events(ctx.dlt, 6))
    return {
        "state_rows_after_first_run": state_rows,
        "state_rows_at_end": ctx.sql(again, "SELECT count(*) FROM d._dlt_pipeline_state"),
        "loads": ctx.sql(again, "SELECT count(*) FROM d._dlt_loads"),
        "tables": ctx.tables(again),
    }


@scenario
def a_newer_state_in_the_destination_is_taken_at_run(ctx: Context) -> Any:
    """Two working folders of one pipeline (two machines): a run takes the destination's state
    when it is newer than the local one, so the cursor another machine moved is not undone
    (was: rows 4..6 loaded a second time)."""
    folders = {"pipelines_dir": str(ctx.workdir / "machine_a")}
    a = ctx.pipeline("machines", dataset_name="d", **folders)
    a.run(_events(ctx.dlt, 3))
    b = ctx.pipeline("machines", dataset_name="d", pipelines_dir=str(ctx.workdir / "machine_b"))
    b.run(_events(ctx.dlt, 6))
    a = ctx.pipeline("machines", dataset_name="d", **folders)
    a.run(_events(ctx.dlt, 8))
    return {"state": _state(a), "version": a.state["_state_version"], "tables": ctx.tables(a)}


@scenario
def a_replace_that_yields_nothing(ctx: Context) -> Any:
    """A replace with no rows empties a table the pipeline made (its normalize counts it 0);
    into a table never made it loads no package at all."""
    pipe = ctx.pipeline("empty_replace", dataset_name="d")

    @ctx.dlt.resource(write_disposition="replace")
    def never() -> Any:
        yield from []

    out: dict[str, Any] = {}
    pipe.run([{"x": 1, "l": [1, 2]}], table_name="t")
    for label, run in [
        ("existing", lambda: pipe.run([], table_name="t", write_disposition="replace")),
        ("never_made", lambda: pipe.run(never())),
    ]:
        info = run()
        normalized = pipe.last_trace.last_normalize_info
        out[label] = {
            "loads": len(info.loads_ids),
            "row_counts": dict(normalized.row_counts) if normalized else None,
        }
    out["loads_rows"] = ctx.sql(pipe, "SELECT count(*) FROM d._dlt_loads")
    out["tables"] = ctx.tables(pipe)
    return out


@scenario
def refresh_runs_send_the_state(ctx: Context) -> Any:
    """drop_resources and drop_sources reset state: their runs send a state row even when
    the state is as before; drop_data does not."""
    pipe = ctx.pipeline("refresh_state", dataset_name="d")

    @ctx.dlt.source
    def shop() -> Any:
        @ctx.dlt.resource(write_disposition="replace")
        def prices() -> Any:
            yield [{"sku": "x", "p": 1.5}]

        return prices

    counts = []
    for refresh in (None, "drop_data", "drop_resources", "drop_sources"):
        pipe.run(shop(), refresh=refresh)
        counts.append(ctx.sql(pipe, "SELECT count(*) FROM d._dlt_pipeline_state")[0][0])
    return {"state_rows": counts, "tables": ctx.tables(pipe)}
