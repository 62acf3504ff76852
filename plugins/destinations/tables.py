"""Reading load instructions out of a schema: one set of rules for every loader.

A loader needs a handful of facts per table — its root, write disposition, merge strategy,
key columns, typed columns, the nested tables below it — all of which the schema holds as
table and column hints. This module answers those questions from the typed ``Schema``, so
the SQL destinations' ``sql/merge.py`` only builds SQL, and the Spark and filesystem
destinations read the same rules without importing anything SQL.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from loadstone.destinations.contract import SYSTEM_TABLES
from loadstone.schema import Column, Schema, Table

#: the merge strategy of a root that names none (the SQL destinations' default, as in dlt)
DEFAULT_STRATEGY = "delete-insert"

_NO_TABLE = Table("_no_table")


class _Names(Protocol):
    def ident(self, name: str) -> str: ...

    def table_ident(self, name: str) -> str: ...


class TableModel:
    """The tables of one schema, seen as a loader sees them (read from the typed
    :class:`~loadstone.schema.Schema` directly: no stored-dict round trip)."""

    def __init__(
        self, schema: Schema | None, names: _Names, default_strategy: str = DEFAULT_STRATEGY
    ) -> None:
        self.tables: Mapping[str, Table] = schema.tables if schema is not None else {}
        self.names = names
        self.default_strategy = default_strategy
        self.system_tables = {names.table_ident(n) for n in SYSTEM_TABLES} | set(SYSTEM_TABLES)

    def _table(self, table: str) -> Table:
        return self.tables.get(table) or _NO_TABLE

    # --- which tables ------------------------------------------------------------------

    def data_tables(self) -> list[str]:
        """Tables that hold data (not system tables, not ``skip``), in schema order."""
        return [
            name
            for name, table in self.tables.items()
            if name not in self.system_tables and table.write_disposition != "skip"
        ]

    def seen_data(self, table: str) -> bool:
        """The normalizer wrote rows for the table, in this package or an earlier one."""
        return self._table(table).seen_data

    def typed_columns(self, table: str) -> list[Column]:
        """Columns with a data type; a column that has only seen None is not created."""
        return [
            column
            for column in self._table(table).columns.values()
            if column.data_type and not column.extra.get("x-loadstone-skip")
        ]

    def columns_for_destination(self, table: str) -> list[Column]:
        """Typed columns, plus the scd2 validity columns when the root uses scd2 and the
        schema does not list them (the normalizer never fills them; the loader does). Added
        columns come first, as in the tables dlt creates."""
        columns = self.typed_columns(table)
        if not columns:
            return columns
        if self.parent(table) is None and self.strategy(table) == "scd2":
            valid_from, valid_to = self.validity_columns(table)
            present = {c.name for c in columns}
            missing = [
                Column(name, data_type="timestamp", nullable=True, timezone=True)
                for name in (valid_from, valid_to)
                if name not in present
            ]
            columns = missing + columns  # first, where dlt's resource hints put them
        return columns

    # --- table chains ------------------------------------------------------------------

    def parent(self, table: str) -> str | None:
        return self._table(table).parent

    def root(self, table: str) -> str:
        seen = {table}
        while (parent := self.parent(table)) is not None and parent not in seen:
            seen.add(parent)
            table = parent
        return table

    def depth(self, table: str) -> int:
        depth = 0
        while (table := self.parent(table) or "") and depth < 1000:
            depth += 1
        return depth

    def nested_tables(self, root: str) -> list[str]:
        """All tables below ``root`` that hold data, parents before children."""
        found = [t for t in self.data_tables() if t != root and self.root(t) == root]
        return sorted(found, key=self.depth)

    # --- dispositions ------------------------------------------------------------------

    def disposition(self, table: str) -> str:
        """The root's write disposition (nested tables inherit it); default ``append``. A
        nested table that declares ``replace`` itself (``nested_hints=``) is replaced with
        its nested tables, as dlt 1.31 does."""
        seen = {table}
        at: str | None = table
        while at is not None and (parent := self.parent(at)) is not None and parent not in seen:
            if self._table(at).write_disposition == "replace":
                return "replace"
            seen.add(parent)
            at = parent
        return self._table(self.root(table)).write_disposition or "append"

    def strategy(self, table: str) -> str:
        """The root's merge strategy (``x-merge-strategy``), else the loader's default."""
        return self._table(self.root(table)).merge_strategy or self.default_strategy

    # --- key columns -------------------------------------------------------------------

    def _hinted(self, table: str, hint: str) -> list[str]:
        return [c.name for c in self.typed_columns(table) if c.hint(hint) is True]

    def primary_key(self, table: str) -> list[str]:
        return self._hinted(table, "primary_key")

    def merge_key(self, table: str) -> list[str]:
        return self._hinted(table, "merge_key")

    def _named(self, table: str, hint: str, default: str) -> str | None:
        hinted = self._hinted(table, hint)
        if hinted:
            return hinted[0]
        name = self.names.ident(default)
        return name if any(c.name == name for c in self.typed_columns(table)) else None

    def row_key(self, table: str) -> str | None:
        """``row_key`` column; on scd2 roots the ``x-row-version`` hash column."""
        hinted = self._hinted(table, "row_key") or self._hinted(table, "x-row-version")
        if hinted:
            return hinted[0]
        return self._named(table, "row_key", "_dlt_id")

    def parent_key(self, table: str) -> str | None:
        return self._named(table, "parent_key", "_dlt_parent_id")

    def root_key(self, table: str) -> str | None:
        return self._named(table, "root_key", "_dlt_root_id")

    def root_hint(self, table: str, hint: str) -> object:
        """A table hint of the root (nested tables inherit it): ``file_format``, scd2's ..."""
        return self._table(self.root(table)).extra.get(hint)

    def validity_columns(self, table: str) -> tuple[str, str]:
        """scd2 ``(valid_from, valid_to)``: column hints, else the ``validity_column_names``
        of the write disposition, else ``_dlt_valid_from`` / ``_dlt_valid_to``."""
        valid_from = self._hinted(table, "x-valid-from")
        valid_to = self._hinted(table, "x-valid-to")
        named = self.root_hint(table, "x-validity-column-names")
        if isinstance(named, (list, tuple)) and len(named) == 2:
            default_from, default_to = (self.names.ident(str(n)) for n in named)
        else:
            default_from = self.names.ident("_dlt_valid_from")
            default_to = self.names.ident("_dlt_valid_to")
        return (
            valid_from[0] if valid_from else default_from,
            valid_to[0] if valid_to else default_to,
        )

    def active_record_timestamp(self, table: str) -> object:
        """scd2 ``valid_to`` of active rows (``active_record_timestamp``); None means NULL."""
        return self.root_hint(table, "x-active-record-timestamp")

    def boundary_timestamp(self, table: str) -> object:
        """scd2 validity instant given in code (``boundary_timestamp``), else None."""
        return self.root_hint(table, "x-boundary-timestamp")

    def row_version(self, table: str) -> str | None:
        """scd2 row hash column: ``x-row-version`` hint, ``row_version_column_name``, row key."""
        hinted = self._hinted(table, "x-row-version")
        if hinted:
            return hinted[0]
        named = self.root_hint(table, "x-row-version-column-name")
        if named:
            return self.names.ident(str(named))
        return self.row_key(table)

    def hard_delete(self, table: str) -> tuple[str, bool] | None:
        """``hard_delete`` column and whether it is a bool (else non-NULL means delete)."""
        for c in self.typed_columns(table):
            if c.hard_delete is True or c.extra.get("x-hard-delete") is True:
                return c.name, c.data_type == "bool"
        return None

    def dedup_sort(self, table: str) -> list[tuple[str, str]]:
        """``dedup_sort`` columns (stored as ``dedup_sort`` or ``x-dedup-sort``)."""
        out = []
        for c in self.typed_columns(table):
            order = c.dedup_sort if c.dedup_sort is not None else c.extra.get("x-dedup-sort")
            if order in ("asc", "desc"):
                out.append((c.name, order))
        return out
