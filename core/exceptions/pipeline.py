"""Errors of a pipeline and its commands: a failed step, a pipeline that cannot be found,
restored or activated."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from loadstone.exceptions.base import LoadstoneError, PackageDataError, one_line
from loadstone.exceptions.configuration import NoActiveContext
from loadstone.exceptions.normalize import (
    CannotCoerceNullException,
    NormalizeJobFailed,
)
from loadstone.exceptions.schema import DataValidationError
from loadstone.exceptions.storage import DamagedCopyError, PackageIntegrityError

if TYPE_CHECKING:
    pass


class PackageNotFound(LoadstoneError):
    """``load-package`` was given a load id the pipeline does not have."""


class PipelineNotFound(LoadstoneError):
    """No local folder for the named pipeline."""


class PipelineNotActive(LoadstoneError):
    """``pipeline.deactivate()`` on a pipeline that is not the active one (dlt's name)."""


class InputError(LoadstoneError):
    """A path given to ``loadstone run`` is missing or holds no input files."""


class PipelineStateNotAvailable(NoActiveContext):
    """``resource.state`` / ``source.state`` while no pipeline is active (dlt's)."""


class PipelineStepFailed(LoadstoneError):
    """A pipeline step failed; ``step``, ``load_id`` and ``exception`` say where and why.

    What dlt users catch around ``run``. The package stays pending and the advice says how to
    finish it without loading anything twice: ``loadstone pipeline P load`` (or the same
    command again, which does not extract an input a pending package already holds).
    :meth:`wrap` makes an instance that is *also* an instance of the cause's class, so
    ``except BadRecordError`` keeps working beside ``except PipelineStepFailed``.
    """

    def __init__(
        self,
        pipeline_name: str,
        step: str,
        load_id: str | None,
        cause: BaseException,
        step_info: Any = None,
    ):
        self._init(pipeline_name, step, load_id, cause, step_info)

    def _init(
        self,
        pipeline_name: str,
        step: str,
        load_id: str | None,
        cause: BaseException,
        step_info: Any,
    ) -> None:
        self.pipeline_name = pipeline_name
        self.step = step
        self.load_id = load_id
        self.cause = cause
        self.exception = cause
        self.step_info = step_info
        #: the pipeline that failed (dlt's; set where the step ran)
        self.pipeline: Any = None
        where = f" package {load_id}" if load_id else ""
        advice = (
            f". The package is kept: `loadstone pipeline {pipeline_name} load` finishes it once "
            f"the cause is gone (running the same command again does too, without extracting "
            f"its input twice; `drop-pending-packages` drops it)"
            if load_id and step != "extract"
            else ""
        )
        if isinstance(cause, DamagedCopyError):
            advice = ""  # its message says how to repair the package
        if isinstance(cause, PackageDataError | PackageIntegrityError) and load_id:
            # these packages were set aside (failed_packages/): nothing of them is pending
            advice = (
                f". Nothing of it was loaded; the package was set aside (`loadstone pipeline "
                f"{pipeline_name} info` lists it) and the next run goes on: run the input "
                "again once the data, hints or schema are fixed"
            )
        LoadstoneError.__init__(
            self,
            # the advice opens a sentence: a cause's own closing period would double it
            f"pipeline {pipeline_name!r} step {step}{where} failed: "
            f"{one_line(cause).rstrip('.') if advice else one_line(cause)}{advice}",
        )

    @classmethod
    def wrap(
        cls, pipeline_name: str, step: str, load_id: str | None, cause: BaseException
    ) -> PipelineStepFailed:
        """A PipelineStepFailed that is also an instance of ``type(cause)``."""
        if isinstance(cause, PipelineStepFailed):
            return cause
        try:
            mixed = type(cls.__name__, (cls, type(cause)), {"__module__": cls.__module__})
            error: PipelineStepFailed = cls.__new__(mixed)
            error.__dict__.update(getattr(cause, "__dict__", {}))
        except TypeError:  # a builtin exception whose layout does not mix (OSError ...)
            error = cls.__new__(cls)
        error._init(pipeline_name, step, load_id, cause, None)
        if step == "normalize" and isinstance(
            cause, DataValidationError | CannotCoerceNullException
        ):
            # dlt reports the failed normalize job, caused by the contract violation
            error.exception = NormalizeJobFailed(load_id, cause)
        return error


class PipelineConfigError(LoadstoneError):
    """The pipeline's arguments cannot work together (name, dataset, destination)."""


class CannotRestorePipelineException(LoadstoneError):
    """``attach`` found no working folder with state for the pipeline."""

    def __init__(self, pipeline_name: str, pipelines_dir: Path) -> None:
        self.pipeline_name = pipeline_name
        self.pipelines_dir = pipelines_dir
        super().__init__(
            f"pipeline {pipeline_name!r} cannot be attached: {pipelines_dir / pipeline_name} "
            f"holds no pipeline state (run it first, or pass pipelines_dir=)"
        )


#: the names these errors had before they took dlt's: kept for code that catches them
PipelineError = PipelineStepFailed
