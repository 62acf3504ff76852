"""``loadstone.pipeline.exceptions``: dlt's ``dlt.pipeline.exceptions`` names.

The classes are loadstone's (:mod:`loadstone.exceptions`); ``PipelineStepFailed`` carries
dlt's ``step``, ``load_id``, ``exception`` and ``step_info``. ``InvalidPipelineName`` and
``PipelineConfigMissing`` are loadstone's ``PipelineConfigError`` (what it raises for a bad
pipeline name; a pipeline without a destination loads into DuckDB, docs/migrating.md).
"""

from __future__ import annotations

from loadstone.exceptions import (
    CannotRestorePipelineException,
    PipelineConfigError,
    PipelineNotActive,
    PipelineStepFailed,
)
from loadstone.runtime.load_info import LoadInfo

InvalidPipelineName = PipelineConfigError
PipelineConfigMissing = PipelineConfigError

__all__ = [
    "CannotRestorePipelineException",
    "InvalidPipelineName",
    "LoadInfo",
    "PipelineConfigMissing",
    "PipelineNotActive",
    "PipelineStepFailed",
]
