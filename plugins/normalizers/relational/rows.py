"""Row flattening: one item into a root row and the rows of its nested tables.

A nested dict's keys become columns of its row (``a__b``), a list becomes rows of a nested
table, linked to their parent row by ``_dlt_parent_id`` and ordered by ``_dlt_list_idx``;
``max_nesting`` (or a column typed ``json``) stops the flattening and keeps the value whole.
Each flattened row goes to :class:`~.row_typing.RowTyper` at once, so a row exists only as
a dict for the time it takes to place its values.
"""

from __future__ import annotations

import datetime

from loadstone.plugins.normalizers.relational import row_keys
from loadstone.plugins.normalizers.relational.facts import Position
from loadstone.plugins.normalizers.relational.names import ColumnNames, KeyNames, list_table_parts
from loadstone.plugins.normalizers.relational.native import NativeLoops, Pending
from loadstone.plugins.normalizers.relational.row_keys import (
    LIST_IDX,
    LOAD_ID,
    PARENT_ID,
    ROOT_ID,
    ROW_ID,
    digest_id,
)
from loadstone.plugins.normalizers.relational.row_typing import Cursor, RowTyper
from loadstone.plugins.normalizers.relational.task import EngineConfig, RootSpec
from loadstone.typing import TDataItem


def last_per_path(pending: Pending) -> Pending:
    """One list per nested table path: when keys of one object normalize to the same name
    (``"a b"`` and ``"a_b"``) and hold lists, the last key's list is kept, as dlt keeps it.

    Each comes with the nesting level of its table's rows as dlt 1.31 counts it: the level
    of the row that holds the list + 1, however deep in that row's objects the list was (a
    list met at depth ``d`` under ``parts`` was at row level ``d + 1 - len(parts)``); the
    objects of a row only count towards ``max_table_nesting`` within the row."""
    if len(pending) >= 2:
        last = {parts: index for index, (parts, _seq, _depth) in enumerate(pending)}
        if len(last) != len(pending):
            pending = [entry for index, entry in enumerate(pending) if last[entry[0]] == index]
    return [(parts, seq, depth + 1 - len(parts)) for parts, seq, depth in pending]


class TablesMet:
    """The tables this task wrote to: parent, first position, and the contract's word on
    the ones it may not create."""

    __slots__ = ("_actions", "first", "parents", "refused_rows")

    def __init__(self) -> None:
        self.parents: dict[str, str | None] = {}
        self.first: dict[str, Position] = {}
        #: contract decision for tables this task may not create (same for every row)
        self._actions: dict[str, str] = {}
        #: items dropped because the contract refuses their root table
        self.refused_rows = 0

    def meet(self, table: str, parent: str | None, position: Position) -> None:
        self.parents[table] = parent
        self.first[table] = position

    def admits(self, spec: RootSpec, table: str) -> bool:
        """The ``tables`` contract decision for a table new to the schema, decided once."""
        action = self._actions.get(table)
        if action is None:
            action = spec.contract_action("tables", table=table)
            self._actions[table] = action
        return action == "keep"


class RowFlattener:
    """Turns the items of one chunk into rows and hands each row to the typer."""

    __slots__ = (
        "_chunk_index",
        "_existing_tables",
        "_load_id",
        "_load_time",
        "_name_of",
        "_names",
        "_native",
        "_prefix_names",
        "_table_source",
        "_type_row",
        "_types",
        "_widths",
        "cursor",
        "tables",
    )

    def __init__(
        self,
        config: EngineConfig,
        chunk_index: int,
        names: ColumnNames,
        typer: RowTyper,
        tables: TablesMet,
        cursor: Cursor,
        native: NativeLoops | None,
    ) -> None:
        self._chunk_index = chunk_index
        self._load_id = config.load_id
        self._load_time = datetime.datetime.fromtimestamp(
            float(config.load_id), datetime.timezone.utc
        )
        self._existing_tables = config.existing_tables
        self._native = native
        self._names = names
        self.tables = tables
        self.cursor = cursor
        # the owners' dicts and methods, bound once: the per-row loop reads one attribute
        self._prefix_names = names.prefix_names
        self._name_of = names.name_of
        self._table_source = names.table_source
        self._types = typer.column_types.by_table
        self._type_row = typer.type_row
        #: each table's last row width: its next row's dict is made that wide (new_row)
        self._widths: dict[str, int] = {}

    def process_item(self, item: TDataItem, spec: RootSpec, line: int) -> None:
        """The item on ``line``: its root row, then its nested tables' rows, depth first."""
        cursor = self.cursor
        cursor.line = line
        cursor.seq = 0
        if type(item) is not dict:
            item = {"value": item}
        root = spec.root
        tables = self.tables
        if not spec.existing_table and not tables.admits(spec, root):
            tables.refused_rows += 1
            return
        if root not in tables.parents:
            tables.meet(root, None, (self._chunk_index, line, 0))
            self._table_source.setdefault(root, spec.source_name)
        raw = self._new_row(root)
        pending: Pending = []
        self.flatten(item, (), 0, raw, root, spec, pending)
        raw[LOAD_ID] = self._load_id
        if spec.row_hash:
            raw[spec.valid_from] = self._load_time
        row_id = raw.get(ROW_ID)
        if row_id is None:
            row_id = raw[ROW_ID] = row_keys.root_row_id(item, raw, spec)
        self._widths[root] = len(raw)
        if not self._type_row(root, raw, spec):
            return
        root_id = row_id if spec.propagate_root_key else None
        for parts, seq, depth in last_per_path(pending):
            self.process_list(seq, (root,), parts, depth, row_id, root, root_id, spec)

    def _new_row(self, table: str) -> dict[str, TDataItem]:
        """An empty row, made as wide as the table's last one where the C loops run (a row
        dict grown from empty rehashed its keys at every resize: 2-3% of the workers' CPU)."""
        if self._native is None:
            return {}
        return self._native.new_row(self._widths.get(table, 0))

    def flatten(
        self,
        data: dict[str, TDataItem],
        prefix: tuple[str, ...],
        depth: int,
        out: dict[str, TDataItem],
        table: str,
        spec: RootSpec,
        pending: Pending,
    ) -> None:
        """``data``'s keys into ``out`` as columns; lists (and their depth) into ``pending``."""
        if self._native is not None:
            self._native.flatten(
                self._prefix_names,
                self._name_of,
                data,
                prefix,
                depth,
                spec.max_nesting,
                out,
                self._types.get(table),
                pending,
            )
            return
        expand = depth < spec.max_nesting
        table_types = self._types.get(table)
        names: KeyNames | None = self._prefix_names.get(prefix)
        if names is None:
            names = self._names.names_under(prefix)
        deferred: list[tuple[dict[str, TDataItem], tuple[str, ...]]] | None = None
        for key, value in data.items():
            entry = names.get(key)
            if entry is None:
                entry = self._name_of(names, prefix, key)
            tv = type(value)
            if (tv is dict or tv is list) and expand:
                parts, col = entry
                if table_types is None or table_types.get(col) != "json":
                    if tv is dict:
                        # dlt places nested dicts after this level's own keys, last dict first
                        if deferred is None:
                            deferred = []
                        deferred.append((value, parts))
                    else:
                        pending.append((parts, value, depth + 1))
                    continue
            out[entry[1]] = value
        if deferred is not None:
            for value, parts in reversed(deferred):
                self.flatten(value, parts, depth + 1, out, table, spec, pending)

    def _meet(self, table: str, parent: str | None, spec: RootSpec) -> bool:
        """Meet a nested table this task has not written yet; False when the contract
        refuses it (a new nested table of an existing root answers to the root's contract)."""
        tables = self.tables
        if table not in self._existing_tables and spec.existing_table:
            if not tables.admits(spec, table):
                return False
        cursor = self.cursor
        tables.meet(table, parent, (self._chunk_index, cursor.line, cursor.seq))
        return True

    def process_list(
        self,
        seq: list[TDataItem],
        parent_parts: tuple[str, ...],
        parts: tuple[str, ...],
        depth: int,
        parent_id: str,
        parent_table: str,
        root_id: str | None,
        spec: RootSpec,
    ) -> None:
        """The elements of one list as rows of its nested table (and theirs, recursively)."""
        if not seq:
            return
        table_parts = parent_parts + list_table_parts(parts)
        table = self._names.table_name(table_parts)
        unlinked = table in spec.unlinked
        if table not in self.tables.parents and not self._meet(
            table, None if unlinked else parent_table, spec
        ):
            return
        max_nesting = spec.max_nesting
        cursor = self.cursor
        for idx, element in enumerate(seq):
            cursor.seq += 1
            raw = self._new_row(table)
            pending: Pending = []
            te = type(element)
            if te is dict:
                self.flatten(element, (), depth, raw, table, spec, pending)
            elif te is list:  # a row {"list": element} one level down, as dlt wraps it
                table_types = self._types.get(table)
                if depth + 1 < max_nesting and (
                    table_types is None or table_types.get("list") != "json"
                ):
                    pending.append((("list",), element, depth + 2))
                else:
                    raw["list"] = element
            else:
                raw["value"] = element
            if root_id is not None:
                raw[ROOT_ID] = root_id
            if unlinked:  # a table of its own: its rows are loaded as root rows
                raw[LOAD_ID] = self._load_id
            else:
                raw[PARENT_ID] = parent_id
                raw[LIST_IDX] = idx
            row_id = raw.get(ROW_ID)
            if row_id is None:
                row_id = raw[ROW_ID] = digest_id(f"{parent_id}_{table}_{idx}")
            self._widths[table] = len(raw)
            if not self._type_row(table, raw, spec):
                continue
            sub_root_id = row_id if table in spec.own_root_key else root_id
            for sub_parts, sub_seq, sub_depth in last_per_path(pending):
                self.process_list(
                    sub_seq, table_parts, sub_parts, sub_depth, row_id, table, sub_root_id, spec
                )
