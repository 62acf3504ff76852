"""``loadstone.common.exceptions``: dlt's ``dlt.common.exceptions`` names.

``DltException`` is loadstone's root error ``LoadstoneError``: ``except DltException``
catches every loadstone error, as it catches every dlt one.
"""

from __future__ import annotations

from loadstone.exceptions import (
    ArgumentsOverloadException,
    MissingDependencyException,
    PipelineStateNotAvailable,
    ResourceNameNotAvailable,
    SourceSectionNotAvailable,
    ValueErrorWithKnownValues,
)
from loadstone.exceptions import LoadstoneError as DltException

__all__ = [
    "ArgumentsOverloadException",
    "DltException",
    "MissingDependencyException",
    "PipelineStateNotAvailable",
    "ResourceNameNotAvailable",
    "SourceSectionNotAvailable",
    "ValueErrorWithKnownValues",
]
