"""``loadstone.common.schema.exceptions``: dlt's ``dlt.common.schema.exceptions`` names.

Each is loadstone's error of the same meaning; ``SchemaException`` (dlt's base of the schema
errors) is :class:`~loadstone.exceptions.LoadstoneError`, which every loadstone error derives
from, as ``DltException`` is.
"""

from __future__ import annotations

from loadstone.exceptions import (
    CannotCoerceNullException,
    CoercionError,
    DataValidationError,
    IdentifierCollisionError,
    LoadstoneError,
    TableNotFoundError,
    TablePropertiesConflictException,
    UnboundColumnException,
)

SchemaException = LoadstoneError
CannotCoerceColumnException = CoercionError
TableNotFound = TableNotFoundError
SchemaIdentifierNormalizationCollision = IdentifierCollisionError

__all__ = [
    "CannotCoerceColumnException",
    "CannotCoerceNullException",
    "DataValidationError",
    "SchemaException",
    "SchemaIdentifierNormalizationCollision",
    "TableNotFound",
    "TablePropertiesConflictException",
    "UnboundColumnException",
]
