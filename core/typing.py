"""The named types of the public API's arguments: what ``run``, ``pipeline``, ``resource`` and
``apply_hints`` accept, spelled once.

dlt users pass these as plain strings, dicts and lists, so each is a ``Literal``, a
``TypedDict`` or a union of them; the checks that refuse a wrong value at run time live beside
the code that reads it (``loadstone.schema.hints``, ``loadstone.pipelines.run_settings``), and
name the type of the value they got. ``Any`` appears here only for what really is anything: the
items a user yields (:data:`TDataItem`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeAlias, TypedDict, TypeVar, Union

__all__ = [
    "TAnySchemaColumns",
    "TColumnNames",
    "TColumnSchema",
    "TDataItem",
    "TDataItems",
    "TLoaderFileFormat",
    "TRefreshMode",
    "TSchemaContract",
    "TSchemaContractMode",
    "TTableFormat",
    "TTableHintTemplate",
    "TWriteDisposition",
    "TWriteDispositionConfig",
    "TWriteDispositionDict",
]

#: one item a user yields or passes: a dict, a list, an Arrow table, a DataFrame... anything
TDataItem: TypeAlias = Any
#: one item or a batch of them
TDataItems: TypeAlias = Union[TDataItem, list[TDataItem]]  # noqa: UP007 (evaluated at import: Python 3.10 has no `|` on these)

TWriteDisposition = Literal["append", "replace", "merge", "skip"]
TMergeStrategy = Literal["delete-insert", "scd2", "upsert", "insert-only"]
TReplaceStrategy = Literal["truncate-and-insert", "insert-from-staging", "staging-optimized"]


class TWriteDispositionDict(TypedDict, total=False):
    """``{"disposition": "merge", "strategy": "scd2", ...}``: a disposition with its options."""

    disposition: TWriteDisposition
    strategy: TMergeStrategy | TReplaceStrategy
    validity_column_names: list[str]
    active_record_timestamp: object
    boundary_timestamp: object
    row_version_column_name: str
    retire_absent_rows: bool
    natural_key: str


TWriteDispositionConfig: TypeAlias = Union[TWriteDisposition, TWriteDispositionDict]  # noqa: UP007 (evaluated at import: Python 3.10 has no `|` on these)

TSchemaContractMode = Literal["evolve", "discard_value", "discard_row", "freeze"]


class TSchemaContractDict(TypedDict, total=False):
    """A contract per entity: ``{"tables": "evolve", "columns": "freeze"}``."""

    tables: TSchemaContractMode
    columns: TSchemaContractMode
    data_type: TSchemaContractMode


#: a contract as users give it: one mode for everything, or a mode per entity (a
#: :class:`loadstone.schema.contracts.SchemaContract` object is read as its dict form)
TSchemaContract: TypeAlias = Union[TSchemaContractMode, TSchemaContractDict]  # noqa: UP007 (evaluated at import: Python 3.10 has no `|` on these)


class TColumnSchema(TypedDict, total=False):
    """One column; hints absent when not set (``None`` is never written).

    Both what ``columns=`` takes and what a stored schema holds
    (:mod:`loadstone.schema.stored` names it there too): defined here, below the schema, so
    that the argument types import nothing of loadstone."""

    name: str
    data_type: str
    nullable: bool
    precision: int
    scale: int
    timezone: bool
    primary_key: bool
    unique: bool
    merge_key: bool
    row_key: bool
    parent_key: bool
    root_key: bool
    partition: bool
    cluster: bool
    sort: bool
    variant: bool
    hard_delete: bool
    dedup_sort: str | bool
    description: str


#: one column name or several (a compound primary/merge key)
TColumnNames: TypeAlias = Union[str, Sequence[str]]  # noqa: UP007 (evaluated at import: Python 3.10 has no `|` on these)
#: columns as dlt takes them: a mapping name -> column, or a list of columns with names
TAnySchemaColumns: TypeAlias = Union[  # noqa: UP007 (evaluated at import: Python 3.10 has no `|` on these)
    Mapping[str, TColumnSchema], Sequence[TColumnSchema]
]

TLoaderFileFormat = Literal[
    "jsonl", "typed-jsonl", "insert_values", "parquet", "csv", "reference", "model"
]
TTableFormat = Literal["iceberg", "delta", "native"]
TRefreshMode = Literal["drop_sources", "drop_resources", "drop_data"]

_Hint = TypeVar("_Hint")
#: a hint given as its value, or as a function of each item that returns the value
TTableHintTemplate: TypeAlias = Union[_Hint, Callable[[TDataItem], _Hint]]  # noqa: UP007 (evaluated at import: Python 3.10 has no `|` on these)
