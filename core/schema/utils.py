"""dlt's column and table hint helpers (``dlt.common.schema.utils``), by the same names.

Code ported from dlt asks a table which columns carry a hint, which write disposition a
nested table inherits, which tables belong to a resource. These helpers answer as dlt's do,
on dlt's dicts or on loadstone's tables (``schema.tables[...]``, ``schema.get_table(...)``),
so ``from loadstone.schema.utils import get_columns_names_with_prop`` is the whole port.
A hint "is set" as in dlt: ``nullable`` when it is False, every other hint when it is set
to something but False.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TypeVar

from loadstone.schema.model import Column, Table
from loadstone.schema.stored import TColumnSchema, TTableSchema

__all__ = [
    "get_columns_names_with_prop",
    "get_data_and_dlt_tables",
    "get_file_format",
    "get_first_column_name_with_prop",
    "get_inherited_table_hint",
    "get_merge_strategy",
    "get_nested_tables",
    "get_root_table",
    "get_table_format",
    "get_validity_column_names",
    "get_write_disposition",
    "group_tables_by_resource",
    "has_column_with_prop",
    "has_default_column_prop_value",
    "has_table_seen_data",
    "is_complete_column",
    "is_nested_table",
    "is_nullable_column",
    "new_column",
    "new_table",
]

#: a table as dlt's dict or as loadstone's frozen view of one
TableLike = TypeVar("TableLike", Table, TTableSchema, Mapping[str, object])
AnyTable = Table | TTableSchema | Mapping[str, object]
AnyColumn = Column | TColumnSchema | Mapping[str, object]

_DLT_PREFIX = "_dlt"


def _get(value: AnyTable | AnyColumn, key: str) -> object:
    return value.get(key)


def _columns(table: AnyTable) -> list[AnyColumn]:
    columns = _get(table, "columns")
    if isinstance(columns, Mapping):
        return list(columns.values())
    return []


def has_default_column_prop_value(prop: str, value: object) -> bool:
    """True when ``value`` is the hint's default: ``nullable`` True, every other hint unset."""
    if prop == "nullable":
        return value in (True, None)
    return value in (None, False)


def is_complete_column(col: AnyColumn) -> bool:
    """A column with a data type."""
    return bool(_get(col, "data_type"))


def is_nullable_column(col: AnyColumn) -> bool:
    return _get(col, "nullable") is not False


def get_columns_names_with_prop(
    table: AnyTable, column_prop: str, include_incomplete: bool = False
) -> list[str]:
    """Names of the columns whose ``column_prop`` is set (``primary_key``, ``merge_key`` ...)."""
    return [
        str(_get(col, "name"))
        for col in _columns(table)
        if not has_default_column_prop_value(column_prop, _get(col, column_prop))
        and (include_incomplete or is_complete_column(col))
    ]


def has_column_with_prop(
    table: AnyTable, column_prop: str, include_incomplete: bool = False
) -> bool:
    return bool(get_columns_names_with_prop(table, column_prop, include_incomplete))


def get_first_column_name_with_prop(
    table: AnyTable, column_prop: str, include_incomplete: bool = False
) -> str | None:
    names = get_columns_names_with_prop(table, column_prop, include_incomplete)
    return names[0] if names else None


def is_nested_table(table: AnyTable) -> bool:
    return _get(table, "parent") is not None


def has_table_seen_data(table: AnyTable) -> bool:
    """True once rows were normalized into the table (``x-normalizer.seen-data``)."""
    hints = _get(table, "x-normalizer")
    return isinstance(hints, Mapping) and bool(hints.get("seen-data"))


def get_root_table(tables: Mapping[str, TableLike], table_name: str) -> TableLike:
    """The top-level table ``table_name`` is nested under (itself when it is one)."""
    table = tables[table_name]
    while (parent := _get(table, "parent")) is not None:
        table = tables[str(parent)]
    return table


def get_inherited_table_hint(
    tables: Mapping[str, AnyTable], table_name: str, table_hint_name: str, allow_none: bool = False
) -> object:
    """A table hint from the table or the nearest parent that sets it; ValueError when
    none does unless ``allow_none``."""
    name: str | None = table_name
    while name is not None:
        table = tables[name]
        value = _get(table, table_hint_name)
        if value is not None:
            return value
        parent = _get(table, "parent")
        name = None if parent is None else str(parent)
    if allow_none:
        return None
    raise ValueError(
        f"No table hint '{table_hint_name}' found in the chain of tables for '{table_name}'."
    )


def _inherited_text(tables: Mapping[str, AnyTable], table_name: str, hint: str) -> str | None:
    value = get_inherited_table_hint(tables, table_name, hint, allow_none=True)
    return None if value is None else str(value)


def get_write_disposition(tables: Mapping[str, AnyTable], table_name: str) -> str | None:
    return _inherited_text(tables, table_name, "write_disposition")


def get_merge_strategy(tables: Mapping[str, AnyTable], table_name: str) -> str | None:
    return _inherited_text(tables, table_name, "x-merge-strategy")


def get_table_format(tables: Mapping[str, AnyTable], table_name: str) -> str | None:
    return _inherited_text(tables, table_name, "table_format")


def get_file_format(tables: Mapping[str, AnyTable], table_name: str) -> str | None:
    return _inherited_text(tables, table_name, "file_format")


def get_nested_tables(
    tables: Mapping[str, TableLike],
    table_name: str,
    max_nesting: int | None = None,
    include_self: bool | None = True,
) -> list[TableLike]:
    """``table_name`` (with ``include_self``) and the tables nested under it, depth first,
    down to ``max_nesting`` levels."""
    found: list[TableLike] = [tables[table_name]] if include_self else []

    def walk(parent: str, level: int) -> None:
        if max_nesting is not None and level > max_nesting:
            return
        for name, table in tables.items():
            if _get(table, "parent") == parent:
                found.append(table)
                walk(name, level + 1)

    walk(table_name, 1)
    return found


def get_data_and_dlt_tables(
    tables: Mapping[str, TableLike],
) -> tuple[list[TableLike], list[TableLike]]:
    """The user's tables and dlt's own (``_dlt`` prefix), each in schema order."""
    data = [t for name, t in tables.items() if not name.startswith(_DLT_PREFIX)]
    dlt = [t for name, t in tables.items() if name.startswith(_DLT_PREFIX)]
    return data, dlt


def group_tables_by_resource(
    tables: Mapping[str, TableLike], pattern: re.Pattern[str] | None = None
) -> dict[str, list[TableLike]]:
    """Tables per resource (a nested table goes with its root's resource); ``pattern``
    keeps the resources it matches."""
    groups: dict[str, list[TableLike]] = {}
    for name in tables:
        resource = _get(get_root_table(tables, name), "resource")
        if resource is None or (pattern is not None and not pattern.match(str(resource))):
            continue
        groups.setdefault(str(resource), []).append(tables[name])
    return groups


def get_validity_column_names(table: AnyTable) -> list[str | None]:
    """The scd2 validity columns ``[valid_from, valid_to]`` (None where absent)."""
    return [_first_hinted(_columns(table), hint) for hint in ("x-valid-from", "x-valid-to")]


def _first_hinted(columns: Iterable[AnyColumn], hint: str) -> str | None:
    return next((str(_get(c, "name")) for c in columns if _get(c, hint)), None)


def new_column(
    column_name: str,
    data_type: str | None = None,
    nullable: bool = True,
    precision: int | None = None,
    scale: int | None = None,
) -> TColumnSchema:
    """dlt's column dict of a name and type (keys in dlt's order: name, nullable, type)."""
    column: dict[str, object] = {"name": column_name, "nullable": nullable}
    if data_type is not None:
        column["data_type"] = data_type
    if precision is not None:
        column["precision"] = precision
    if scale is not None:
        column["scale"] = scale
    return column  # type: ignore[return-value]  # the keys of a column


def new_table(
    table_name: str,
    parent_table_name: str | None = None,
    write_disposition: str | None = None,
    columns: Iterable[Mapping[str, object]] | None = None,
    resource: str | None = None,
    schema_contract: object = None,
    table_format: str | None = None,
    file_format: str | None = None,
) -> TTableSchema:
    """dlt's table dict (``new_table``): a root table gets ``append`` and its own name as
    resource unless given; a nested one names its ``parent``."""
    table: dict[str, object] = {
        "name": table_name,
        "columns": {str(c["name"]): dict(c) for c in columns or ()},
    }
    for key, value in (
        ("parent", parent_table_name),
        ("write_disposition", write_disposition),
        ("schema_contract", schema_contract),
        ("table_format", table_format),
        ("file_format", file_format),
        ("resource", resource),
    ):
        if value is not None:
            table[key] = value
    if not parent_table_name:  # dlt's defaults of a root table, after what was given
        table.setdefault("write_disposition", "append")
        table.setdefault("resource", table_name)
    return table  # type: ignore[return-value]  # the keys of a table
