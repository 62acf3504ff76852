"""dlt's three bookkeeping tables and the references between them, as dlt writes them.

Why a module: every schema starts with ``_dlt_version`` and ``_dlt_loads``, the pipeline adds
``_dlt_pipeline_state``, and destinations create all three; their columns and descriptions
are dlt's word for word, so schemas and destination tables compare equal across both tools.
"""

from __future__ import annotations

from typing import Final

from loadstone.schema.model import Table
from loadstone.schema.stored import TColumnSchema, TTableReference

__all__ = [
    "LOADS_TABLE_NAME",
    "STATE_TABLE_NAME",
    "VERSION_TABLE_NAME",
    "loads_table",
    "state_table",
    "version_references",
    "version_table",
]

VERSION_TABLE_NAME: Final = "_dlt_version"
LOADS_TABLE_NAME: Final = "_dlt_loads"
STATE_TABLE_NAME: Final = "_dlt_pipeline_state"


def _sys(
    data_type: str, description: str, nullable: bool = False, precision: int | None = None
) -> TColumnSchema:
    """A system column in dlt's key order (a precision comes before the description)."""
    column: TColumnSchema = {"data_type": data_type, "nullable": nullable}
    if precision is not None:
        column["precision"] = precision
    column["description"] = description
    return column


def version_table(name: str = VERSION_TABLE_NAME) -> Table:
    """``_dlt_version``: one row per schema version a destination migrated to."""
    return Table.from_dict(
        {
            "columns": {
                "version": _sys(
                    "bigint", "Numeric version of the schema, incremented on each schema change"
                ),
                "engine_version": _sys(
                    "bigint", "Version of the dlt schema engine that created this schema"
                ),
                "inserted_at": _sys("timestamp", "Timestamp when this schema version was stored"),
                "schema_name": _sys("text", "Name of the schema"),
                "version_hash": _sys(
                    "text", "Unique hash of the schema content, used to detect changes"
                ),
                "schema": _sys("text", "JSON representation of the complete schema definition"),
            },
            "write_disposition": "skip",
            "resource": VERSION_TABLE_NAME,
            "description": "Created by DLT. Tracks schema updates",
        },
        name,
    )


def loads_table(name: str = LOADS_TABLE_NAME) -> Table:
    """``_dlt_loads``: one row per completed load package."""
    return Table.from_dict(
        {
            "columns": {
                "load_id": _sys("text", "Unique identifier of the load operation", precision=64),
                "schema_name": _sys("text", "Name of the schema associated with this load", True),
                "status": _sys("bigint", "Status of the load operation (0 = success)"),
                "inserted_at": _sys("timestamp", "Timestamp when the load was completed"),
                "schema_version_hash": _sys(
                    "text", "Hash of the schema version used during this load", True
                ),
            },
            "write_disposition": "skip",
            "resource": LOADS_TABLE_NAME,
            "description": "Created by DLT. Tracks completed loads",
        },
        name,
    )


def state_table(name: str = STATE_TABLE_NAME) -> Table:
    """``_dlt_pipeline_state``: the pipeline state stored at the destination (as dlt writes it)."""
    return Table.from_dict(
        {
            "columns": {
                "version": _sys("bigint", "Numeric version of the pipeline state"),
                "engine_version": _sys("bigint", "Version of the dlt state engine"),
                "pipeline_name": _sys("text", "Name of the pipeline this state belongs to"),
                "state": _sys("text", "Compressed JSON representation of the pipeline state"),
                "created_at": _sys("timestamp", "Timestamp when this state was created"),
                "version_hash": _sys(
                    "text", "Hash of the state content, used to detect changes", True
                ),
                "_dlt_load_id": _sys(
                    "text", "Load identifier linking this row to its load operation", precision=64
                ),
                "_dlt_id": {
                    "data_type": "text",
                    "nullable": False,
                    "unique": True,
                    "row_key": True,
                },
            },
            "write_disposition": "append",
            "file_format": "preferred",
            "name": name,  # after the formats, as dlt orders the state table's keys
            "resource": STATE_TABLE_NAME,
        },
        name,
    )


def version_references(version_table_name: str, loads_table_name: str) -> list[TTableReference]:
    """How ``_dlt_version`` rows relate to ``_dlt_loads`` rows (the last of dlt's
    ``Schema.references``): by version hash, and by schema name."""
    return [
        {
            "label": "_dlt_schema_version",
            "cardinality": "one_to_many",
            "table": version_table_name,
            "columns": ["version_hash"],
            "referenced_table": loads_table_name,
            "referenced_columns": ["schema_version_hash"],
        },
        {
            "label": "_dlt_schema_name",
            "cardinality": "many_to_many",
            "table": version_table_name,
            "columns": ["schema_name"],
            "referenced_table": loads_table_name,
            "referenced_columns": ["schema_name"],
        },
    ]
