"""The bookkeeping of a run's steps: step infos, progress events and the trace, in one place.

Every step (extract, normalize, load) reports the same way: a ``started`` event, running
totals per package, a ``finished`` event, its :class:`StepInfo` in the run's load info and in
``trace.json``. The pipeline calls this recorder instead of repeating those blocks, so a step
reads as the work it does. Saving the trace never hides the error that ended a run: a trace
that cannot be written (disk full) is given up silently, the run's own error is what the user
sees.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

import attrs

from loadstone.exceptions import PipelineStepFailed, StorageError
from loadstone.normalizers.contract import ChunkRun, EngineChoice
from loadstone.runtime.load_info import JsonDict, LoadInfo, ProgressEvent, StepInfo
from loadstone.runtime.step_infos import StepOutcome
from loadstone.runtime.trace import PipelineTrace
from loadstone.storage.json_files import write_json_atomic

if TYPE_CHECKING:
    from typing_extensions import Unpack

ProgressCallback = Callable[[ProgressEvent], None]


class EventValues(TypedDict, total=False):
    """The figures an event may carry (the fields of :class:`ProgressEvent` after its step
    and event)."""

    load_id: str | None
    rows: int
    bytes: int
    files: int
    tables: int
    elapsed: float
    parts_done: int
    parts: int
    message: str | None
    input_rows: int
    input_bytes: int


class StepRecorder:
    """Step infos of the current run and the progress callback they are reported to."""

    def __init__(self, progress: ProgressCallback | None) -> None:
        self.progress = progress
        self.steps: dict[str, StepInfo] = {}
        self.last_trace: PipelineTrace | None = None
        #: where normalize ran: engine, Spark master or remote (``chunks``: each chunk's run)
        self.normalize: JsonDict = {}
        self._chunks: list[JsonDict] | None = None
        #: start of the trace of steps called one by one (``pipeline.extract()`` ...), if open
        self._opened: float | None = None
        #: the load info of a ``load()`` called on its own, for its trace
        self._info: LoadInfo | None = None
        #: the extract and normalize infos of the run (dlt's ``last_extract_info`` ...)
        self.infos: dict[str, StepOutcome] = {}

    def reset(self) -> None:
        """A new run: forget the steps of the previous one."""
        self.steps = {}
        self.normalize = {}
        self._chunks = None
        self._opened = None
        self._info = None
        self.infos = {}

    def record_step_info(self, info: StepOutcome) -> None:
        """The info a step returned: the trace holds it (and saves what makes it again)."""
        self.infos[info.step.step] = info

    def record_info(self, info: LoadInfo) -> None:
        """The load info of a step called on its own (``pipeline.load()``): its trace shows it
        as dlt's does (``last_trace.last_load_info``, ``str(last_trace)``)."""
        self._info = info

    @contextlib.contextmanager
    def standalone(self, name: str, path: Path, pipeline_name: str) -> Iterator[None]:
        """Trace a step called on its own, as dlt does: ``extract`` starts a new trace,
        ``normalize`` and ``load`` add to the open one (or start one), ``load`` closes it;
        the trace is saved after every step, so ``last_trace`` shows the steps so far."""
        if name == "extract" or self._opened is None:
            self.reset()
            self._opened = time.time()
        started = self._opened
        try:
            yield
        except BaseException as error:
            self.save_trace(path, pipeline_name, started, error=error, kind="steps")
            raise
        else:
            self.save_trace(path, pipeline_name, started, info=self._info, kind="steps")
        finally:
            if name == "load":
                self._opened = None

    # -- where normalize ran (``pipeline P trace --json``) ------------------------------------
    def record_engine(self, choice: EngineChoice) -> None:
        """The engine a normalize step ran on (a later choice in the run replaces it)."""
        self.normalize.update(engine=choice.engine, master=choice.master, remote=choice.remote)
        if self._chunks is None:
            self._chunks = []

    def record_chunk(self, run: ChunkRun) -> None:
        """Where one chunk ran: a Spark executor or the driver, and whether C ran."""
        if self._chunks is None:
            self._chunks = []
        self._chunks.append(attrs.asdict(run))

    # -- events ---------------------------------------------------------------------------
    def emit(self, step: str, event: str, **values: Unpack[EventValues]) -> None:
        if self.progress is not None:
            self.progress(ProgressEvent(step=step, event=event, **values))

    def notice(self, step: str, message: str) -> None:
        """Something the user should read (a resumed package, a wait for a lock)."""
        self.emit(step, "notice", message=message)

    def emit_totals(self, step: StepInfo, event: str, **values: Unpack[EventValues]) -> None:
        """An event carrying the step's running totals (rows, bytes, files, elapsed)."""
        elapsed = step.elapsed if step.finished_at is not None else time.time() - step.started_at
        totals: EventValues = {
            "rows": step.rows,
            "bytes": step.bytes,
            "files": step.files,
            "tables": len(step.row_counts),
            "elapsed": elapsed,
        }
        totals.update(values)
        self.emit(step.step, event, **totals)

    # -- steps ----------------------------------------------------------------------------
    def begin(self, name: str, **values: Unpack[EventValues]) -> StepInfo:
        """Start (or, within one run, continue) the step ``name``; ``values`` go with the
        ``started`` event (normalize: the size of its input)."""
        step = self.steps.get(name) or StepInfo(name, time.time())
        step.finished_at = None
        self.steps[name] = step
        self.emit(name, "started", **values)
        return step

    def package_done(
        self,
        step: StepInfo,
        load_id: str,
        *,
        rows: int,
        size: int,
        files: int,
        row_counts: Mapping[str, int],
    ) -> None:
        """Add one package's figures to the step and report them."""
        step.load_ids.append(load_id)
        step.rows += rows
        step.bytes += size
        step.files += files
        for table, count in row_counts.items():
            step.row_counts[table] = step.row_counts.get(table, 0) + count
        step.package_row_counts[load_id] = dict(row_counts)
        self.emit_totals(step, "package_done", load_id=load_id)

    def finish(self, step: StepInfo, **values: Unpack[EventValues]) -> None:
        step.finished_at = time.time()
        self.emit_totals(step, "finished", **values)

    # -- trace ----------------------------------------------------------------------------
    def save_trace(
        self,
        path: Path,
        pipeline_name: str,
        started: float,
        *,
        info: LoadInfo | None = None,
        error: BaseException | None = None,
        kind: str = "run",
    ) -> None:
        """Write ``trace.json`` for the run that started at ``started``; ``kind`` is ``run``
        for ``run()`` and ``steps`` for steps called one by one."""
        trace: JsonDict = {"pipeline_name": pipeline_name, "started_at": started}
        trace["kind"] = kind
        steps = {name: step.asdict() for name, step in self.steps.items()}
        for name, held in self.infos.items():
            if name in steps:
                steps[name]["info"] = held.to_trace()
        if error is not None:
            trace["error"] = f"{type(error).__name__}: {error}"
            trace["error_message"] = str(error)  # dlt's step_exception
        if info is not None:
            trace.update(info.to_trace())  # loadstone's JSON form (asdict() is dlt's)
        trace["steps"] = steps  # the recorder's, with what makes the step infos again
        trace["normalize"] = self._where_normalize_ran()
        trace["finished_at"] = time.time()
        self.last_trace = PipelineTrace(trace, infos=self.infos)
        if isinstance(error, PipelineStepFailed) and error.step_info is None:
            error.step_info = _failed_step_info(self.last_trace, error.step)
        if path.parent.exists():
            # the run's own outcome (its error above all) matters more than its trace
            with contextlib.suppress(StorageError):
                write_json_atomic(path, trace)

    def _where_normalize_ran(self) -> JsonDict | None:
        """The trace's ``normalize`` entry: the engine and each chunk's run, if it ran."""
        where = dict(self.normalize)
        if self._chunks is not None:
            where["chunks"] = list(self._chunks)
        return where or None


def _failed_step_info(trace: PipelineTrace, step: str) -> object:
    """dlt's ``PipelineStepFailed.step_info``: the info of the step that failed, as far as
    it got (its extract's packages, its normalize's counts, its load's packages)."""
    if step == "extract":
        return trace.last_extract_info
    if step == "normalize":
        return trace.last_normalize_info
    return trace.last_load_info if step == "load" else None
