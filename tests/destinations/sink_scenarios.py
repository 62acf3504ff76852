"""Programs with a custom destination (a sink function), run under dlt 1.31 and under loadstone.

Each scenario takes the module imported as ``dlt`` (dlt itself, or ``loadstone``) and a
working folder, runs one pipeline and returns what the sink saw: its calls (table, kind of
items, rows with their types spelled out) and the table schemas passed, plus the outcome
(exception classes, names). ``python tests/destinations/sink_scenarios.py`` run with dlt
1.31's interpreter records ``tests/fixtures/sink/dlt_outcomes.json``; the tests run the same
scenarios with loadstone and compare (``comparable``).
"""

from __future__ import annotations

import datetime
import decimal
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

FIXTURE = Path(__file__).parent.parent / "fixtures" / "sink" / "dlt_outcomes.json"


def enc(v: Any) -> Any:
    """A value with its type spelled out (JSON cannot tell a date from a string)."""
    if isinstance(v, bool) or v is None or isinstance(v, int | str):
        return v
    if isinstance(v, float):
        return {"float": repr(v)}
    if isinstance(v, datetime.datetime):  # the zone's object too: dlt's is timezone.utc
        return {"datetime": v.isoformat(), "tzinfo": repr(v.tzinfo)}
    if isinstance(v, datetime.date):
        return {"date": v.isoformat()}
    if isinstance(v, decimal.Decimal):
        return {"decimal": str(v)}
    if isinstance(v, dict):
        return {"dict": {k: enc(x) for k, x in v.items()}}
    if isinstance(v, list):
        return {"list": [enc(x) for x in v]}
    return {"other": type(v).__name__, "repr": repr(v)}


def rows_of(items: Any) -> tuple[str, list[dict[str, Any]]]:
    if hasattr(items, "to_pylist"):
        return "arrow", [{k: enc(x) for k, x in r.items()} for r in items.to_pylist()]
    return type(items).__name__, [{k: enc(x) for k, x in r.items()} for r in items]


def exc_chain(e: BaseException | None) -> list[str]:
    chain = []
    while e is not None:
        chain.append(type(e).__name__)
        e = e.__cause__ or e.__context__
    return chain


class Recorder:
    """A logging sink: every call's table, items and the table schema passed."""

    def __init__(self) -> None:
        self.calls: list[Any] = []
        self.tables: dict[str, Any] = {}

    def __call__(self, items: Any, table: dict[str, Any]) -> None:
        kind, rows = rows_of(items)
        self.calls.append({"table": table["name"], "kind": kind, "rows": rows})
        self.tables[table["name"]] = {
            "parent": table.get("parent"),
            "write_disposition": table.get("write_disposition"),
            "columns": {
                n: {k: c[k] for k in ("data_type", "nullable", "primary_key") if k in c}
                for n, c in table.get("columns", {}).items()
            },
        }

    def outcome(self, **extra: Any) -> dict[str, Any]:
        return {"calls": self.calls, "tables": self.tables, **extra}


def _data() -> list[dict[str, Any]]:
    def row(i: int, tags: list[str], items: list[dict[str, int]]) -> dict[str, Any]:
        return {
            "id": i,
            "name": "abc"[i - 1],
            "ts": f"2024-01-0{i + 1}T03:04:05Z",
            "amount": decimal.Decimal(["1.50", "2.25", "3"][i - 1]),
            "d": datetime.date(2024, 1, i + 1),
            "tags": tags,
            "child": {"k": i, "items": items},
            "f": [1.5, 2.0, 3.25][i - 1],
            "flag": i != 2,
            "nothing": None,
        }

    return [row(1, ["x", "y"], [{"v": 1}, {"v": 2}]), row(2, [], []), row(3, ["z"], [{"v": 3}])]


def _pipeline(dlt: ModuleType, work: Path, dest: Any) -> Any:
    return dlt.pipeline(
        "sinkprobe", destination=dest, pipelines_dir=str(work / "p"), dataset_name="ds"
    )


def basic(dlt: ModuleType, work: Path) -> dict[str, Any]:
    """batch_size=2, defaults otherwise: nested data stays JSON in the root table."""
    rec = Recorder()
    _pipeline(dlt, work, dlt.destination(batch_size=2)(rec)).run(_data(), table_name="things")
    return rec.outcome()


def decorator_defaults(dlt: ModuleType, work: Path) -> dict[str, Any]:
    """``@dlt.destination`` bare: 10 rows a batch, named after the function."""
    rec = Recorder()

    @dlt.destination
    def my_sink(items: Any, table: Any) -> None:
        rec(items, table)

    pipeline = _pipeline(dlt, work, my_sink)
    pipeline.run(_data(), table_name="things")
    return rec.outcome(destination_name=pipeline.destination.destination_name)


def nesting(depth: int) -> Callable[[ModuleType, Path], dict[str, Any]]:
    def scenario(dlt: ModuleType, work: Path) -> dict[str, Any]:
        rec = Recorder()
        dest = dlt.destination(batch_size=100, max_table_nesting=depth)(rec)
        _pipeline(dlt, work, dest).run(_data(), table_name="things")
        return rec.outcome()

    scenario.__doc__ = f"max_table_nesting={depth}: nested tables named with direct's ▶"
    return scenario


def with_dlt_columns(dlt: ModuleType, work: Path) -> dict[str, Any]:
    """skip_dlt_columns_and_tables=False: row keys and the _dlt_pipeline_state row."""
    rec = Recorder()
    dest = dlt.destination(batch_size=100, skip_dlt_columns_and_tables=False, max_table_nesting=5)
    _pipeline(dlt, work, dest(rec)).run(_data(), table_name="things")
    return rec.outcome()


def parquet(dlt: ModuleType, work: Path) -> dict[str, Any]:
    """loader_file_format="parquet": Arrow record batches, JSON as text, decimal128(38, 9)."""
    rec = Recorder()
    dest = dlt.destination(batch_size=2, loader_file_format="parquet")(rec)
    _pipeline(dlt, work, dest).run(_data(), table_name="things")
    return rec.outcome()


def batches_of(size: int, rows: int, file_format: str | None = None) -> Callable[..., Any]:
    def scenario(dlt: ModuleType, work: Path) -> dict[str, Any]:
        rec = Recorder()
        dest = dlt.destination(batch_size=size, loader_file_format=file_format)(rec)
        _pipeline(dlt, work, dest).run([{"id": i} for i in range(rows)], table_name="things")
        return rec.outcome()

    scenario.__doc__ = f"{rows} rows in batches of {size} ({file_format or 'typed-jsonl'})"
    return scenario


def two_resources(dlt: ModuleType, work: Path) -> dict[str, Any]:
    """A source of two resources, one with a nested table."""
    rec = Recorder()

    @dlt.resource(name="r1")
    def r1() -> Any:
        yield [{"id": i, "sub": [{"x": i}]} for i in range(3)]

    @dlt.resource(name="r2")
    def r2() -> Any:
        yield [{"k": i} for i in range(2)]

    @dlt.source
    def src() -> Any:
        return r1, r2

    dest = dlt.destination(batch_size=2, max_table_nesting=2)(rec)
    _pipeline(dlt, work, dest).run(src())
    return rec.outcome()


def fail_and_rerun(dlt: ModuleType, work: Path) -> dict[str, Any]:
    """The sink raises on the third batch: tried 5 times, the run fails; the next run sends
    that batch and the rest, and a third run sends nothing."""
    events: list[Any] = []
    broken = {"on": True}

    def flaky(items: Any, table: Any) -> None:
        ids = [r["id"] for r in rows_of(items)[1]]
        if broken["on"] and ids[0] >= 4:
            events.append({"raised_on": ids})
            raise ValueError("sink down")
        events.append({"delivered": ids})

    pipeline = _pipeline(dlt, work, dlt.destination(batch_size=2)(flaky))
    outcome: dict[str, Any] = {}
    try:
        pipeline.run([{"id": i} for i in range(9)], table_name="things")
    except Exception as e:
        outcome["error"] = exc_chain(e)[:1] + exc_chain(e)[-1:]
        outcome["step"] = getattr(e, "step", None)
    events.append("rerun")
    broken["on"] = False
    pipeline.run()
    events.append("third run")
    pipeline.run()
    return {"calls": events, **outcome}


def function_form(dlt: ModuleType, work: Path) -> dict[str, Any]:
    """dlt.destination(func, ...) called as a function, named by name=."""
    rec = Recorder()
    pipeline = _pipeline(dlt, work, dlt.destination(rec, batch_size=5, name="named_sink"))
    pipeline.run([{"id": 1}], table_name="things")
    return rec.outcome(destination_name=pipeline.destination.destination_name)


def factory_form(dlt: ModuleType, work: Path) -> dict[str, Any]:
    """dlt.destinations.destination(func, destination_name=..., batch_size=...)."""
    rec = Recorder()
    dest = dlt.destinations.destination(rec, destination_name="fact_sink", batch_size=5)
    pipeline = _pipeline(dlt, work, dest)
    pipeline.run([{"id": 1}], table_name="things")
    return rec.outcome(destination_name=pipeline.destination.destination_name)


def configured_arguments(dlt: ModuleType, work: Path) -> dict[str, Any]:
    """The sink's extra arguments from DESTINATION__MY_SINK__<ARG>; a plain default kept."""
    calls: list[Any] = []
    os.environ["DESTINATION__MY_SINK__API_KEY"] = "s3cr3t"
    os.environ["DESTINATION__MY_SINK__REGION"] = "eu"
    try:

        @dlt.destination(batch_size=5)
        def my_sink(
            items: Any,
            table: Any,
            api_key: str = dlt.secrets.value,
            region: str = dlt.config.value,
            other: str = "dflt",
        ) -> None:
            calls.append({"api_key": api_key, "region": region, "other": other})

        _pipeline(dlt, work, my_sink).run([{"id": 1}], table_name="things")
    finally:
        del os.environ["DESTINATION__MY_SINK__API_KEY"], os.environ["DESTINATION__MY_SINK__REGION"]
    return {"calls": calls}


def missing_secret(dlt: ModuleType, work: Path) -> dict[str, Any]:
    """A secret argument configured nowhere: the run fails before the sink is called."""
    calls: list[Any] = []

    @dlt.destination(batch_size=5)
    def my_sink(items: Any, table: Any, api_key: str = dlt.secrets.value) -> None:
        calls.append(api_key)

    try:
        _pipeline(dlt, work, my_sink).run([{"id": 1}], table_name="things")
    except Exception as e:
        return {"calls": calls, "error": [exc_chain(e)[0], exc_chain(e)[-1]]}
    return {"calls": calls}


def dataset_of_sink(dlt: ModuleType, work: Path) -> dict[str, Any]:
    """pipeline.dataset() is made; reading it raises SqlClientNotAvailable."""
    rec = Recorder()
    pipeline = _pipeline(dlt, work, dlt.destination(batch_size=5)(rec))
    pipeline.run([{"id": 1}], table_name="things")
    dataset = pipeline.dataset()
    try:
        dataset["things"].fetchall()
    except Exception as e:
        return rec.outcome(error=exc_chain(e)[0], message=str(e))
    return rec.outcome()


def nulls_left_out(dlt: ModuleType, work: Path) -> dict[str, Any]:
    """A null value's key is not in the row; a column only ever null is not created."""
    rec = Recorder()
    dest = dlt.destination(batch_size=10)(rec)
    data = [{"a": 1, "b": "x", "c": None}, {"a": 2, "b": None}, {"a": None, "b": "y"}]
    _pipeline(dlt, work, dest).run(data, table_name="things")
    return rec.outcome()


def snake_case_naming(dlt: ModuleType, work: Path) -> dict[str, Any]:
    """naming_convention="snake_case" names tables and columns as other destinations do."""
    rec = Recorder()
    dest = dlt.destination(batch_size=10, naming_convention="snake_case", max_table_nesting=2)
    data = [{"Big Name": 1, "sub": [{"X y": 1}], "o": {"p": 2}}]
    _pipeline(dlt, work, dest(rec)).run(data, table_name="My Table")
    return rec.outcome()


def merge_disposition(dlt: ModuleType, work: Path) -> dict[str, Any]:
    """A merge resource: the sink gets every row and the table's disposition and keys."""
    rec = Recorder()

    @dlt.resource(name="merged", primary_key="id", write_disposition="merge")
    def merged() -> Any:
        yield [{"id": 1, "v": "a"}, {"id": 1, "v": "b"}]

    _pipeline(dlt, work, dlt.destination(batch_size=10)(rec)).run(merged(), table_name="things")
    return rec.outcome()


def incremental_after_failure(dlt: ModuleType, work: Path) -> dict[str, Any]:
    """A cursor's rows the sink refused once arrive on the next run, each once."""
    rec = Recorder()
    failing = {"on": True}

    @dlt.resource(name="events")
    def events(cursor: Any = dlt.sources.incremental("id", initial_value=0)) -> Any:
        yield [{"id": i} for i in range(1, 6) if i > cursor.start_value]

    def sink(items: Any, table: Any) -> None:
        if failing["on"]:
            raise ValueError("down")
        rec(items, table)

    pipeline = _pipeline(dlt, work, dlt.destination(batch_size=2)(sink))
    try:
        pipeline.run(events())
    except Exception as e:
        rec.calls.append({"failed": exc_chain(e)[0]})
    failing["on"] = False
    pipeline.run(events())
    pipeline.run(events())
    return rec.outcome()


def _file_rows(path: str) -> list[dict[str, Any]]:
    """The rows of a load file given to a sink: typed values as their marked text."""
    if path.endswith(".parquet"):
        import pyarrow.parquet as pq

        return [{k: enc(x) for k, x in r.items()} for r in pq.read_table(path).to_pylist()]
    import gzip

    with gzip.open(path, "rt", encoding="utf-8") as lines:
        return [{"line": [enc(row) for row in json.loads(line)]} for line in lines]


def file_paths(file_format: str | None) -> Callable[[ModuleType, Path], dict[str, Any]]:
    """batch_size=0: one call per load file, its path as ``items`` (named
    ``<table>.<id>.0.<format>``, ``_dlt_*`` columns in it); a root and a nested table."""

    def scenario(dlt: ModuleType, work: Path) -> dict[str, Any]:
        calls: list[Any] = []

        def sink(items: Any, table: Any) -> None:
            name = os.path.basename(items).split(".")
            calls.append(
                {
                    "table": table["name"],
                    "kind": type(items).__name__,
                    "file": [name[0], *name[2:]],
                    "rows": _file_rows(items),
                    "columns": sorted(table["columns"]),
                }
            )

        dest = dlt.destination(batch_size=0, loader_file_format=file_format, max_table_nesting=1)
        data = [{**row, "t": datetime.time(1, 2, 3), "b": b"\x00\xff"} for row in _data()]
        _pipeline(dlt, work, dest(sink)).run(data, table_name="things")
        return {"calls": calls}

    return scenario


SCENARIOS: dict[str, Callable[[ModuleType, Path], dict[str, Any]]] = {
    "basic": basic,
    "decorator_defaults": decorator_defaults,
    "nesting_1": nesting(1),
    "nesting_5": nesting(5),
    "with_dlt_columns": with_dlt_columns,
    "parquet": parquet,
    "batches_3_of_7": batches_of(3, 7),
    "batches_1_of_3": batches_of(1, 3),
    "parquet_batches_3_of_7": batches_of(3, 7, "parquet"),
    "two_resources": two_resources,
    "fail_and_rerun": fail_and_rerun,
    "function_form": function_form,
    "factory_form": factory_form,
    "configured_arguments": configured_arguments,
    "missing_secret": missing_secret,
    "dataset_of_sink": dataset_of_sink,
    "nulls_left_out": nulls_left_out,
    "snake_case_naming": snake_case_naming,
    "merge_disposition": merge_disposition,
    "incremental_after_failure": incremental_after_failure,
    "file_paths_typed_jsonl": file_paths(None),
    "file_paths_parquet": file_paths("parquet"),
}

#: dlt's typed-JSON marker before a decimal's text
DECIMAL_MARKER = "\uf026"
#: keys whose values differ from run to run (row ids, load ids, the state blob and its hash)
VOLATILE = {"_dlt_id", "_dlt_load_id", "_dlt_parent_id", "_dlt_root_id", "state", "version_hash"}


def comparable(outcome: dict[str, Any]) -> dict[str, Any]:
    """An outcome without what changes from run to run, calls grouped by table in order
    (dlt sends tables on threads: the order between tables is not fixed), decimals by value
    (dlt's typed-jsonl keeps ``1.50``; the rows come back from Parquet as ``1.500000000``), in
    a typed-jsonl file too (a decimal's text after its marker, ``"\\uf0261.50"``)."""

    def norm(v: Any) -> Any:
        if isinstance(v, str) and v.startswith(DECIMAL_MARKER):
            return DECIMAL_MARKER + str(decimal.Decimal(v[1:]).normalize())
        if isinstance(v, dict):
            if set(v) == {"decimal"}:
                return {"decimal": str(decimal.Decimal(v["decimal"]).normalize())}
            if "datetime" in v and v["datetime"][:4] > "2025":  # a created_at: now
                return {**v, "datetime": "now"}
            return {k: norm(x) for k, x in v.items() if k not in VOLATILE}
        if isinstance(v, list):
            return [norm(x) for x in v]
        return v

    by_table: dict[str, list[Any]] = {}
    for call in outcome["calls"]:
        key = call["table"] if isinstance(call, dict) and "table" in call else "_events"
        by_table.setdefault(key, []).append(norm(call))
    return {**{k: norm(v) for k, v in outcome.items() if k != "calls"}, "calls": by_table}


if __name__ == "__main__":  # record: <dlt 1.31's python> tests/destinations/sink_scenarios.py
    import importlib
    import tempfile

    dlt_module = importlib.import_module("dlt")  # dlt 1.31's own venv; not a dependency

    recorded = {}
    for name, scenario in SCENARIOS.items():
        work = Path(tempfile.mkdtemp())
        os.chdir(work)
        recorded[name] = scenario(dlt_module, work)
        print(name, file=sys.stderr)
    recorded["_recorded_with"] = {"dlt": dlt_module.__version__}
    FIXTURE.write_text(json.dumps(recorded, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
