"""``loadstone.common.schema.typing``: dlt's ``dlt.common.schema.typing`` names.

The TypedDicts are loadstone's own (:mod:`loadstone.typing` for what code passes,
:mod:`loadstone.schema.stored` for the stored document); the literals and constants below are
spelled from loadstone's rules (:mod:`loadstone.schema.data_types`,
:mod:`loadstone.schema.system_tables`) so they cannot drift from them.
"""

from __future__ import annotations

from typing import Final, Literal, TypeAlias

from loadstone.schema.data_types import DATA_TYPES
from loadstone.schema.stored import (
    TSchemaSettings,
    TStoredSchema,
    TTableReference,
    TTableSchema,
)
from loadstone.schema.system_tables import LOADS_TABLE_NAME, STATE_TABLE_NAME, VERSION_TABLE_NAME
from loadstone.typing import (
    TAnySchemaColumns,
    TColumnNames,
    TColumnSchema,
    TLoaderFileFormat,
    TMergeStrategy,
    TReplaceStrategy,
    TSchemaContract,
    TSchemaContractDict,
    TSchemaContractMode,
    TTableFormat,
    TWriteDisposition,
    TWriteDispositionConfig,
    TWriteDispositionDict,
)

__all__ = [
    "COLUMN_HINTS",
    "C_DLT_ID",
    "C_DLT_LOAD_ID",
    "DATA_TYPES",
    "LOADS_TABLE_NAME",
    "PIPELINE_STATE_TABLE_NAME",
    "VERSION_TABLE_NAME",
    "WRITE_DISPOSITIONS",
    "TAnySchemaColumns",
    "TColumnHint",
    "TColumnNames",
    "TColumnSchema",
    "TDataType",
    "TLoaderFileFormat",
    "TLoaderMergeStrategy",
    "TLoaderReplaceStrategy",
    "TPartialTableSchema",
    "TSchemaContract",
    "TSchemaContractDict",
    "TSchemaEvolutionMode",
    "TSchemaSettings",
    "TSchemaTables",
    "TStoredSchema",
    "TTableFormat",
    "TTableReference",
    "TTableSchema",
    "TTableSchemaColumns",
    "TWriteDisposition",
    "TWriteDispositionConfig",
    "TWriteDispositionDict",
]

#: a data type of a column (``DATA_TYPES`` holds the same names)
TDataType = Literal[
    "text", "double", "bool", "timestamp", "bigint", "binary", "json", "decimal", "wei", "date",
    "time",
]  # fmt: skip
#: the boolean hints of a column
TColumnHint = Literal[
    "nullable", "partition", "cluster", "primary_key", "sort", "unique", "merge_key", "row_key",
    "parent_key", "root_key", "hard_delete", "dedup_sort",
]  # fmt: skip
COLUMN_HINTS: Final[list[str]] = [
    "partition", "cluster", "primary_key", "sort", "unique", "merge_key", "row_key",
    "parent_key", "root_key", "hard_delete", "dedup_sort",
]  # fmt: skip
#: columns by name, in destination order
TTableSchemaColumns: TypeAlias = dict[str, TColumnSchema]
#: tables by name
TSchemaTables: TypeAlias = dict[str, TTableSchema]
#: a table with only some of its hints (the same keys, all optional)
TPartialTableSchema: TypeAlias = TTableSchema
TSchemaEvolutionMode: TypeAlias = TSchemaContractMode
TLoaderMergeStrategy: TypeAlias = TMergeStrategy
TLoaderReplaceStrategy: TypeAlias = TReplaceStrategy
WRITE_DISPOSITIONS: Final[list[str]] = ["append", "merge", "replace", "skip"]
PIPELINE_STATE_TABLE_NAME: Final = STATE_TABLE_NAME
C_DLT_ID: Final = "_dlt_id"
C_DLT_LOAD_ID: Final = "_dlt_load_id"
