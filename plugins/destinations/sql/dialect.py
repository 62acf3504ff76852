"""What differs between the SQL destinations, in one value: the dialect.

The write dispositions (``merge.py``) are the same statements on every SQL destination; what
changes per database is small and listed here: how a schema column is typed, which hidden
column gives a table's insertion order (for "keep the first duplicate"), and how a table is
emptied. Each destination plugin builds one :class:`Dialect` and hands it to the shared code.

Quoting is the same everywhere (SQL standard double quotes, ``"`` doubled inside): every
identifier reaches the database through :func:`quote`, so a column named
``"; DROP TABLE users; --`` is a column. Values are never spliced into SQL except as
:func:`literal` / :func:`timestamp_literal`, which escape them.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable

import attrs

from loadstone.schema import Column

#: ``column_type(column, table) -> SQL type`` of a schema column
ColumnType = Callable[[Column, str], str]


def same_type(existing: str, expected: str) -> bool:
    """Whether a column's type in the catalog is the expected one: spelled the same."""
    return existing == expected


def as_written(type_name: str) -> str:
    return type_name


def quote(ident: str) -> str:
    """Quote an identifier: wrap in ``"`` and double any ``"`` inside."""
    return '"' + ident.replace('"', '""') + '"'


def qualified(*parts: str) -> str:
    """``"dataset"."table"`` (or with a catalog first): every part quoted."""
    return ".".join(quote(p) for p in parts)


def literal(value: str) -> str:
    """A SQL string literal (for the few places parameters cannot go)."""
    return "'" + value.replace("'", "''") + "'"


def timestamp_literal(at: _dt.datetime | None) -> str:
    """A time-zone-aware timestamp as SQL (``NULL`` for None); both dialects read ISO text."""
    if at is None:
        return "CAST(NULL AS TIMESTAMP WITH TIME ZONE)"
    if at.tzinfo is None:
        at = at.replace(tzinfo=_dt.timezone.utc)
    return f"CAST({literal(at.isoformat())} AS TIMESTAMP WITH TIME ZONE)"


@attrs.frozen
class Dialect:
    """The per-database parts of the shared SQL (see module docstring).

    ``row_order``: a hidden column ordering a freshly filled table by insertion (DuckDB
    ``rowid``, PostgreSQL ``ctid``); merge keeps the first staged row of a key by it.
    ``empty_table``: the statement that empties a table inside a transaction (``{table}`` is
    the qualified name).
    ``move_table``: the statement that moves a staging table (``{table}``, qualified) into
    the final dataset (``{dataset}``, quoted) keeping its name, or None where there is none
    (the ``staging-optimized`` replace then inserts from staging).
    ``types_compatible(existing, expected)``: whether a column the catalog lists with type
    ``existing`` takes values of the type ``column_type`` gives; ``type_name`` spells a type
    as the catalog does (for the mismatch error).
    ``unique_on_add``: whether ``ALTER TABLE ADD COLUMN`` may carry a UNIQUE constraint
    (DuckDB cannot add a column with a constraint).
    """

    name: str
    column_type: ColumnType
    row_order: str
    empty_table: str = "DELETE FROM {table}"
    move_table: str | None = None
    types_compatible: Callable[[str, str], bool] = same_type
    type_name: Callable[[str], str] = as_written
    unique_on_add: bool = True

    def empty(self, qualified_table: str) -> str:
        return self.empty_table.format(table=qualified_table)
