"""The stored schema document as types: dlt's engine_version 11 layout, key by key.

A schema travels as a dict wherever it leaves Python objects: schema files, the package's
``schema.json``, ``_dlt_version`` rows, destinations that read the documented format. These
TypedDicts say what those dicts hold, so a reader does not guess a shape from comments.

Every level may also hold ``x-*`` keys (``x-normalizer``, ``x-merge-strategy``,
``x-valid-from`` ...) and keys of future dlt versions: the model keeps them in ``extra`` and
writes them back unchanged. TypedDicts cannot name keys with a dash, so those are read with
``.get("x-...")`` on the dict.
"""

from __future__ import annotations

from typing import Any, TypedDict

# one column: defined with the argument types, which import nothing of loadstone
from loadstone.typing import TColumnSchema as TColumnSchema

__all__ = [
    "TColumnSchema",
    "TJsonNormalizer",
    "TNormalizers",
    "TSchemaSettings",
    "TStoredSchema",
    "TTableReference",
    "TTableSchema",
]


class TTableSchema(TypedDict, total=False):
    """One table: columns in destination order, then table hints."""

    name: str
    columns: dict[str, TColumnSchema]
    write_disposition: str
    parent: str
    schema_contract: str | dict[str, str]
    description: str
    resource: str


class TTableReference(TypedDict, total=False):
    """One entry of ``Schema.references`` (and of a table's ``references`` hint): rows of
    ``table`` point by ``columns`` at ``referenced_columns`` of ``referenced_table``."""

    label: str
    cardinality: str
    table: str
    columns: list[str | None]
    referenced_table: str
    referenced_columns: list[str | None]


class TSchemaSettings(TypedDict, total=False):
    """Rules for new columns (``loadstone.schema.settings``) and the schema-wide contract."""

    schema_contract: str | dict[str, str]
    detections: list[str]
    default_hints: dict[str, list[str]]
    preferred_types: dict[str, str]


class TJsonNormalizer(TypedDict, total=False):
    """``normalizers.json``: the relational normalizer's module name and its config."""

    module: str
    config: dict[str, Any]


class TNormalizers(TypedDict, total=False):
    """``normalizers``: naming convention and JSON normalizer."""

    names: str
    json: TJsonNormalizer
    use_break_path_on_normalize: bool
    allow_identifier_change_on_table_with_data: bool


class TStoredSchema(TypedDict, total=False):
    """The whole document, in dlt's key order."""

    version: int
    version_hash: str
    engine_version: int
    name: str
    tables: dict[str, TTableSchema]
    settings: TSchemaSettings
    normalizers: TNormalizers
    previous_hashes: list[str]
