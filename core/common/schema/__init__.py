"""``loadstone.common.schema``: dlt's ``dlt.common.schema`` names: the ``Schema`` and its types.

``Schema`` is loadstone's (:class:`loadstone.schema.Schema`, the stored form is dlt's);
``DataValidationError`` is loadstone's contract violation error of the same name.
"""

from __future__ import annotations

from loadstone.common.schema.typing import (
    COLUMN_HINTS,
    TColumnHint,
    TColumnSchema,
    TSchemaContractDict,
    TSchemaTables,
    TStoredSchema,
    TTableSchema,
    TTableSchemaColumns,
)
from loadstone.exceptions import DataValidationError
from loadstone.schema import Schema

__all__ = [
    "COLUMN_HINTS",
    "DataValidationError",
    "Schema",
    "TColumnHint",
    "TColumnSchema",
    "TSchemaContractDict",
    "TSchemaTables",
    "TStoredSchema",
    "TTableSchema",
    "TTableSchemaColumns",
]
