"""What a run did: ``LoadInfo`` (returned by ``run``/``load``), step infos and progress events.

``LoadInfo`` is what users print, log and alert on: which packages went where, how many rows
per table, how long each step took and how the schema changed. ``str(info)`` reads like
dlt's load info; ``info.asdict()`` is plain JSON-able data (the CLI saves it as the trace).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from typing import Any

import attrs


@attrs.frozen
class ProgressEvent:
    """A step's progress, sent to ``pipeline(progress=...)`` while it works.

    ``event`` is ``"started"``, ``"progress"``, ``"package_started"``,
    ``"package_committed"`` (the destination committed the package, its state is about to
    switch to ``loaded``), ``"package_done"``, ``"finished"`` or ``"notice"`` (``message``
    says something the user should read: a package finished instead of extracting its input
    again, a wait for another run of the pipeline). Counters are running totals
    of the step; ``parts_done`` / ``parts`` count the pieces of the current package a step
    works through (normalize: its chunks), 0 when the step does not report them.
    ``input_rows`` / ``input_bytes`` (on ``started``) size the step's input, so a display can
    show work in progress before the first part finishes.
    """

    step: str
    event: str
    load_id: str | None = None
    rows: int = 0
    bytes: int = 0
    files: int = 0
    tables: int = 0
    elapsed: float = 0.0
    parts_done: int = 0
    parts: int = 0
    message: str | None = None
    #: what the step works through (normalize: the extracted rows and bytes), when known
    input_rows: int = 0
    input_bytes: int = 0


@attrs.define
class StepInfo:
    """One step of a run (extract, normalize, load) over all packages it handled."""

    step: str
    started_at: float
    finished_at: float | None = None
    load_ids: list[str] = attrs.field(factory=list)
    rows: int = 0
    bytes: int = 0
    files: int = 0
    row_counts: dict[str, int] = attrs.field(factory=dict)

    @property
    def elapsed(self) -> float:
        end = self.finished_at if self.finished_at is not None else self.started_at
        return max(0.0, end - self.started_at)

    def asdict(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "started_at": _iso(self.started_at),
            "finished_at": _iso(self.finished_at) if self.finished_at else None,
            "elapsed": round(self.elapsed, 6),
            "load_ids": list(self.load_ids),
            "rows": self.rows,
            "bytes": self.bytes,
            "files": self.files,
            "row_counts": dict(self.row_counts),
        }


@attrs.define
class PackageInfo:
    """One load package of the run and what happened to it."""

    load_id: str
    schema_name: str
    state: str
    row_counts: dict[str, int] = attrs.field(factory=dict)
    files: list[str] = attrs.field(factory=list)
    new_tables: list[str] = attrs.field(factory=list)
    new_columns: dict[str, list[str]] = attrs.field(factory=dict)
    skipped: bool = False
    #: ``_dlt_pipeline_state`` when the package carried the pipeline state (one row)
    state_table: str | None = None

    def asdict(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @property
    def jobs(self) -> dict[str, list[LoadJobInfo]]:
        """dlt's jobs of a loaded package, one per table it wrote (all completed)."""
        tables = [*self.row_counts, *([self.state_table] if self.state_table else [])]
        completed = [LoadJobInfo(JobFileInfo(table), "completed_jobs") for table in tables]
        return {"new_jobs": [], "started_jobs": [], "failed_jobs": [], "completed_jobs": completed}


@attrs.frozen
class JobFileInfo:
    """What a job's file name says in dlt: the table it loads."""

    table_name: str


@attrs.frozen
class LoadJobInfo:
    """One job of a package, as dlt's ``LoadInfo.load_packages[i].jobs`` lists it."""

    job_file_info: JobFileInfo
    state: str


@attrs.define
class LoadInfo:
    """The outcome of ``run`` / ``load``: packages, row counts, files, timings, schema changes."""

    pipeline_name: str
    destination_name: str
    dataset_name: str
    destination_location: str | None = None
    packages: list[PackageInfo] = attrs.field(factory=list)
    steps: dict[str, StepInfo] = attrs.field(factory=dict)
    first_run: bool = False

    @property
    def loads_ids(self) -> list[str]:
        """The load ids loaded (dlt's attribute name)."""
        return [p.load_id for p in self.packages]

    @property
    def load_packages(self) -> list[PackageInfo]:
        """dlt's name for the packages: each with ``load_id``, ``state``, ``jobs``."""
        return self.packages

    @property
    def load_ids(self) -> list[str]:
        return self.loads_ids

    @property
    def row_counts(self) -> dict[str, int]:
        """Rows per normalized table over all packages of the run."""
        counts: dict[str, int] = {}
        for package in self.packages:
            for table, rows in package.row_counts.items():
                counts[table] = counts.get(table, 0) + rows
        return counts

    @property
    def started_at(self) -> _dt.datetime | None:
        """When the run's first step began (UTC), as dlt's ``LoadInfo.started_at``."""
        starts = [step.started_at for step in self.steps.values()]
        return _instant(min(starts)) if starts else None

    @property
    def finished_at(self) -> _dt.datetime | None:
        """When the run's last step ended (UTC)."""
        ends = [step.finished_at for step in self.steps.values() if step.finished_at]
        return _instant(max(ends)) if ends else None

    @property
    def is_empty(self) -> bool:
        """No package was loaded by this run, as dlt's ``LoadInfo.is_empty``."""
        return not self.packages

    @property
    def has_failed_jobs(self) -> bool:
        return False

    def raise_on_failed_jobs(self) -> None:
        """dlt compatibility: a failed load raises already, so there is nothing to raise."""

    @property
    def schema_changes(self) -> dict[str, dict[str, Any]]:
        """Per load id: ``{"new_tables": [...], "new_columns": {table: [...]}}``."""
        return {
            p.load_id: {"new_tables": list(p.new_tables), "new_columns": dict(p.new_columns)}
            for p in self.packages
        }

    def asdict(self) -> dict[str, Any]:
        return {
            "pipeline_name": self.pipeline_name,
            "destination_name": self.destination_name,
            "destination_location": self.destination_location,
            "dataset_name": self.dataset_name,
            "first_run": self.first_run,
            "loads_ids": self.loads_ids,
            "row_counts": self.row_counts,
            "packages": [p.asdict() for p in self.packages],
            "steps": {name: step.asdict() for name, step in self.steps.items()},
        }

    def __str__(self) -> str:
        lines: list[str] = []
        load = self.steps.get("load")
        if load is not None:
            lines.append(
                f"Pipeline {self.pipeline_name} load step completed in {_seconds(load.elapsed)}"
            )
        lines.append(
            f"{len(self.packages)} load package(s) were loaded to destination "
            f"{self.destination_name} and into dataset {self.dataset_name}"
        )
        if self.destination_location:
            lines.append(
                f"The {self.destination_name} destination used {self.destination_location} "
                f"location to store data"
            )
        for package in self.packages:
            state = "LOADED" if package.state == "loaded" else package.state.upper()
            note = " (found already loaded in the destination)" if package.skipped else ""
            lines.append(
                f"Load package {package.load_id} is {state} and contains no failed jobs{note}"
            )
        counts = self.row_counts
        if counts:
            lines.append("Rows loaded per table:")
            width = max(len(t) for t in counts)
            for table, rows in sorted(counts.items()):
                lines.append(f"  {table.ljust(width)}  {rows}")
        for name in ("extract", "normalize", "load"):
            step = self.steps.get(name)
            if step is not None:
                # an input read where it lies is not read at extract: normalize counts its rows
                unread = name == "extract" and step.rows == 0 and step.bytes > 0
                counted = "rows counted by normalize" if unread else f"{step.rows} rows"
                lines.append(
                    f"Step {name}: {_seconds(step.elapsed)}, {counted}, "
                    f"{_megabytes(step.bytes)}, {step.files} files"
                )
        changes = [
            (p.load_id, p.new_tables, p.new_columns)
            for p in self.packages
            if p.new_tables or any(p.new_columns.values())
        ]
        for load_id, tables, columns in changes:
            added = sum(len(c) for c in columns.values())
            lines.append(
                f"Schema change in {load_id}: {len(tables)} new table(s) "
                f"{', '.join(tables)}; {added} new column(s)"
            )
        return "\n".join(lines)


def _iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return _dt.datetime.fromtimestamp(ts, tz=_dt.timezone.utc).isoformat()


def _seconds(value: float) -> str:
    return f"{value:.2f} seconds"


def _megabytes(value: int) -> str:
    return f"{value / 1_000_000:.2f} MB"


def merge_counts(target: dict[str, int], source: Mapping[str, int]) -> None:
    for key, value in source.items():
        target[key] = target.get(key, 0) + int(value)


@attrs.frozen
class StepTrace:
    """One step of a traced run, read from the trace (dlt's ``last_normalize_info`` ...)."""

    step: str
    row_counts: dict[str, int]
    load_ids: list[str]
    rows: int = 0
    elapsed: float = 0.0
    started_at: str | None = None
    finished_at: str | None = None

    @property
    def loads_ids(self) -> list[str]:
        """dlt's attribute name."""
        return self.load_ids


class PipelineTrace(dict[str, Any]):
    """The last run's trace: the saved JSON as a dict, plus dlt's attribute access.

    ``pipeline.last_trace.last_normalize_info.row_counts`` reads as it does in dlt; the dict
    stays what ``trace.json`` holds, for the CLI and for logs.
    """

    @property
    def started_at(self) -> _dt.datetime | None:
        """When the traced run began (UTC), as dlt's ``PipelineTrace.started_at``."""
        value = self.get("started_at")
        return _instant(float(value)) if isinstance(value, (int, float)) else None

    @property
    def finished_at(self) -> _dt.datetime | None:
        """When the traced run ended (UTC); None while it runs."""
        value = self.get("finished_at")
        return _instant(float(value)) if isinstance(value, (int, float)) else None

    def asdict(self) -> dict[str, Any]:
        """The trace as a plain dict (what ``trace.json`` holds)."""
        return dict(self)

    def _step(self, name: str) -> StepTrace | None:
        step = (self.get("steps") or {}).get(name)
        if not step:
            return None
        return StepTrace(
            step=name,
            row_counts=dict(step.get("row_counts") or {}),
            load_ids=list(step.get("load_ids") or []),
            rows=int(step.get("rows") or 0),
            elapsed=float(step.get("elapsed") or 0.0),
            started_at=step.get("started_at"),
            finished_at=step.get("finished_at"),
        )

    @property
    def steps(self) -> list[StepTrace]:
        """The steps in the order they ran; a trace of ``run()`` ends with a ``run`` step,
        as dlt's does (the extract, normalize and load steps of ``run`` come first)."""
        found = [self._step(name) for name in (self.get("steps") or {})]
        steps = [step for step in found if step is not None]
        if self.get("kind", "run") == "run":
            steps.append(
                StepTrace(
                    step="run",
                    row_counts={},
                    load_ids=list(self.get("loads_ids") or []),
                    started_at=_iso(self.get("started_at")),
                    finished_at=_iso(self.get("finished_at")),
                )
            )
        return steps

    @property
    def last_extract_info(self) -> StepTrace | None:
        return self._step("extract")

    @property
    def last_normalize_info(self) -> StepTrace | None:
        return self._step("normalize")

    @property
    def last_load_info(self) -> StepTrace | None:
        return self._step("load")

    @property
    def pipeline_name(self) -> str | None:
        return self.get("pipeline_name")

    @property
    def error(self) -> str | None:
        """The run's failure (``None`` when it succeeded)."""
        return self.get("error")


def _instant(seconds: float) -> _dt.datetime:
    """Unix seconds as an aware UTC datetime."""
    return _dt.datetime.fromtimestamp(seconds, _dt.timezone.utc)
