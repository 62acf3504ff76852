"""What ``extract()`` / ``normalize()`` return and what runs with nothing to load do, as a dlt
user reads them. Recorded under dlt 1.31 by ``tests/compat/record_step_infos.py``
(``tests/fixtures/pipeline/step_infos.json``); compared by
``tests/pipelines/test_step_infos_dlt.py``.

Each scenario takes the library (``dlt`` or ``loadstone``) and a fresh folder and returns
plain data: counts, states, names and texts with load ids replaced by ``<ID>``. dlt lists a
normalize's tables in no fixed order (the state's row comes first in some runs, last in
others), so texts keep each block of ``- table: n row(s)`` lines sorted.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

Outcome = dict[str, Any]

#: dlt's members of ``ExtractInfo`` / ``NormalizeInfo`` a ported program reads
EXTRACT_MEMBERS = (
    "asdict", "asstr", "extract_data_info", "finished_at", "first_run", "is_empty",
    "load_packages", "loads_ids", "metrics", "pipeline", "started_at",
)  # fmt: skip
NORMALIZE_MEMBERS = (
    "asdict", "asstr", "finished_at", "first_run", "is_empty", "load_packages", "loads_ids",
    "metrics", "pipeline", "row_counts", "started_at",
)  # fmt: skip


def _pipeline(dlt: Any, workdir: Path, name: str) -> Any:
    return dlt.pipeline(
        name,
        destination=dlt.destinations.duckdb(str(workdir / f"{name}.duckdb")),
        pipelines_dir=str(workdir / "pipelines"),
        dataset_name="e",
    )


def _text(info: Any) -> list[str]:
    """``str(info)`` with load ids as ``<ID>`` and each block of table lines sorted."""
    text = str(info)
    for load_id in info.loads_ids:
        text = text.replace(load_id, "<ID>")
    lines, block = [], []
    for line in [*text.splitlines(), ""]:
        if line.startswith("- "):
            block.append(line)
            continue
        lines += sorted(block)
        block = []
        lines.append(line)
    return lines[:-1]


def _loaded(pipe: Any) -> Outcome:
    """What the destination and the schema hold."""
    with pipe.sql_client() as client:
        loads = client.execute_sql("select count(*) from _dlt_loads")[0][0]
        versions = client.execute_sql("select count(*) from _dlt_version")[0][0]
        tables = client.execute_sql(
            "select table_name from information_schema.tables where table_schema = 'e' order by 1"
        )
    return {
        "dlt_loads": loads,
        "dlt_version": versions,
        "db_tables": [row[0] for row in tables],
        "schema_tables": sorted(pipe.default_schema.tables),
    }


def empty_runs(dlt: Any, workdir: Path) -> Outcome:
    """p11: a resource that yields nothing, and an empty list, after a run that loaded."""

    @dlt.resource
    def r(n: int) -> Any:
        yield from [{"a": i} for i in range(n)]

    pipe = _pipeline(dlt, workdir, "empty_runs")
    out: Outcome = {"first": len(pipe.run(r(2)).loads_ids)}
    second = pipe.run(r(0))
    out["second"] = {
        "loads": len(second.loads_ids),
        "is_empty": second.is_empty,
        "started_at": second.started_at,
        "text": str(second).replace(str(workdir), "<DIR>"),
    }
    out["empty_list"] = len(pipe.run([], table_name="nothing").loads_ids)
    return {**out, **_loaded(pipe)}


def state_only_runs(dlt: Any, workdir: Path) -> Outcome:
    """p12: no rows but a changed resource state loads the state; declared columns alone
    do not make a table."""

    @dlt.resource
    def r(n: int) -> Any:
        dlt.current.resource_state()["calls"] = dlt.current.resource_state().get("calls", 0) + 1
        yield from [{"a": i} for i in range(n)]

    @dlt.resource(table_name="empty_t", columns={"x": {"data_type": "text"}})
    def empty() -> Any:
        yield from []

    pipe = _pipeline(dlt, workdir, "state_only")
    pipe.run(r(2))
    out: Outcome = {"state_only": len(pipe.run(r(0)).loads_ids)}
    out["sources"] = pipe.state["sources"]
    extracted = pipe.extract(r(0))
    out["extract"] = [len(extracted.loads_ids), [p.state for p in extracted.load_packages]]
    out["normalize"] = len(pipe.normalize().loads_ids)
    out["load"] = len(pipe.load().loads_ids)
    out["declared_columns_only"] = len(pipe.run(empty()).loads_ids)
    return {**out, **_loaded(pipe)}


def steps_one_by_one(dlt: Any, workdir: Path) -> Outcome:
    """p13/p17: the infos of ``extract()``, ``normalize()``, ``load()`` and of the trace."""

    @dlt.resource
    def r(n: int) -> Any:
        yield from [{"a": i, "l": [1, 2]} for i in range(n)]

    pipe = _pipeline(dlt, workdir, "steps")
    extracted = pipe.extract(r(3))
    trace = pipe.last_trace
    out: Outcome = {"trace_extract_is_returned": trace.last_extract_info is extracted}
    normalized = pipe.normalize()
    out["trace_normalize_is_returned"] = pipe.last_trace.last_normalize_info is normalized
    loaded = pipe.load()
    for name, info, members in (
        ("extract", extracted, EXTRACT_MEMBERS),
        ("normalize", normalized, NORMALIZE_MEMBERS),
    ):
        metrics = info.metrics[info.loads_ids[0]][0]
        out[name] = {
            "type": type(info).__name__,
            "members": [m for m in members if hasattr(info, m)],
            "loads": len(info.loads_ids),
            "package_type": type(info.load_packages[0]).__name__,
            "state": info.load_packages[0].state,
            "schema_name": info.load_packages[0].schema_name,
            "first_run": info.first_run,
            "is_empty": info.is_empty,
            "pipeline_is_pipe": info.pipeline is pipe,
            "metrics_keys": sorted(metrics),
            "asdict_keys": sorted(info.asdict()),
            "items": {t: m.items_count for t, m in metrics["table_metrics"].items()},
            "text": _text(info),
        }
    out["extract"]["data_info"] = extracted.extract_data_info
    out["extract"]["new_jobs"] = sorted(
        j.job_file_info.table_name for j in extracted.load_packages[0].jobs["new_jobs"]
    )
    out["normalize"]["row_counts"] = normalized.row_counts
    out["load"] = [len(loaded.loads_ids), loaded.load_packages[0].state]
    out["trace_steps"] = [step.step for step in pipe.last_trace.steps]
    nothing = pipe.normalize()
    out["normalize_nothing"] = {
        "type": type(nothing).__name__,
        "loads": len(nothing.loads_ids),
        "is_empty": nothing.is_empty,
        "row_counts": nothing.row_counts,
        "text": str(nothing),
    }
    return out


def run_trace_infos(dlt: Any, workdir: Path) -> Outcome:
    """p17: the trace's step infos of a ``run()`` print as dlt's."""
    pipe = _pipeline(dlt, workdir, "run_trace")
    pipe.run([{"a": 1, "b": [1, 2]}], table_name="t")
    trace = pipe.last_trace
    return {
        "normalize_type": type(trace.last_normalize_info).__name__,
        "normalize_text": _text(trace.last_normalize_info),
        "extract_type": type(trace.last_extract_info).__name__,
        "extract_text": _text(trace.last_extract_info),
    }


def one_empty_resource_of_two(dlt: Any, workdir: Path) -> Outcome:
    """A source of two resources, one yielding nothing: its table is not made."""

    @dlt.resource
    def full() -> Any:
        yield [{"a": 1}, {"a": 2}]

    @dlt.resource(columns={"x": {"data_type": "text"}})
    def nothing() -> Any:
        yield from []

    @dlt.source
    def two() -> Any:
        return full(), nothing()

    pipe = _pipeline(dlt, workdir, "two")
    extracted = pipe.extract(two())
    metrics = extracted.metrics[extracted.loads_ids[0]][0]
    out: Outcome = {
        "extract_loads": len(extracted.loads_ids),
        "data_info": extracted.extract_data_info,
        "items": {t: m.items_count for t, m in metrics["table_metrics"].items()},
        "dag": [list(edge) for edge in metrics["dag"]],
        "schema_name": extracted.load_packages[0].schema_name,
    }
    out["normalize_rows"] = pipe.normalize().row_counts
    out["load"] = len(pipe.load().loads_ids)
    return {**out, **_loaded(pipe)}


def extract_nothing_then_steps(dlt: Any, workdir: Path) -> Outcome:
    """``extract()`` of an empty resource lists a package; normalize and load drop it."""

    @dlt.resource
    def r(n: int) -> Any:
        yield from [{"a": i} for i in range(n)]

    pipe = _pipeline(dlt, workdir, "extract_nothing")
    pipe.run(r(1))
    extracted = pipe.extract(r(0))
    out: Outcome = {
        "extract": [len(extracted.loads_ids), extracted.is_empty, extracted.first_run],
        "extract_text": _text(extracted),
    }
    normalized = pipe.normalize()
    out["normalize"] = [len(normalized.loads_ids), str(normalized)]
    out["load"] = len(pipe.load().loads_ids)
    return {**out, **_loaded(pipe)}


def incremental_without_new_rows(dlt: Any, workdir: Path) -> Outcome:
    """An incremental run twice over the same rows: the second loads what dlt loads."""

    @dlt.resource(primary_key="id")
    def rows(updated: Any = dlt.sources.incremental("id")) -> Any:
        yield [{"id": 1}, {"id": 2}]

    pipe = _pipeline(dlt, workdir, "incremental")
    first = pipe.run(rows())
    second = pipe.run(rows())
    third = pipe.run(rows())
    out: Outcome = {"loads": [len(i.loads_ids) for i in (first, second, third)]}
    return {**out, **_loaded(pipe)}


def replace_with_nothing(dlt: Any, workdir: Path) -> Outcome:
    """A replace resource that yields nothing after a load: what happens to its table."""

    @dlt.resource(write_disposition="replace")
    def snapshot(n: int) -> Any:
        yield from [{"a": i} for i in range(n)]

    pipe = _pipeline(dlt, workdir, "replace_nothing")
    pipe.run(snapshot(2))
    out: Outcome = {"loads": len(pipe.run(snapshot(0)).loads_ids)}
    with pipe.sql_client() as client:
        out["rows"] = client.execute_sql("select count(*) from snapshot")[0][0]
    return {**out, **_loaded(pipe)}


def materialized_table(dlt: Any, workdir: Path) -> Outcome:
    """``dlt.mark.materialize_table_schema()``: no rows, yet a load that makes the table."""

    @dlt.resource(columns={"id": {"data_type": "bigint"}, "msg": {"data_type": "text"}})
    def faults() -> Any:
        yield dlt.mark.materialize_table_schema()

    pipe = _pipeline(dlt, workdir, "materialized")
    out: Outcome = {"loads": len(pipe.run(faults()).loads_ids)}
    return {**out, **_loaded(pipe)}


def dag_and_resource_metrics(dlt: Any, workdir: Path) -> Outcome:
    """An extract's ``dag`` and ``resource_metrics`` for the shapes a program gives: a list,
    a pipe, a source with a transformer chain, its child alone, two resources of one table."""

    @dlt.resource(table_name="people")
    def users() -> Any:
        yield [{"id": 1}, {"id": 2}]

    @dlt.transformer(data_from=users, table_name=lambda x: "t_" + str(x["id"] % 2))
    def split(page: Any) -> Any:
        yield from page

    @dlt.transformer(data_from=split)
    def more(item: Any) -> Any:
        yield {"m": item["id"]}

    @dlt.resource
    def other() -> Any:
        yield {"o": 1}

    @dlt.resource(table_name="people")
    def users2() -> Any:
        yield {"id": 9}

    @dlt.source
    def src() -> Any:
        return users, split, more, other

    shapes = {
        "list": lambda: [users, split],
        "pipe": lambda: users | split,
        "source": src,
        "child_only": lambda: src().with_resources("more"),
        "shared_table": lambda: [users, users2],
    }
    out: Outcome = {}
    for name, make in shapes.items():
        info = _pipeline(dlt, workdir, f"dag_{name}").extract(make())
        metrics = info.metrics[info.loads_ids[0]][0]
        out[name] = {
            "resources": {r: m.items_count for r, m in metrics["resource_metrics"].items()},
            "dag": [list(edge) for edge in metrics["dag"]],
            "hints": sorted(metrics["hints"]),
        }
    return out


SCENARIOS: dict[str, Callable[[Any, Path], Outcome]] = {
    "dag_and_resource_metrics": dag_and_resource_metrics,
    "empty_runs": empty_runs,
    "state_only_runs": state_only_runs,
    "steps_one_by_one": steps_one_by_one,
    "run_trace_infos": run_trace_infos,
    "one_empty_resource_of_two": one_empty_resource_of_two,
    "extract_nothing_then_steps": extract_nothing_then_steps,
    "incremental_without_new_rows": incremental_without_new_rows,
    "replace_with_nothing": replace_with_nothing,
    "materialized_table": materialized_table,
}
