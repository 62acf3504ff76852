"""The schema: tables, columns, settings, versions, files, contracts and hints.

Table of contents (names importable from ``loadstone.schema``):

Model
    Schema, Table, Column, SchemaSettings, TableNotFoundError, InvalidSchemaError
    (``Schema`` is assembled from ``state`` -- what it holds and its versions --, ``lookups``,
    ``evolution`` and the stored form in ``schema``; dlt's bookkeeping tables in
    ``system_tables``)
Versions
    content_hash, ENGINE_VERSION, MAX_PREVIOUS_HASHES
Files
    load_schema_file, save_schema_file, export_schema, import_schema, find_source_schema_file,
    SchemaFileError
Contracts
    SchemaContract, ContractViolation, ContractDecision (module ``loadstone.schema.contracts``)
Hints from code
    table_from_hints, normalize_hints (module ``loadstone.schema.hints``)
dlt's column and table hint helpers
    get_columns_names_with_prop, get_write_disposition, get_root_table ... (module
    ``loadstone.schema.utils``, dlt's ``dlt.common.schema.utils`` by the same names)
Identifiers
    check_case_collisions, check_batch_collisions, find_identifier_collisions,
    IdentifierCollisionError
    (``loadstone.schema.collisions``); check_naming_change, NamingChangeError
    (``loadstone.schema.naming_change``)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from loadstone.exceptions import InvalidSchemaError, TableNotFoundError
from loadstone.schema.model import Column, Table
from loadstone.schema.schema import Schema
from loadstone.schema.settings import SchemaSettings
from loadstone.schema.versioning import ENGINE_VERSION, MAX_PREVIOUS_HASHES, content_hash

_LAZY: dict[str, str] = {
    "load_schema_file": "loadstone.schema.files",
    "save_schema_file": "loadstone.schema.files",
    "export_schema": "loadstone.schema.files",
    "import_schema": "loadstone.schema.files",
    "find_source_schema_file": "loadstone.schema.files",
    "SchemaFileError": "loadstone.exceptions",
    "SchemaContract": "loadstone.schema.contracts",
    "ContractViolation": "loadstone.exceptions",
    "ContractDecision": "loadstone.schema.contracts",
    "table_from_hints": "loadstone.schema.hints",
    "normalize_hints": "loadstone.schema.hints",
    "check_case_collisions": "loadstone.schema.collisions",
    "check_batch_collisions": "loadstone.schema.collisions",
    "find_identifier_collisions": "loadstone.schema.collisions",
    "IdentifierCollisionError": "loadstone.exceptions",
    "check_naming_change": "loadstone.schema.naming_change",
    "NamingChangeError": "loadstone.exceptions",
}

__all__ = [
    "ENGINE_VERSION",
    "MAX_PREVIOUS_HASHES",
    "Column",
    "ContractDecision",
    "ContractViolation",
    "IdentifierCollisionError",
    "InvalidSchemaError",
    "NamingChangeError",
    "Schema",
    "SchemaContract",
    "SchemaFileError",
    "SchemaSettings",
    "Table",
    "TableNotFoundError",
    "check_batch_collisions",
    "check_case_collisions",
    "check_naming_change",
    "content_hash",
    "export_schema",
    "find_identifier_collisions",
    "find_source_schema_file",
    "import_schema",
    "load_schema_file",
    "normalize_hints",
    "save_schema_file",
    "table_from_hints",
]

if TYPE_CHECKING:
    from loadstone.exceptions import (
        ContractViolation,
        IdentifierCollisionError,
        NamingChangeError,
        SchemaFileError,
    )
    from loadstone.schema.collisions import (
        check_batch_collisions,
        check_case_collisions,
        find_identifier_collisions,
    )
    from loadstone.schema.contracts import ContractDecision, SchemaContract
    from loadstone.schema.files import (
        export_schema,
        find_source_schema_file,
        import_schema,
        load_schema_file,
        save_schema_file,
    )
    from loadstone.schema.hints import normalize_hints, table_from_hints
    from loadstone.schema.naming_change import check_naming_change


def __getattr__(name: str) -> object:
    try:
        module = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'loadstone.schema' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
