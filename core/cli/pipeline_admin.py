"""The managing actions of ``loadstone pipeline``: drop, load-package, failed-jobs, sync, and
the list of pipelines -- dlt's ``dlt pipeline`` commands of the same names.

* ``drop [RESOURCE ...] [--all]``: drop the tables of resources (or every data table) from
  the destination and the schema and reset their state; the next run loads them anew.
* ``load-package [LOAD_ID]``: one package (the newest by default): state, tables, rows, files.
* ``failed-jobs``: packages a failed run left: pending ones with the error of the last run,
  and packages set aside because their own data, schema or copy failed (with the cause).
* ``sync``: drop the local folder and restore state and schemas from the destination.
* ``--list-pipelines``: the pipelines in the pipelines folder.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from loadstone.exceptions import LoadstoneError, PackageNotFound

if TYPE_CHECKING:
    from loadstone.pipelines.pipeline import Pipeline


def list_pipelines_text(base: Path) -> str:
    from loadstone.storage.state import load_local

    names = (
        sorted(p.name for p in base.iterdir() if p.is_dir() and load_local(p))
        if base.is_dir()
        else []
    )
    if not names:
        return f"no pipelines in {base}"
    return f"{len(names)} pipeline(s) in {base}:\n" + "\n".join(f"  {n}" for n in names)


def drop_text(pipe: Pipeline, resources: list[str], drop_all: bool) -> str:
    if not resources and not drop_all:
        raise LoadstoneError(
            "name the resources whose tables to drop, or pass --all to drop every data table"
        )
    dropped = pipe.drop_resources(None if drop_all else resources)
    lines = [f"dropped {len(dropped)} table(s) from {pipe.dataset_name}; state reset"]
    lines += [f"  {name}" for name in dropped]
    return "\n".join(lines)


def load_package_text(pipe: Pipeline, load_id: str | None) -> str:
    packages = pipe.list_packages()
    if load_id is None:
        if not packages:
            return f"pipeline {pipe.pipeline_name} has no load packages"
        package = packages[-1]
    else:
        found = [p for p in packages if p.load_id == load_id]
        if not found:
            known = ", ".join(p.load_id for p in packages) or "none"
            raise PackageNotFound(f"no package {load_id!r} in {pipe.pipeline_name}; known: {known}")
        package = found[0]
    lines = [
        f"package {package.load_id}",
        f"  state:   {package.state}",
        f"  schema:  {package.schema_name}",
        f"  folder:  {package.root}",
    ]
    tables = package.normalized_tables() if package.state in ("normalized", "loaded") else {}
    for name, table in sorted(tables.items()):
        lines.append(f"  table {name}: {table.row_count} rows, {len(table.files)} file(s)")
    if not tables:
        extracted = package.extracted_files()
        by_table: dict[str, int] = {}
        for file in extracted:
            by_table[file.table_name] = by_table.get(file.table_name, 0) + (file.items or 0)
        for name, items in sorted(by_table.items()):
            lines.append(f"  extracted {name}: {items} items")
    return "\n".join(lines)


def failed_jobs_text(pipe: Pipeline) -> str:
    lines: list[str] = []
    pending = pipe.list_pending_packages()
    trace = pipe.last_trace
    error = trace.get("error") if trace else None
    for package in pending:
        lines.append(f"pending package {package.load_id} ({package.state})")
        if error:
            lines.append(f"  last run failed: {error}")
    for load_id, cause in pipe.failed_packages():
        lines.append(f"failed package {load_id} (set aside, not retried): {cause}")
        lines.append(f"  kept in {pipe.failed_packages_dir / load_id}")
    return "\n".join(lines) if lines else f"pipeline {pipe.pipeline_name} has no failed jobs"


def sync_text(pipe: Pipeline) -> str:
    from loadstone.pipelines.pipeline import Pipeline

    name, base = pipe.pipeline_name, pipe.pipelines_dir
    destination, dataset = pipe.destination, pipe.destination_dataset_name
    pipe.drop()
    fresh = Pipeline(name, destination, dataset, pipelines_dir=base)
    fresh.sync_destination()
    state = fresh.state
    return (
        f"pipeline {name} restored from {destination.name} dataset {dataset}: "
        f"state version {state.get('_state_version', 0)}, schemas "
        f"{', '.join(state.get('schema_names') or []) or '-'}"
    )


def state_text(pipe: Pipeline) -> str:
    sources = pipe.state.get("sources") or {}
    if not sources:
        return "sources state: -"
    return "sources state:\n" + "\n".join(
        "  " + line for line in json.dumps(sources, indent=2, default=str).splitlines()
    )
