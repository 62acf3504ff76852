"""``pipeline.last_trace.asdict()`` in dlt 1.31's shape.

dlt's documentation loads the trace beside the data after a run:
``pipeline.run([pipeline.last_trace], table_name="_trace")``. dlt's trace then makes
``_trace`` (the run: pipeline, times, where it ran) and ``_trace__steps`` (one row per step,
with its ``step_info`` and its ``extract_info`` / ``normalize_info`` / ``load_info``) and
their nested tables. The trace loadstone saves (``trace.json``) is shaped for the CLI; this
module gives dlt's shape from it, so the tables a ported program makes are dlt's.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import platform
from collections.abc import Sequence
from typing import Any, Protocol

from loadstone.runtime.load_info import JsonDict, LoadInfo
from loadstone.runtime.step_infos import ExtractInfo, NormalizeInfo

__all__ = ["trace_dict"]

#: what dlt keeps of a step's info under ``step_info``; the rest goes under ``<step>_info``
_STEP_INFO_KEYS = ("pipeline", "first_run", "started_at", "finished_at", "load_packages", "loads_ids")  # fmt: skip


class StepTrace(Protocol):
    """What is read of a step (``loadstone.runtime.trace.StepTrace``; a protocol: that
    module imports this one)."""

    @property
    def step(self) -> str: ...
    @property
    def started_at(self) -> _dt.datetime | None: ...
    @property
    def finished_at(self) -> _dt.datetime | None: ...
    @property
    def step_exception(self) -> str | None: ...
    @property
    def step_info(self) -> Any: ...


class PipelineTrace(Protocol):
    """What is read of a trace (``loadstone.runtime.trace.PipelineTrace``)."""

    engine_version: int

    def get(self, key: str, default: Any = None, /) -> Any: ...
    @property
    def pipeline_name(self) -> str | None: ...
    @property
    def started_at(self) -> _dt.datetime | None: ...
    @property
    def finished_at(self) -> _dt.datetime | None: ...
    @property
    def steps(self) -> Sequence[StepTrace]: ...


def trace_dict(trace: PipelineTrace) -> JsonDict:
    """The trace as dlt's ``PipelineTrace.asdict()``: the run, then its steps (a trace of
    ``run()`` lists extract, normalize and load, as dlt's)."""
    steps = [_step_dict(trace, step) for step in trace.steps if step.step != "run"]
    return {
        "transaction_id": _digest(trace.pipeline_name, trace.get("started_at")),
        "pipeline_name": trace.pipeline_name,
        "execution_context": _execution_context(),
        "started_at": trace.started_at,
        "finished_at": trace.finished_at,
        "steps": steps,
        "resolved_config_values": [],
        "engine_version": trace.engine_version,
    }


def _step_dict(trace: PipelineTrace, step: StepTrace) -> JsonDict:
    """One step as dlt lists it: its times and error, its ``step_info`` (pipeline, packages,
    load ids) and the step's own figures under ``extract_info`` / ``normalize_info`` /
    ``load_info``."""
    info = step.step_info
    whole = info.asdict() if isinstance(info, ExtractInfo | NormalizeInfo | LoadInfo) else {}
    entry: JsonDict = {
        "span_id": _digest(trace.pipeline_name, trace.get("started_at"), step.step),
        "step": step.step,
        "started_at": step.started_at,
        "finished_at": step.finished_at,
        "step_info": {key: whole[key] for key in _STEP_INFO_KEYS if key in whole},
        "step_exception": step.step_exception,
        "exception_traces": None,
    }
    if whole:
        entry[f"{step.step}_info"] = {k: v for k, v in whole.items() if k not in _STEP_INFO_KEYS}
    return entry


def _execution_context() -> JsonDict:
    """Where the run ran, as dlt describes it (the library is loadstone)."""
    from loadstone.version import __version__

    return {
        "ci_run": bool(os.environ.get("CI")),
        "python": platform.python_version(),
        "cpu": os.cpu_count(),
        "exec_info": [],
        "os": {"name": platform.system(), "version": platform.release()},
        "library": {"name": "loadstone", "version": __version__},
        "run_context": {"name": "loadstone"},
    }


def _digest(*parts: object) -> str:
    """A stable 32-hex id (dlt's ids have this form): the same trace gives the same ids."""
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:32]
