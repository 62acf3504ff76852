"""``loadstone.extract.exceptions``: dlt's ``dlt.extract.exceptions`` names.

``DltResourceException`` is loadstone's ``ResourceError`` (a resource declared or used
wrongly) and ``ExtractorException`` its ``ExtractError``; the classes live in
:mod:`loadstone.exceptions` with the rest.
"""

from __future__ import annotations

from loadstone.exceptions import (
    CreatePipeException,
    CurrentSourceNotAvailable,
    CurrentSourceSchemaNotAvailable,
    DataItemRequiredForDynamicTableHints,
    ParametrizedResourceUnbound,
    ResourceExtractionError,
    ResourceNameMissing,
    ResourcesNotFoundError,
    SourceExhausted,
)
from loadstone.exceptions import ExtractError as ExtractorException
from loadstone.exceptions import InvalidResourceData as InvalidResourceDataType
from loadstone.exceptions import InvalidResourceData as InvalidResourceDataTypeBasic
from loadstone.exceptions import ResourceError as DltResourceException

__all__ = [
    "CreatePipeException",
    "CurrentSourceNotAvailable",
    "CurrentSourceSchemaNotAvailable",
    "DataItemRequiredForDynamicTableHints",
    "DltResourceException",
    "ExtractorException",
    "InvalidResourceDataType",
    "InvalidResourceDataTypeBasic",
    "ParametrizedResourceUnbound",
    "ResourceExtractionError",
    "ResourceNameMissing",
    "ResourcesNotFoundError",
    "SourceExhausted",
]
