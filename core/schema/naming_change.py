"""Changing a schema's naming convention.

The identifiers in a schema are destination identifiers made by its naming convention. A
new convention would name existing tables and columns differently; for a table that already
holds data at the destination that means a second table or new empty columns next to the
old ones. So the change fails, naming those tables, unless the schema allows it
(``normalizers.allow_identifier_change_on_table_with_data``). Tables without data (new
tables) are simply renamed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import attrs

from loadstone.exceptions import NamingChangeError

if TYPE_CHECKING:
    from loadstone.naming import NamingConvention
    from loadstone.schema.model import Column, Table
    from loadstone.schema.schema import Schema

__all__ = ["NamingChangeError", "apply_naming_change", "check_naming_change", "renamed_identifiers"]


def _normalizers(
    naming: NamingConvention, use_break_path: bool
) -> tuple[Callable[[str], str], Callable[[str], str]]:
    if use_break_path:
        return naming.normalize_tables_path, naming.normalize_path
    return naming.normalize_table_identifier, naming.normalize_identifier


def renamed_identifiers(schema: Schema, naming: NamingConvention) -> dict[str, dict[str, str]]:
    """Per table, the identifiers (table name and columns) ``naming`` would change:
    ``{table: {old: new}}``; tables with no change are left out."""
    norm_table, norm_column = _normalizers(naming, schema.use_break_path_on_normalize)
    out: dict[str, dict[str, str]] = {}
    for name, table in schema.tables.items():
        changes: dict[str, str] = {}
        new_name = norm_table(name)
        if new_name != name:
            changes[name] = new_name
        for column_name in table.columns:
            new_column = norm_column(column_name)
            if new_column != column_name:
                changes[column_name] = new_column
        if changes:
            out[name] = changes
    return out


def check_naming_change(
    schema: Schema, naming: NamingConvention, tables_with_data: Iterable[str]
) -> None:
    """Raise :class:`NamingChangeError` if ``naming`` renames identifiers of a table in
    ``tables_with_data`` (tables holding data at the destination)."""
    if schema.allow_identifier_change_on_table_with_data:
        return
    with_data = set(tables_with_data)
    affected = {t: c for t, c in renamed_identifiers(schema, naming).items() if t in with_data}
    if affected:
        raise NamingChangeError(schema.name, schema.naming_name, naming.name(), affected)


def _rename_table(
    table: Table, norm_table: Callable[[str], str], norm_column: Callable[[str], str]
) -> Table:
    columns: dict[str, Column] = {}
    for column in table.columns.values():
        renamed = attrs.evolve(column, name=norm_column(column.name))
        existing = columns.get(renamed.name)
        columns[renamed.name] = renamed if existing is None else existing.merge(renamed)
    return attrs.evolve(
        table,
        name=norm_table(table.name),
        parent=None if table.parent is None else norm_table(table.parent),
        columns=columns,
    )


def apply_naming_change(
    schema: Schema, naming: NamingConvention, tables_with_data: Iterable[str] = ()
) -> None:
    """Switch ``schema`` to ``naming`` and re-normalize every identifier (after checking)."""
    check_naming_change(schema, naming, tables_with_data)
    norm_table, norm_column = _normalizers(naming, schema.use_break_path_on_normalize)
    renamed = [_rename_table(t, norm_table, norm_column) for t in schema.tables.values()]
    schema.drop_tables(list(schema.tables))
    for table in renamed:
        schema.replace_table(table)
    schema.set_naming(naming.name())
