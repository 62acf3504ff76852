"""The column types one task knows: the schema's and the driver's, and those it decides.

A column the task meets first is typed by its first value here: a type the driver forces
(a re-run), else the schema's preferred type for the name, else a detection, else the
value's own type. Each decision is recorded as a :class:`~.facts.ColumnFact` with the
position of that value, for the driver to compare with other chunks' decisions.
"""

from __future__ import annotations

from collections.abc import Mapping

from loadstone.plugins.normalizers.relational import type_rules
from loadstone.plugins.normalizers.relational.facts import ColumnFact, ColumnKey, Position
from loadstone.plugins.normalizers.relational.names import ColumnNames
from loadstone.plugins.normalizers.relational.native import ISO_TIMESTAMP_TEXT
from loadstone.plugins.normalizers.relational.task import EngineConfig, RootSpec
from loadstone.schema.decimals import DEFAULT_SHAPE, DecimalShape
from loadstone.typing import TDataItem

#: data type -> the Python type whose values need no coercion into it. A timestamp column
#: gets the C path's sentinel instead: no Python type is it (so the Python loop coerces every
#: value), while the C path turns ISO text of the common shape into the datetime directly
EXACT: dict[str, object] = {"text": str, "bigint": int, "double": float, "bool": bool}
if ISO_TIMESTAMP_TEXT is not None:
    EXACT["timestamp"] = ISO_TIMESTAMP_TEXT


class ColumnTypes:
    """Table -> column -> data type, the per-cell fast-path types, and the new columns."""

    __slots__ = (
        "_decimals",
        "_detections",
        "_existing_tables",
        "_forced",
        "_names",
        "_preferred",
        "by_table",
        "exact",
        "new_columns",
    )

    def __init__(
        self, config: EngineConfig, forced: Mapping[str, Mapping[str, str]], names: ColumnNames
    ) -> None:
        self._forced = forced
        self._preferred = config.preferred
        self._detections = config.detections
        self._existing_tables = config.existing_tables
        self._decimals = config.decimals
        self._names = names
        #: table -> column -> data type
        self.by_table: dict[str, dict[str, str]] = {t: dict(c) for t, c in config.known.items()}
        #: table -> {column: Python type stored as is} (the per-cell fast path)
        self.exact: dict[str, dict[str, object]] = {}
        #: the columns this task typed or was told, with the position of their first value
        self.new_columns: dict[ColumnKey, ColumnFact] = {}

    def exact_of(self, table: str) -> dict[str, object]:
        """The fast-path types of ``table``'s columns (made on the table's first row)."""
        exact = self.exact.get(table)
        if exact is None:
            types = self.by_table.get(table) or {}
            exact = self.exact[table] = {c: EXACT[t] for c, t in types.items() if t in EXACT}
        return exact

    def decimal_shape(self, table: str, col: str) -> DecimalShape:
        """The precision and scale values of a decimal column must fit (declared, or the
        default ``decimal(38,9)``)."""
        return self._decimals.get(table, {}).get(col, DEFAULT_SHAPE)

    def new_column(
        self,
        table: str,
        col: str,
        value: TDataItem,
        vt: str,
        spec: RootSpec,
        position: Position,
    ) -> str | None:
        """Type of a column this task meets first; '' discards the row, None the value.

        The ``columns`` contract holds only for a table that exists: the load that creates a
        table takes all its columns, also when hints declared some of them before (dlt 1.31:
        under ``freeze`` the first run of a table with a ``columns`` hint loads its other
        keys too). Its values are held to the ``data_type`` contract (:meth:`admit_variant`).
        """
        if table in self._existing_tables:
            action = spec.contract_action("columns", table=table, column=col, value=value)
            if action == "drop_row":
                return ""
            if action == "drop_value":
                return None
        forced = self._forced.get(table, {}).get(col)
        t: str | None
        if forced is not None:
            t = forced
            local = False
        else:
            local = True
            t = self._preferred.type_for(col) if self._preferred else None
            if t is None:
                t = type_rules.detect_type(value, self._detections) if self._detections else None
                if t is None:
                    t = vt
        self._add(table, col, t, ColumnFact(position, t, False, local, self._names.source_of(col)))
        return t

    def admit_variant(
        self,
        table: str,
        col: str,
        vcol: str,
        vt: str,
        value: TDataItem,
        spec: RootSpec,
        position: Position,
    ) -> bool | None:
        """Whether variant column ``vcol`` (new to the task) may take ``value`` by the
        ``data_type`` contract: True, False (drop the value) or None (drop the row)."""
        action = spec.contract_action(
            "data_type",
            table=table,
            column=vcol,  # the variant column refused, as dlt names it
            value=value,
            table_is_new=not (
                table in self._existing_tables
                or spec.existing_table
                or (spec.typed_declared and table == spec.root)
            ),
        )
        if action == "drop_row":
            return None
        if action == "drop_value":
            return False
        self._add(
            table, vcol, vt, ColumnFact(position, vt, True, False, self._names.source_of(col))
        )
        return True

    def _add(self, table: str, col: str, data_type: str, fact: ColumnFact) -> None:
        self.by_table[table][col] = data_type
        if data_type in EXACT:
            self.exact.setdefault(table, {})[col] = EXACT[data_type]
        self.new_columns[(table, col)] = fact
