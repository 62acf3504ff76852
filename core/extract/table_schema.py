"""The table a resource declares, in dlt's dict form (``compute_table_schema``).

Extract keeps a resource's hints as given (only what was set); a dlt user reads them back as
the table dlt would make of them: named, with the columns the keys mark, the write
disposition, the table keys given as they are, and the resource that fills it.
"""

from __future__ import annotations

from collections.abc import Mapping

from loadstone.extract.resource_hints import (
    VARIANT_NAME,
    StoredHint,
    StoredHints,
    table_keys_of,
)


def declared_table(hints: Mapping[str, StoredHint], table_name: str, resource: str) -> StoredHints:
    """``hints`` (the stored form, maybe a variant's) as the table dlt's
    ``compute_table_schema`` returns for ``table_name`` of ``resource``."""
    columns = {name: dict(col) for name, col in (hints.get("columns") or {}).items()}
    for hint in ("primary_key", "merge_key"):  # the resource's key replaces column flags
        if hint not in hints:
            continue
        keys = hints[hint] or []
        for name, column in columns.items():
            if name not in keys:
                column.pop(hint, None)
        for key in keys:
            columns.setdefault(key, {"name": key}).update({hint: True})
            columns[key].setdefault("nullable", False)
    table: StoredHints = {
        "columns": columns,
        "write_disposition": str(hints.get("write_disposition", "append")),
    }
    for key, value in hints.items():
        if key.startswith("x-") or key in ("schema_contract", "table_format", "file_format"):
            table[key] = value
    if "max_nesting" in hints:
        table["x-normalizer"] = {"max_nesting": hints["max_nesting"]}
    table.update(table_keys_of(hints))  # references, additional hints, parent (dlt's)
    table.pop(VARIANT_NAME, None)  # after the resource, as dlt orders it
    table["name"] = table_name
    if "parent" not in table:  # a nested table belongs to its parent's resource (dlt's)
        table["resource"] = resource
    if hints.get(VARIANT_NAME) is not None:
        table[VARIANT_NAME] = hints[VARIANT_NAME]
    return table
