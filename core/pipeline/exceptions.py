"""``loadstone.pipeline.exceptions``: dlt's ``dlt.pipeline.exceptions`` names.

The classes are loadstone's (:mod:`loadstone.exceptions`); ``PipelineStepFailed`` carries
dlt's ``step``, ``load_id``, ``exception`` and ``step_info``.
"""

from __future__ import annotations

from loadstone.exceptions import (
    CannotRestorePipelineException,
    PipelineNotActive,
    PipelineStepFailed,
)
from loadstone.runtime.load_info import LoadInfo

__all__ = [
    "CannotRestorePipelineException",
    "LoadInfo",
    "PipelineNotActive",
    "PipelineStepFailed",
]
