"""The last run's trace, read as dlt's: ``pipeline.last_trace``.

``trace.json`` holds what the recorder saved (:mod:`loadstone.runtime.recorder`): each step's
figures, the load info of a run or load, and what makes the extract and normalize infos again
(:mod:`loadstone.runtime.step_infos`). :class:`PipelineTrace` is that dict with dlt's
attributes (``steps``, ``last_normalize_info.row_counts`` ...) and dlt's text.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from typing import Any

import attrs

from loadstone.runtime.load_info import (
    JsonDict,
    LoadInfo,
    instant,
    seconds_of,
    seconds_text,
)
from loadstone.runtime.step_infos import ExtractInfo, NormalizeInfo, step_info_from_dict
from loadstone.runtime.trace_dict import trace_dict

__all__ = ["PipelineStepTrace", "PipelineTrace", "StepTrace", "traces_as_data"]


@attrs.frozen
class PipelineStepTrace:
    """One step of a traced run, read from the trace (dlt's ``last_normalize_info`` ...);
    named as dlt's class (``StepTrace`` is the same)."""

    step: str
    row_counts: dict[str, int]
    load_ids: list[str]
    rows: int = 0
    elapsed: float = 0.0
    #: when the step began and ended (UTC), pendulum ``DateTime``s as dlt's
    started_at: _dt.datetime | None = None
    finished_at: _dt.datetime | None = None
    #: the load info a ``load`` or ``run`` step ended with, when the trace holds it
    load_info: LoadInfo | None = attrs.field(default=None, eq=False, repr=False)
    #: the ``ExtractInfo`` / ``NormalizeInfo`` of an extract or normalize step
    info: ExtractInfo | NormalizeInfo | None = attrs.field(default=None, eq=False, repr=False)
    #: dlt's ``step_exception``: the error's text for the step that failed, else None
    step_exception: str | None = None

    @property
    def loads_ids(self) -> list[str]:
        """dlt's attribute name."""
        return self.load_ids

    @property
    def step_info(self) -> PipelineStepTrace | LoadInfo | ExtractInfo | NormalizeInfo:
        """dlt's ``step_info``: the load info of a load or run step, the extract or
        normalize info of those steps (else the step itself: it has dlt's ``row_counts`` and
        ``loads_ids``)."""
        if self.load_info is not None:
            return self.load_info
        return self.info if self.info is not None else self

    def asstr(self, verbosity: int = 0) -> str:
        """dlt's wording of a step: its time, then what it did to each package."""
        lines = [f"Step {self.step} COMPLETED in {_step_seconds(self.elapsed)}."]
        if self.step == "normalize" and self.row_counts:
            lines.append("Normalized data for the following tables:")
            lines += [f"- {table}: {rows} row(s)" for table, rows in self.row_counts.items()]
        if self.load_info is not None:
            lines.append(self.load_info.asstr(verbosity))
        elif self.step in _PACKAGE_STATE_AFTER:
            state = _PACKAGE_STATE_AFTER[self.step]
            lines += [
                f"\nLoad package {load_id} is {state} and NOT YET LOADED to the destination "
                "and contains no failed jobs"
                for load_id in self.load_ids
            ]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.asstr()


#: the former name of :class:`PipelineStepTrace`
StepTrace = PipelineStepTrace

#: the state dlt names for a package after each step that does not load it
_PACKAGE_STATE_AFTER = {"extract": "EXTRACTED", "normalize": "NORMALIZED"}


def _time(value: object) -> _dt.datetime | None:
    """A saved time (Unix seconds or ISO text) as dlt's pendulum ``DateTime``."""
    seconds = seconds_of(value)
    return instant(seconds) if seconds is not None else None


def _step_seconds(value: float) -> str:
    """A step's time as dlt writes it: ``0 seconds`` when nothing took time."""
    return "0 seconds" if value == 0 else seconds_text(value)


class PipelineTrace(dict[str, Any]):
    """The last run's trace: the saved JSON as a dict, plus dlt's attribute access.

    ``pipeline.last_trace.last_normalize_info.row_counts`` reads as it does in dlt; the dict
    stays what ``trace.json`` holds, for the CLI and for logs. ``str(trace)`` is dlt's text.
    ``infos``: the extract and normalize infos the steps returned, while in memory (the
    trace's ``last_extract_info`` is then the very object ``extract()`` returned, as dlt's).
    """

    def __init__(self, data: Mapping[str, Any] | None = None, infos: Any = None) -> None:
        super().__init__(data or {})
        self.infos: dict[str, Any] = dict(infos or {})

    @property
    def started_at(self) -> _dt.datetime | None:
        """When the traced run began (UTC), as dlt's ``PipelineTrace.started_at``."""
        value = seconds_of(self.get("started_at"))
        return instant(value) if value is not None else None

    @property
    def finished_at(self) -> _dt.datetime | None:
        """When the traced run ended (UTC); None while it runs."""
        value = seconds_of(self.get("finished_at"))
        return instant(value) if value is not None else None

    def asdict(self) -> JsonDict:
        """dlt's ``asdict()``: the run and its steps in dlt's shape, what
        ``pipeline.run([trace], table_name="_trace")`` loads (the dict itself stays what
        ``trace.json`` holds)."""
        return trace_dict(self)

    def _load_info(self) -> LoadInfo | None:
        """The load info of the traced run or load step, when the trace holds it."""
        return LoadInfo.from_dict(self) if self.get("destination_name") else None

    def _step(self, name: str) -> PipelineStepTrace | None:
        steps = self.get("steps") or {}
        step = steps.get(name)
        if not step:
            return None
        info = self._step_info(name) if name in ("extract", "normalize") else None
        failed = self._error_message() if name == list(steps)[-1] else None  # the run ended in it
        return PipelineStepTrace(
            step=name,
            row_counts=dict(step.get("row_counts") or {}),
            load_ids=list(step.get("load_ids") or []),
            rows=int(step.get("rows") or 0),
            elapsed=float(step.get("elapsed") or 0.0),
            started_at=_time(step.get("started_at")),
            finished_at=_time(step.get("finished_at")),
            load_info=self._load_info() if name == "load" else None,
            info=info if isinstance(info, (ExtractInfo, NormalizeInfo)) else None,
            step_exception=failed,
        )

    @property
    def steps(self) -> list[PipelineStepTrace]:
        """The steps in the order they ran; a trace of ``run()`` ends with a ``run`` step,
        as dlt's does (the extract, normalize and load steps of ``run`` come first)."""
        found = [self._step(name) for name in (self.get("steps") or {})]
        steps = [step for step in found if step is not None]
        if self.get("kind", "run") == "run":
            started, finished = self.started_at, self.finished_at
            elapsed = (finished - started).total_seconds() if started and finished else 0.0
            steps.append(
                PipelineStepTrace(
                    step="run",
                    row_counts={},
                    load_ids=list(self.get("loads_ids") or []),
                    elapsed=elapsed,
                    started_at=started,
                    finished_at=finished,
                    load_info=self._load_info(),
                    step_exception=self._error_message(),
                )
            )
        return steps

    def last_pipeline_step_trace(self, step_name: str) -> PipelineStepTrace | None:
        """The last step named ``step_name`` (``extract``, ``normalize``, ``load``, ``run``)."""
        named = [step for step in self.steps if step.step == step_name]
        return named[-1] if named else None

    def _step_info(self, name: str) -> Any:
        """The step's info: the one in memory, else made again from the saved trace."""
        if name in self.infos:
            return self.infos[name]
        step = (self.get("steps") or {}).get(name)
        return step_info_from_dict(name, step) if step else None

    @property
    def last_extract_info(self) -> ExtractInfo | None:
        """dlt's ``ExtractInfo`` of the traced extract (None when none ran)."""
        info = self._step_info("extract")
        return info if isinstance(info, ExtractInfo) else None

    @property
    def last_normalize_info(self) -> NormalizeInfo | None:
        """dlt's ``NormalizeInfo`` of the traced normalize (None when none ran)."""
        info = self._step_info("normalize")
        return info if isinstance(info, NormalizeInfo) else None

    @property
    def last_load_info(self) -> LoadInfo | None:
        """dlt's ``LoadInfo`` of the traced load (None when none ran): read back from the
        trace, its ``asdict()`` is dlt's as the one ``run()`` returned."""
        step = self._step("load")
        return step.load_info if step is not None else None

    #: dlt 1.31's trace engine version (``trace.engine_version``)
    engine_version = 2

    @property
    def resolved_config_values(self) -> list[Any]:
        """dlt's configuration values the run resolved: loadstone's trace keeps none (a run
        of dlt with nothing configured shows the same empty list)."""
        return []

    @property
    def pipeline_name(self) -> str | None:
        name = self.get("pipeline_name")
        return None if name is None else str(name)

    @property
    def error(self) -> str | None:
        """The run's failure (``None`` when it succeeded)."""
        error = self.get("error")
        return None if error is None else str(error)

    def _error_message(self) -> str | None:
        """The run's error as dlt's ``step_exception`` holds it: its text, without its class."""
        message = self.get("error_message")
        return self.error if message is None else str(message)

    def asstr(self, verbosity: int = 0) -> str:
        """dlt's wording: when the run started, how it ended, then each step."""
        started, finished = self.started_at, self.finished_at
        elapsed = (finished - started).total_seconds() if started and finished else 0.0
        outcome = "FAILED" if self.error else "COMPLETED"
        steps = self.steps
        lines = [
            f"Run started at {started} and {outcome} in {_step_seconds(elapsed)} "
            f"with {len(steps)} steps."
        ]
        lines += [step.asstr(verbosity) + "\n" for step in steps]
        return "\n".join(lines).rstrip("\n")

    def __str__(self) -> str:
        return self.asstr()


def traces_as_data(data: Any) -> Any:
    """``data`` given to ``extract``/``run`` with each trace in it as dlt's ``asdict()``:
    ``run([pipeline.last_trace], table_name="_trace")`` loads dlt's trace tables, not the
    saved JSON (a trace is a dict of it)."""
    if isinstance(data, PipelineTrace):
        return data.asdict()
    if isinstance(data, list | tuple) and any(isinstance(i, PipelineTrace) for i in data):
        return [i.asdict() if isinstance(i, PipelineTrace) else i for i in data]
    return data
