"""``loadstone pipeline NAME info|show|schema|trace|report|load|drop|load-package|...``.

Inspect a pipeline from the command line: what it is and what is pending (``info``), what
it loaded -- tables with row counts and the load history from ``_dlt_loads`` (``show``) --,
its schema as YAML, JSON or a diagram (``schema --format mermaid|dbml|dot``), the steps of
its last run (``trace``), all of it as one HTML page (``report``), finishing the
packages a crashed or failed run left behind without extracting anything new (``load``), and
dropping them instead (``drop-pending-packages``, refused while a run holds the pipeline).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from loadstone.cli.run_command import add_lock_timeout, print_notice
from loadstone.exceptions import LoadstoneError, PipelineNotFound

if TYPE_CHECKING:
    from loadstone.pipelines.pipeline import Pipeline
    from loadstone.schema import Schema
    from loadstone.storage.load_package import LoadPackage

ACTIONS = (
    "info",
    "show",
    "schema",
    "trace",
    "report",
    "load",
    "drop-pending-packages",
    "abort-packages",  # dlt 1.31's name of drop-pending-packages
    # dlt's managing commands (loadstone.cli.pipeline_admin)
    "drop",
    "load-package",
    "failed-jobs",
    "sync",
)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``pipeline`` to the ``loadstone`` parser."""
    parser = subparsers.add_parser(
        "pipeline",
        help="inspect and manage a pipeline: info, show, schema, trace, report, load, drop, "
        "load-package, failed-jobs, sync, drop-pending-packages (abort-packages)",
        description="Inspect a pipeline and what it loaded.",
    )
    parser.add_argument("name", metavar="PIPELINE", nargs="?", help="pipeline name")
    parser.add_argument("action", choices=ACTIONS, nargs="?", default="info")
    parser.add_argument(
        "targets",
        nargs="*",
        metavar="ARG",
        help="drop: resource names; load-package: a load id",
    )
    parser.add_argument("--all", action="store_true", help="drop: every data table")
    parser.add_argument(
        "--list-pipelines", "-l", action="store_true", help="list the pipelines and exit"
    )
    parser.add_argument("--pipelines-dir", default=None, help="where pipelines keep their state")
    parser.add_argument(
        "--format",
        choices=("yaml", "json", "mermaid", "dbml", "dot"),
        default="yaml",
        help="schema: output format (a document, or a diagram: mermaid, dbml, dot)",
    )
    parser.add_argument(
        "--output",
        "-o",
        default=None,
        metavar="FILE",
        help="report: the HTML file to write (default: <pipeline>_report.html here)",
    )
    parser.add_argument("--limit", type=int, default=20, help="load history rows shown")
    parser.add_argument(
        "--json",
        action="store_true",
        help="trace: print the last run's trace as JSON (engine, Spark target, chunks)",
    )
    add_lock_timeout(parser)
    parser.set_defaults(handler=pipeline_command)


def pipelines_base(pipelines_dir: str | None) -> Path:
    from loadstone.pipelines.pipeline import default_pipelines_dir

    return default_pipelines_dir() if pipelines_dir is None else Path(pipelines_dir)


#: action -> text of its outcome (loadstone.cli.pipeline_admin)
ADMIN_ACTIONS: dict[str, Callable[[Pipeline, argparse.Namespace], str]] = {
    "drop": lambda pipe, args: _admin().drop_text(pipe, args.targets, args.all),
    "load-package": lambda pipe, args: _admin().load_package_text(
        pipe, args.targets[0] if args.targets else None
    ),
    "failed-jobs": lambda pipe, args: _admin().failed_jobs_text(pipe),
    "sync": lambda pipe, args: _admin().sync_text(pipe),
}


def _admin() -> ModuleType:
    from loadstone.cli import pipeline_admin

    return pipeline_admin


def open_pipeline(
    name: str, pipelines_dir: str | None, lock_timeout: float | None = None
) -> Pipeline:
    from loadstone.pipelines.pipeline import Pipeline
    from loadstone.storage.state import load_local

    base = pipelines_base(pipelines_dir)
    working = base / name
    # a first run killed after extract has packages but no state yet: it exists all the same
    if load_local(working) is None and not (working / "packages").is_dir():
        raise PipelineNotFound(
            f"pipeline {name!r} not found in {base} (run it first, or pass --pipelines-dir)"
        )
    return Pipeline(name, pipelines_dir=base, progress=print_notice, lock_timeout=lock_timeout)


def _table(rows: Sequence[tuple[object, ...]], header: tuple[str, ...]) -> str:
    cells = [list(header), *[["" if v is None else str(v) for v in row] for row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    )


def info_text(pipe: Pipeline) -> str:
    state = pipe.state
    lines = [
        f"pipeline:        {pipe.pipeline_name}",
        f"working folder:  {pipe.working_dir}",
        f"destination:     {pipe.destination.name}",
        f"dataset:         {state.get('dataset_name') or pipe.dataset_name}",
        f"schemas:         {', '.join(state.get('schema_names') or []) or '-'}"
        f" (default: {state.get('default_schema_name') or '-'})",
        f"state version:   {state.get('_state_version', 0)}",
    ]
    running = pipe.is_running_elsewhere
    if running:
        lines.append(f"running:         yes, {pipe.running_holder()}")
    elif pipe.lock_status.holder_dead:
        lines.append(
            f"running:         no: {pipe.running_holder()} died; a process it left behind "
            "still holds the lock, which the next run takes over"
        )
    committed = [] if running else _committed(pipe)
    packages = pipe.list_packages()
    pending = [p for p in packages if p.is_pending and p.root.name not in committed]
    loaded = [p for p in packages if p.damage is None and p.state == "loaded"]
    lines.append(f"loaded packages: {len(loaded) + len(committed)}")
    lines += [
        f"  {load_id}  loaded (committed at the destination; the next run or `load` records "
        "it, without loading or extracting it again)"
        for load_id in committed
    ]
    lines.append(f"pending packages: {len(pending)}")
    for package in pending:
        lines.append(f"  {_package_line(package)}")
    if pending and running:
        lines.append("  (the running process is working on them: wait for it to finish)")
    elif pending:
        lines.append(
            f"  (`loadstone pipeline {pipe.pipeline_name} load` finishes them, so does the next "
            "run; `drop-pending-packages` drops them)"
        )
    failed = pipe.failed_packages()
    lines.append(f"failed packages: {len(failed)} (kept in {pipe.failed_packages_dir})")
    lines += [f"  {load_id}  {cause}" for load_id, cause in failed]
    return "\n".join(lines)


def _package_line(package: LoadPackage) -> str:
    damage = package.damage
    if damage is not None:
        return f"{package.root.name}  damaged: {damage}"
    return (
        f"{package.load_id}  {package.state}  schema {package.schema_name}  "
        f"{package.size_bytes() / 1_000_000:.2f} MB"
    )


def _committed(pipe: Pipeline) -> list[str]:
    """Pending packages the destination committed (a crash hit between the two)."""
    try:
        return pipe.committed_packages()
    except LoadstoneError:
        return []  # the destination cannot be reached: the packages' own states are shown


def show_text(pipe: Pipeline, limit: int) -> str:
    # one connection for the whole page: each query opening its own made 9 (~0.2 s CPU)
    from loadstone.destinations.dataset import stored_row_counts

    with pipe.dataset() as dataset:
        counts = stored_row_counts(dataset)
        out = [f"dataset {dataset.dataset_name} in {pipe.destination.name}", ""]
        out.append(_table(counts, ("table", "rows")) if counts else "(no data tables)")
        if "_dlt_loads" in dataset.stored_tables:
            loads = dataset.query(
                f"SELECT load_id, schema_name, status, CAST(inserted_at AS VARCHAR) FROM "
                f"{dataset.qualified('_dlt_loads')} ORDER BY load_id DESC LIMIT {int(limit)}"
            ).fetchall()
            out += ["", "load history (_dlt_loads, newest first):"]
            out.append(_table(loads, ("load_id", "schema_name", "status", "inserted_at")))
    return "\n".join(out)


def pipeline_command(args: argparse.Namespace) -> int:
    from loadstone.cli import pipeline_admin

    if args.list_pipelines:
        print(pipeline_admin.list_pipelines_text(pipelines_base(args.pipelines_dir)))
        return 0
    if args.name is None:
        raise PipelineNotFound("name a pipeline (or pass --list-pipelines)")
    pipe = open_pipeline(args.name, args.pipelines_dir, args.lock_timeout)
    if args.action in ADMIN_ACTIONS:
        print(ADMIN_ACTIONS[args.action](pipe, args))
    elif args.action == "info":
        print(info_text(pipe))
        print(pipeline_admin.state_text(pipe))
    elif args.action == "show":
        print(show_text(pipe, args.limit))
    elif args.action == "schema":
        print(schema_text(pipe.default_schema, args.format), end="")
    elif args.action == "report":
        from loadstone.report import write_report

        path = write_report(pipe, args.output or f"{args.name}_report.html")
        print(f"wrote {path}")
    elif args.action == "trace":
        trace = pipe.last_trace
        if trace is None:
            print(f"pipeline {args.name} has no trace yet")
            return 1
        print(json.dumps(trace, indent=1, default=str) if args.json else trace_text(trace))
    elif args.action == "load":
        print(pipe.run())
    elif args.action in ("drop-pending-packages", "abort-packages"):
        dropped = pipe.drop_pending_packages()
        print(f"dropped {len(dropped)} pending package(s)" + "".join(f"\n  {d}" for d in dropped))
    return 0


def schema_text(schema: Schema, fmt: str) -> str:
    """The schema in ``fmt``: a document (yaml, json) or a diagram (mermaid, dbml, dot)."""
    from loadstone.schema import diagram

    if fmt == "json":
        return json.dumps(schema.to_dict(), indent=2, default=str) + "\n"
    if fmt in diagram.FORMATS:
        return diagram.render(schema.to_dict(bump_version=False), fmt)
    return str(schema.to_pretty_yaml())


#: what the MB figure of each step measures (the size of what the step wrote or loaded)
_STEP_BYTES = {
    "extract": "MB extracted (JSON lines / files written)",
    "normalize": "MB normalized (Parquet written)",
    "load": "MB loaded (the normalized files)",
}


def trace_text(trace: Mapping[str, Any]) -> str:
    lines = [f"last run of pipeline {trace.get('pipeline_name')}"]
    if trace.get("error"):
        lines.append(f"FAILED: {trace['error']}")
    steps = trace.get("steps") or {}
    for name in ("extract", "normalize", "load"):
        step = steps.get(name)
        if step:
            lines.append(
                f"  {name:<9} {step['elapsed']:>8.2f} s  {step['rows']:>10} rows  "
                f"{step['bytes'] / 1_000_000:>8.2f} {_STEP_BYTES[name]}  {step['files']:>4} files  "
                f"started {step['started_at']}"
            )
    for load_id in trace.get("loads_ids") or []:
        lines.append(f"  loaded package {load_id}")
    counts = trace.get("row_counts") or {}
    if counts:
        lines.append("  rows per table:")
        for table, rows in sorted(counts.items()):
            lines.append(f"    {table}: {rows}")
    return "\n".join(lines)
