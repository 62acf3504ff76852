"""``loadstone.common.exceptions``: dlt's ``dlt.common.exceptions`` names.

``DltException`` is loadstone's root error ``LoadstoneError``: ``except DltException``
catches every loadstone error, as it catches every dlt one.
"""

from __future__ import annotations

from loadstone.exceptions import LoadstoneError as DltException
from loadstone.exceptions import (
    MissingDependencyException,
    PipelineStateNotAvailable,
    ResourceNameNotAvailable,
    SourceSectionNotAvailable,
    ValueErrorWithKnownValues,
)

__all__ = [
    "DltException",
    "MissingDependencyException",
    "PipelineStateNotAvailable",
    "ResourceNameNotAvailable",
    "SourceSectionNotAvailable",
    "ValueErrorWithKnownValues",
]
