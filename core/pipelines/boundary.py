"""The step boundary: any failure inside a step becomes :class:`PipelineStepFailed`.

dlt's contract: ``run`` and each step called on its own raise ``PipelineStepFailed`` naming
the pipeline, the step and the load package it was working on. :class:`StepBoundary` keeps
the package a step works on (the steps report it through ``on_package``) and wraps the
failure; :func:`step_boundary` puts a public step method inside it.
"""

from __future__ import annotations

import functools
import inspect
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Concatenate, ParamSpec, Protocol, TypeVar

from loadstone.exceptions import PipelineStepFailed

if TYPE_CHECKING:
    from loadstone.runtime.recorder import StepRecorder

__all__ = ["HasBoundary", "StepBoundary", "step_boundary"]

_P = ParamSpec("_P")
_R = TypeVar("_R")


class StepBoundary:
    """Runs steps of one pipeline, remembering the package each one works on."""

    def __init__(self, pipeline_name: str, recorder: StepRecorder, pipeline: object = None) -> None:
        self.pipeline_name = pipeline_name
        self.recorder = recorder
        # the pipeline object a failure names (dlt's ``PipelineStepFailed.pipeline``), held
        # weakly: the pipeline holds this boundary
        self._pipeline = weakref.ref(pipeline) if pipeline is not None else None
        #: the package the running step works on (named by ``PipelineStepFailed``)
        self.active_load_id: str | None = None

    def run(self, name: str, run_step: Callable[[], _R]) -> _R:
        """Run one step; any failure in it becomes :class:`PipelineStepFailed`."""
        self.active_load_id = None
        try:
            return run_step()
        except PipelineStepFailed:
            raise
        except Exception as exc:
            failed = PipelineStepFailed.wrap(self.pipeline_name, name, self.active_load_id, exc)
            failed.pipeline = self._pipeline() if self._pipeline is not None else None
            # chained to what it reports: dlt's NormalizeJobFailed before a contract's error
            raise failed from failed.exception

    def package_started(self, step: str, load_id: str) -> None:
        """A step began a package: remember it and tell the progress callback."""
        self.active_load_id = load_id
        self.recorder.emit(step, "package_started", load_id=load_id)


class HasBoundary(Protocol):
    @property
    def boundary(self) -> StepBoundary: ...


_Self = TypeVar("_Self", bound=HasBoundary)


def step_boundary(
    step: str,
) -> Callable[[Callable[Concatenate[_Self, _P], _R]], Callable[Concatenate[_Self, _P], _R]]:
    """Make a public step method (``extract``/``normalize``/``load``) raise
    :class:`PipelineStepFailed` for any failure, as dlt's do when called one by one."""

    def decorate(
        method: Callable[Concatenate[_Self, _P], _R],
    ) -> Callable[Concatenate[_Self, _P], _R]:
        signature = inspect.signature(method)

        @functools.wraps(method)
        def wrapped(self: _Self, *args: _P.args, **kwargs: _P.kwargs) -> _R:
            try:  # a wrong call is a TypeError naming the method, as dlt's, not a failed step
                signature.bind(self, *args, **kwargs)
            except TypeError as error:
                raise TypeError(f"Pipeline.{method.__name__}() {error}") from None
            return self.boundary.run(step, lambda: method(self, *args, **kwargs))

        return wrapped

    return decorate
