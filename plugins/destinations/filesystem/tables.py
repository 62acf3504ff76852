"""What the stored (dlt-form) schema says about each table, as the filesystem loader needs it.

Nested tables inherit their root's write disposition, file format and table format, as in
dlt, so a package's tables are always written one way per root.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from loadstone.destinations.contract import SYSTEM_TABLES
from loadstone.schema.hints import disposition_of


@attrs.frozen
class TablePlan:
    """How one table of a package is written."""

    name: str
    root: str
    write_disposition: str
    merge_strategy: str
    primary_key: tuple[str, ...]
    file_format: str
    table_format: str | None
    columns: tuple[Mapping[str, Any], ...]

    @property
    def is_root(self) -> bool:
        return self.name == self.root


def _root(tables: Mapping[str, Mapping[str, Any]], name: str) -> str:
    seen = {name}
    while (parent := (tables.get(name) or {}).get("parent")) and parent not in seen:
        seen.add(parent)
        name = parent
    return name


def plan_table(
    stored: Mapping[str, Any], name: str, default_file_format: str, default_table_format: str | None
) -> TablePlan:
    """The plan of ``name`` from the schema, with the destination's defaults filled in."""
    tables: Mapping[str, Mapping[str, Any]] = stored.get("tables") or {}
    root = _root(tables, name)
    root_table = tables.get(root) or {}
    table = tables.get(name) or {}
    file_format = root_table.get("file_format")
    if file_format in (None, "preferred"):
        file_format = default_file_format
    columns = tuple(
        {"name": col_name, **col}
        for col_name, col in (table.get("columns") or {}).items()
        if col.get("data_type")
    )
    disposition, strategy = disposition_of(root_table)  # the schema's one parser
    return TablePlan(
        name=name,
        root=root,
        write_disposition=disposition or "append",
        # upsert is the filesystem destination's one merge strategy in the spec's profile
        merge_strategy=strategy or "upsert",
        primary_key=tuple(
            c["name"]
            for c in ((tables.get(root) or {}).get("columns") or {}).values()
            if c.get("primary_key")
        ),
        file_format=str(file_format),
        table_format=root_table.get("table_format") or default_table_format,
        columns=columns,
    )


def is_system_table(name: str) -> bool:
    """``_dlt_loads`` and friends (also as ``s3_tables`` names them, without the ``_``)."""
    return name in SYSTEM_TABLES or f"_{name}" in SYSTEM_TABLES
