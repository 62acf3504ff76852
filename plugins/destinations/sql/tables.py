"""Reading load instructions out of a stored (dlt-form) schema.

Shared by the SQL destinations (DuckDB, PostgreSQL). The loader needs a handful of facts per table — its root, write disposition, merge strategy,
key columns, the nested tables below it — all of which dlt's stored schema encodes as table
and column hints. This module answers those questions, so ``merge.py`` only builds SQL.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from loadstone.destinations.contract import SYSTEM_TABLES
from loadstone.schema.hints import disposition_of

DEFAULT_STRATEGY = "delete-insert"


class _Names(Protocol):
    def ident(self, name: str) -> str: ...

    def table_ident(self, name: str) -> str: ...


class TableModel:
    """The tables of one stored schema, seen as a loader sees them."""

    def __init__(self, stored: Mapping[str, Any], names: _Names) -> None:
        self.stored = stored
        self.tables: Mapping[str, Mapping[str, Any]] = stored.get("tables") or {}
        self.names = names
        self.system_tables = {names.table_ident(n) for n in SYSTEM_TABLES} | set(SYSTEM_TABLES)

    # --- which tables ------------------------------------------------------------------

    def data_tables(self) -> list[str]:
        """Tables that hold data (not system tables, not ``skip``), in schema order."""
        return [
            name
            for name, table in self.tables.items()
            if name not in self.system_tables and self._disposition_of(table)[0] != "skip"
        ]

    def typed_columns(self, table: str) -> list[dict[str, Any]]:
        """Columns with a data type; a column that has only seen None is not created."""
        columns = (self.tables.get(table) or {}).get("columns") or {}
        return [
            {"name": name, **col}
            for name, col in columns.items()
            if col.get("data_type") and not col.get("x-loadstone-skip")
        ]

    def columns_for_destination(self, table: str) -> list[dict[str, Any]]:
        """Typed columns, plus the scd2 validity columns when the root uses scd2 and the
        schema does not list them (the normalizer never fills them; the loader does). Added
        columns come first, as in the tables dlt creates."""
        columns = self.typed_columns(table)
        if not columns:
            return columns
        if self.parent(table) is None and self.strategy(table) == "scd2":
            valid_from, valid_to = self.validity_columns(table)
            present = {c["name"] for c in columns}
            missing = [
                {"name": name, "data_type": "timestamp", "nullable": True, "timezone": True}
                for name in (valid_from, valid_to)
                if name not in present
            ]
            columns = missing + columns  # first, where dlt's resource hints put them
        return columns

    # --- table chains ------------------------------------------------------------------

    def parent(self, table: str) -> str | None:
        return (self.tables.get(table) or {}).get("parent")

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

    @staticmethod
    def _disposition_of(table: Mapping[str, Any]) -> tuple[str | None, str | None]:
        """The schema's one parser: stored form or dlt's resource form."""
        return disposition_of(table)

    def disposition(self, table: str) -> str:
        """The root's write disposition (nested tables inherit it); default ``append``."""
        raw, _ = self._disposition_of(self.tables.get(self.root(table)) or {})
        return raw or "append"

    def strategy(self, table: str) -> str:
        """The root's merge strategy (``x-merge-strategy``); default ``delete-insert``."""
        _, strategy = self._disposition_of(self.tables.get(self.root(table)) or {})
        return strategy or DEFAULT_STRATEGY

    # --- key columns -------------------------------------------------------------------

    def _hinted(self, table: str, hint: str) -> list[str]:
        return [c["name"] for c in self.typed_columns(table) if c.get(hint) is True]

    def primary_key(self, table: str) -> list[str]:
        return self._hinted(table, "primary_key")

    def merge_key(self, table: str) -> list[str]:
        return self._hinted(table, "merge_key")

    def _named(self, table: str, hint: str, default: str) -> str | None:
        hinted = self._hinted(table, hint)
        if hinted:
            return hinted[0]
        name = self.names.ident(default)
        return name if any(c["name"] == name for c in self.typed_columns(table)) else None

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

    def _table_hint(self, table: str, hint: str) -> Any:
        return (self.tables.get(self.root(table)) or {}).get(hint)

    def validity_columns(self, table: str) -> tuple[str, str]:
        """scd2 ``(valid_from, valid_to)``: column hints, else the ``validity_column_names``
        of the write disposition, else ``_dlt_valid_from`` / ``_dlt_valid_to``."""
        valid_from = self._hinted(table, "x-valid-from")
        valid_to = self._hinted(table, "x-valid-to")
        named = self._table_hint(table, "x-validity-column-names")
        if isinstance(named, (list, tuple)) and len(named) == 2:
            default_from, default_to = (self.names.ident(str(n)) for n in named)
        else:
            default_from = self.names.ident("_dlt_valid_from")
            default_to = self.names.ident("_dlt_valid_to")
        return (
            valid_from[0] if valid_from else default_from,
            valid_to[0] if valid_to else default_to,
        )

    def active_record_timestamp(self, table: str) -> Any:
        """scd2 ``valid_to`` of active rows (``active_record_timestamp``); None means NULL."""
        return self._table_hint(table, "x-active-record-timestamp")

    def boundary_timestamp(self, table: str) -> Any:
        """scd2 validity instant given in code (``boundary_timestamp``), else None."""
        return self._table_hint(table, "x-boundary-timestamp")

    def row_version(self, table: str) -> str | None:
        """scd2 row hash column: ``x-row-version`` hint, ``row_version_column_name``, row key."""
        hinted = self._hinted(table, "x-row-version")
        if hinted:
            return hinted[0]
        named = self._table_hint(table, "x-row-version-column-name")
        if named:
            return self.names.ident(str(named))
        return self.row_key(table)

    def hard_delete(self, table: str) -> tuple[str, bool] | None:
        """``hard_delete`` column and whether it is a bool (else non-NULL means delete)."""
        for c in self.typed_columns(table):
            if c.get("hard_delete") is True or c.get("x-hard-delete") is True:
                return c["name"], c.get("data_type") == "bool"
        return None

    def dedup_sort(self, table: str) -> list[tuple[str, str]]:
        """``dedup_sort`` columns (stored as ``dedup_sort`` or ``x-dedup-sort``)."""
        out = []
        for c in self.typed_columns(table):
            order = c.get("dedup_sort", c.get("x-dedup-sort"))
            if order in ("asc", "desc"):
                out.append((c["name"], order))
        return out
