"""What a run did: ``LoadInfo`` (returned by ``run``/``load``), step infos and progress events.

``LoadInfo`` is what users print, log and alert on: which packages went where, how many rows
per table, how long each step took and how the schema changed. ``str(info)`` is dlt's load
info wording; ``info.asstr(verbosity=2)`` adds each package's details and loadstone's rows
per table, step figures and schema changes; ``info.asdict()`` is dlt's dict (what dlt's
documented ``run([info], table_name="_load_info")`` loads); ``info.to_trace()`` is the JSON
the trace file keeps; :mod:`loadstone.runtime.trace` reads that saved trace as dlt's.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import pendulum

from loadstone.destinations.contract import destination_type
from loadstone.runtime.load_info_dict import JsonDict, load_info_dict, package_dict, package_jobs

if TYPE_CHECKING:
    from loadstone.current import RunningPipeline as Pipeline

#: what ``asdict()`` / ``to_trace()`` give (``to_trace``: JSON-able, the trace file holds it)


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
    #: ``row_counts`` by package (this run's, not in the trace): an extract of several
    #: sources writes a package each
    package_row_counts: dict[str, dict[str, int]] = attrs.field(factory=dict, eq=False)

    @property
    def elapsed(self) -> float:
        end = self.finished_at if self.finished_at is not None else self.started_at
        return max(0.0, end - self.started_at)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StepInfo:
        """A step read back from ``asdict()`` (its times are ISO text there)."""
        started = seconds_of(data.get("started_at")) or 0.0
        return cls(
            step=str(data.get("step") or ""),
            started_at=started,
            finished_at=seconds_of(data.get("finished_at")),
            load_ids=list(data.get("load_ids") or []),
            rows=int(data.get("rows") or 0),
            bytes=int(data.get("bytes") or 0),
            files=int(data.get("files") or 0),
            row_counts=dict(data.get("row_counts") or {}),
        )

    def asdict(self) -> JsonDict:
        return {
            "step": self.step,
            "started_at": iso_time(self.started_at),
            "finished_at": iso_time(self.finished_at) if self.finished_at else None,
            "elapsed": round(self.elapsed, 6),
            "load_ids": list(self.load_ids),
            "rows": self.rows,
            "bytes": self.bytes,
            "files": self.files,
            "row_counts": dict(self.row_counts),
        }


def _tables_by_name(tables: Mapping[str, JsonDict] | list[JsonDict]) -> dict[str, JsonDict]:
    """A schema update by table name; a trace saved before it was kept so holds a list of
    tables, each with its name and its columns in a list."""
    if isinstance(tables, Mapping):
        return dict(tables)
    drop = ("table_name", "schema_name", "load_id")
    by_name: dict[str, JsonDict] = {}
    for table in tables:
        columns = table.get("columns") or []
        assert isinstance(columns, list)
        named = {str(c["name"]): {k: v for k, v in c.items() if k not in drop} for c in columns}
        rest = {k: v for k, v in table.items() if k not in drop[1:]}
        by_name[str(table["name"])] = {**rest, "columns": named}
    return by_name


@attrs.define
class LoadPackageInfo:
    """One load package and what happened to it (dlt's ``LoadPackageInfo``): ``state`` is
    ``extracted``, ``normalized`` or ``loaded``."""

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
    # what dlt's ``asdict()`` shows, read while the package was on disk
    # (:func:`loadstone.runtime.package_details.package_details`)
    file_sizes: dict[str, int] = attrs.field(factory=dict)
    package_path: str = ""
    schema_hash: str = ""
    created_at: float | None = None
    #: when the load committed the package (None before)
    completed_at: float | None = None
    #: the tables the package's schema update touched, dlt's ``schema_update``: each new
    #: table whole, each changed table with its new columns (``{name: table}``)
    schema_update: dict[str, JsonDict] = attrs.field(factory=dict, converter=_tables_by_name)
    #: each table written, with its root table (the resource dlt's outputs name)
    roots: dict[str, str] = attrs.field(factory=dict)

    def asdict(self) -> JsonDict:
        """dlt's ``LoadPackageInfo.asdict()``: jobs, schema update, times as datetimes."""
        return package_dict(self)

    def to_trace(self) -> JsonDict:
        """What the trace keeps of the package (JSON), read back by :meth:`from_dict`."""
        return attrs.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LoadPackageInfo:
        """A package read back from :meth:`to_trace` (the saved trace)."""
        names = {field.name for field in attrs.fields(cls)}
        return cls(**{key: value for key, value in data.items() if key in names})

    @property
    def tables(self) -> list[str]:
        """The tables the package wrote, the pipeline state table last (when it carried it)."""
        return [*self.row_counts, *([self.state_table] if self.state_table else [])]

    def asstr(self, verbosity: int = 0) -> str:
        """dlt's package details: its state, how many tables its schema update touched, when
        it was loaded, then each job (file, format, size, start, time taken)."""
        state = self.state.upper()
        # a package of a trace saved before the schema update was kept: its new tables
        updated = len(self.schema_update) or len(self.new_tables)
        head = (
            f"The package with load id {self.load_id} for schema {self.schema_name} is in "
            f"{state} state. It updated schema for {updated} tables."
        )
        if self.completed_at is not None and self.state == "loaded":
            head += f" The package was {state} at {instant(self.completed_at)}."
        lines = [head]
        if verbosity > 0 or self.tables:
            lines.append("Jobs details:")
            lines += [_job_line(job) for job in package_jobs(self)]
            if not self.files:  # a package of an older trace: one line per table
                where = "completed_jobs" if self.state == "loaded" else "new_jobs"
                lines += [f"Job: {table}, table: {table} in {where}." for table in self.tables]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.asstr(verbosity=1)

    @property
    def jobs(self) -> dict[str, list[LoadJobInfo]]:
        """dlt's jobs of a package, one per table it wrote: completed once loaded, new
        before."""
        formats = {Path(f).parent.name: Path(f).suffix.lstrip(".") or None for f in self.files}
        where = "completed_jobs" if self.state == "loaded" else "new_jobs"
        listed = [
            LoadJobInfo(JobFileInfo(table, formats.get(table)), where) for table in self.tables
        ]
        jobs: dict[str, list[LoadJobInfo]] = {
            "new_jobs": [], "started_jobs": [], "failed_jobs": [], "completed_jobs": []
        }  # fmt: skip
        jobs[where] = listed
        return jobs


def _job_line(job: Mapping[str, Any]) -> str:
    """dlt's line for one job of a package."""
    size = job["file_size"]
    return (
        f"Job: {job['job_id']}, table: {job['table_name']} in {job['state']}. "
        f"File type: {job['file_format']}, size: {size}B. Started on: {job['created_at']} "
        f"and completed in {seconds_text(job['elapsed'])}."
    )


#: loadstone's former name of :class:`LoadPackageInfo`
PackageInfo = LoadPackageInfo


@attrs.frozen
class JobFileInfo:
    """What a job's file name says in dlt: the table it loads and the format of its files
    (``parquet`` ...; None where the package keeps no file, as for the pipeline state)."""

    table_name: str
    file_format: str | None = None


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
    packages: list[LoadPackageInfo] = attrs.field(factory=list)
    steps: dict[str, StepInfo] = attrs.field(factory=dict)
    first_run: bool = False
    #: the pipeline that made this info (dlt's ``LoadInfo.pipeline``), when it said so
    pipeline: Pipeline | None = attrs.field(default=None, eq=False, repr=False)
    #: the destination's type when ``destination_name=`` renamed it ("" : its name)
    destination_kind: str = ""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LoadInfo:
        """The info read back from :meth:`to_trace` (the saved trace of a run)."""
        steps = data.get("steps") or {}
        return cls(
            pipeline_name=str(data.get("pipeline_name") or ""),
            destination_name=str(data.get("destination_name") or ""),
            dataset_name=str(data.get("dataset_name") or ""),
            destination_location=data.get("destination_location"),
            packages=[LoadPackageInfo.from_dict(p) for p in data.get("packages") or []],
            steps={name: StepInfo.from_dict(step) for name, step in steps.items() if step},
            first_run=bool(data.get("first_run")),
            destination_kind=str(data.get("destination_type") or "").rpartition(".")[2],
        )

    @property
    def loads_ids(self) -> list[str]:
        """The load ids loaded (dlt's attribute name)."""
        return [p.load_id for p in self.packages]

    @property
    def load_packages(self) -> list[LoadPackageInfo]:
        """dlt's name for the packages: each with ``load_id``, ``state``, ``jobs``."""
        return self.packages

    @property
    def load_ids(self) -> list[str]:
        return self.loads_ids

    @property
    def destination_type(self) -> str:
        """The destination's factory, as dlt names it (``dlt.destinations.duckdb``)."""
        return destination_type(self.destination_kind or self.destination_name)

    @property
    def destination_displayable_credentials(self) -> str | None:
        """Where the destination keeps the data, without a password (a DuckDB file as the
        ``duckdb:///`` URL dlt shows)."""
        location = self.destination_location
        duckdb = (self.destination_kind or self.destination_name) == "duckdb"
        if location and duckdb and "://" not in location:
            return location if location == ":memory:" else f"duckdb:///{location}"
        return location

    @property
    def destination_fingerprint(self) -> str:
        return ""

    @property
    def environment(self) -> str | None:
        """dlt's deployment environment of the run: none is set here (dlt's ``None``)."""
        return None

    @property
    def staging_name(self) -> str | None:
        """loadstone loads without a staging destination (dlt's ``None`` then)."""
        return None

    @property
    def staging_type(self) -> str | None:
        return None

    @property
    def staging_displayable_credentials(self) -> str | None:
        return None

    @property
    def metrics(self) -> dict[str, list[JsonDict]]:
        """Per load id, the load step's start and end (dlt's ``LoadInfo.metrics``; loadstone
        keeps no per-job timings, so ``job_metrics`` is empty)."""
        load = self.steps.get("load")
        if load is None:
            return {}
        started = instant(load.started_at)
        finished = instant(load.finished_at) if load.finished_at else None
        return {
            package.load_id: [
                {
                    "started_at": started,
                    "finished_at": finished,
                    "job_metrics": {},
                    "dataset_name": self.dataset_name,
                }
            ]
            for package in self.packages
        }

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
        """When the run's first step began (UTC), as dlt's ``LoadInfo.started_at`` (None
        when there was nothing to load: dlt's load step did not start)."""
        starts = [step.started_at for step in self.steps.values()]
        return instant(min(starts)) if starts and self.packages else None

    @property
    def finished_at(self) -> _dt.datetime | None:
        """When the run's last step ended (UTC); None when there was nothing to load."""
        ends = [step.finished_at for step in self.steps.values() if step.finished_at]
        return instant(max(ends)) if ends and self.packages else None

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
    def schema_changes(self) -> dict[str, JsonDict]:
        """Per load id: ``{"new_tables": [...], "new_columns": {table: [...]}}``."""
        return {
            p.load_id: {"new_tables": list(p.new_tables), "new_columns": dict(p.new_columns)}
            for p in self.packages
        }

    def asdict(self) -> JsonDict:
        """dlt 1.31's ``LoadInfo.asdict()``: its keys and value shapes (times as aware
        datetimes), so ``pipeline.run([info], table_name="_load_info")`` makes dlt's tables
        (:mod:`loadstone.runtime.load_info_dict`)."""
        return load_info_dict(self)

    def _asdict(self) -> JsonDict:
        """The named-tuple protocol (dlt's ``LoadInfo`` is a named tuple): how extract
        turns an info given as data into its row (:meth:`asdict`)."""
        return self.asdict()

    def to_trace(self) -> JsonDict:
        """loadstone's JSON form, kept in ``trace.json`` and read back by :meth:`from_dict`:
        the packages with their rows per table, each step's figures."""
        return {
            "pipeline_name": self.pipeline_name,
            "destination_name": self.destination_name,
            "destination_location": self.destination_location,
            "dataset_name": self.dataset_name,
            "first_run": self.first_run,
            "loads_ids": self.loads_ids,
            "row_counts": self.row_counts,
            "packages": [p.to_trace() for p in self.packages],
            "steps": {name: step.asdict() for name, step in self.steps.items()},
        }

    def asstr(self, verbosity: int = 0) -> str:
        """dlt's wording; ``verbosity >= 2`` adds each package's details and loadstone's
        figures (rows per table, each step's time and size, schema changes)."""
        lines = self._summary()
        if verbosity >= 2:
            lines.append("Package details:")
            lines += [package.asstr(verbosity) for package in self.packages]
            lines += self._figures()
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.asstr(verbosity=0)

    def with_figures(self) -> str:
        """dlt's text, then loadstone's figures: rows per table, each step's time and size,
        schema changes (what ``loadstone run`` prints)."""
        return "\n".join([*self._summary(), *self._figures()])

    def _summary(self) -> list[str]:
        """dlt's four lines: the load step, where the packages went, the location, each
        package's state."""
        lines: list[str] = []
        load = self.steps.get("load")
        # nothing to load: dlt's load step does not start and names no dataset
        dataset = self.dataset_name if self.packages else None
        if load is not None and not self.packages:
            lines.append(f"Pipeline {self.pipeline_name} load step did not start")
        elif load is not None:
            lines.append(
                f"Pipeline {self.pipeline_name} load step finished in {seconds_text(load.elapsed)}"
            )
        lines.append(
            f"{len(self.packages)} load package(s) were loaded to destination "
            f"{self.destination_name} and into dataset {dataset}"
        )
        location = self.destination_displayable_credentials
        if location:
            lines.append(
                f"The {self.destination_name} destination used {location} location to store data"
            )
        for package in self.packages:
            note = " (found already loaded in the destination)" if package.skipped else ""
            lines.append(
                f"Load package {package.load_id} is {package.state.upper()} and contains no "
                f"failed jobs{note}"
            )
        return lines

    def _figures(self) -> list[str]:
        """loadstone's figures: rows per table, each step's time and size, schema changes."""
        lines: list[str] = []
        counts = self.row_counts
        if counts:
            lines.append("Rows loaded per table:")
            width = max(len(t) for t in counts)
            lines += [f"  {t.ljust(width)}  {rows}" for t, rows in sorted(counts.items())]
        for name in ("extract", "normalize", "load"):
            step = self.steps.get(name)
            if step is not None:
                # an input read where it lies is not read at extract: normalize counts its rows
                unread = name == "extract" and step.rows == 0 and step.bytes > 0
                counted = "rows counted by normalize" if unread else f"{step.rows} rows"
                lines.append(
                    f"Step {name}: {seconds_text(step.elapsed)}, {counted}, "
                    f"{_megabytes(step.bytes)}, {step.files} files"
                )
        for p in self.packages:
            added = sum(len(c) for c in p.new_columns.values())
            if p.new_tables or added:
                lines.append(
                    f"Schema change in {p.load_id}: {len(p.new_tables)} new table(s) "
                    f"{', '.join(p.new_tables)}; {added} new column(s)"
                )
        return lines


def iso_time(ts: float | None) -> str | None:
    if ts is None:
        return None
    return _dt.datetime.fromtimestamp(ts, tz=_dt.timezone.utc).isoformat()


def seconds_of(value: object) -> float | None:
    """Unix seconds from a saved time: a number, or ISO text."""
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return _dt.datetime.fromisoformat(value).timestamp()
        except ValueError:
            return None
    return None


def seconds_text(value: float) -> str:
    return f"{value:.2f} seconds"


def _megabytes(value: int) -> str:
    return f"{value / 1_000_000:.2f} MB"


def merge_counts(target: dict[str, int], source: Mapping[str, int]) -> None:
    for key, value in source.items():
        target[key] = target.get(key, 0) + int(value)


def instant(seconds: float) -> _dt.datetime:
    """Unix seconds as an aware UTC datetime: a pendulum ``DateTime``, as dlt's times are
    (a ``datetime`` that prints the same, with pendulum's methods dlt programs call)."""
    return pendulum.from_timestamp(seconds)
