"""The table a resource declares, in dlt's dict form (``compute_table_schema``).

Extract keeps a resource's hints as given (only what was set); a dlt user reads them back as
the table dlt would make of them: named, with the columns the keys mark, the write
disposition, the table keys given as they are, and the resource that fills it.

The keys come in dlt 1.31's order (observed from the outside, p1216-p1219): ``columns``,
``write_disposition``, the contract and formats, references and additional hints, the
nesting limit, then (a merge) its strategy and boundary with ``write_disposition`` moved after
them, then ``name`` and ``resource``. A key column dlt makes reads ``{name, nullable,
primary_key}``; a declared one gets the key, then ``nullable``; a cursor's ``incremental``
comes after the keys. An scd2 merge shows dlt's validity and row version columns (they
replace declared columns of the same names); its other options stay out of the table.
"""

from __future__ import annotations

from collections.abc import Mapping

from loadstone.extract.resource_hints import (
    VARIANT_NAME,
    StoredHint,
    StoredHints,
    table_keys_of,
)
from loadstone.schema.hints import scd2_columns

#: the table keys of a merge dlt shows (its other options go to columns or stay out)
_MERGE_KEYS = ("x-merge-strategy", "x-boundary-timestamp")
#: table keys of the ``x-`` form dlt's ``compute_table_schema`` shows as they are
_SHOWN_X_KEYS = ("x-normalizer", "x-materialize")


def _key_columns(hints: Mapping[str, StoredHint], columns: dict[str, StoredHints]) -> None:
    """Mark the resource's keys (they replace column flags), as dlt orders the hints."""
    for hint in ("primary_key", "merge_key"):
        if hint not in hints:
            continue
        keys = hints[hint] or []
        for name, column in columns.items():
            if name not in keys:
                column.pop(hint, None)
        for key in keys:
            column = columns.setdefault(key, {"name": key, "nullable": False})
            column[hint] = True
            column.setdefault("nullable", False)


def declared_table(
    hints: Mapping[str, StoredHint],
    table_name: str,
    resource: str,
    cursor_hints: Mapping[str, StoredHint] | None = None,
) -> StoredHints:
    """``hints`` (the stored form, maybe a variant's) as the table dlt's
    ``compute_table_schema`` returns for ``table_name`` of ``resource``; ``cursor_hints``:
    the columns a bound cursor marks."""
    columns = {name: dict(col) for name, col in (hints.get("columns") or {}).items()}
    _key_columns(hints, columns)
    for name, column in ((cursor_hints or {}).get("columns") or {}).items():
        columns.setdefault(name, {}).update(column)
    is_merge = hints.get("write_disposition") == "merge"
    if is_merge and hints.get("x-merge-strategy") == "scd2":
        for name, column in scd2_columns(hints).items():
            columns[name] = dict(column.to_dict())
    table: StoredHints = {"columns": columns}
    table["write_disposition"] = str(hints.get("write_disposition", "append"))
    for key in ("schema_contract", "table_format", "file_format"):
        if key in hints:
            table[key] = hints[key]
    table.update(table_keys_of(hints))  # references, additional hints, parent (dlt's)
    table.pop(VARIANT_NAME, None)  # after the resource, as dlt orders it
    if "max_nesting" in hints:
        table["x-normalizer"] = {"max_nesting": hints["max_nesting"]}
    table.update((key, hints[key]) for key in _SHOWN_X_KEYS if key in hints)
    if is_merge:
        table.update((key, hints[key]) for key in _MERGE_KEYS if key in hints)
        table["write_disposition"] = table.pop("write_disposition")
    table["name"] = table_name
    if "parent" not in table:  # a nested table belongs to its parent's resource (dlt's)
        table["resource"] = resource
    if hints.get(VARIANT_NAME) is not None:
        table[VARIANT_NAME] = hints[VARIANT_NAME]
    return table
