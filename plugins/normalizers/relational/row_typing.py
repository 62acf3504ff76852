"""One flattened row into its table's columns: typed, coerced, or sent to a variant column.

A value that already has its column's Python type is placed on the fast path (the loop in
:meth:`RowTyper.type_row`, or in C: ``_speedups.fill`` is that loop's fast path); any other
goes through :meth:`RowTyper.place_other`: a new column (typed by :mod:`.column_types`), a
coercion (:mod:`.type_rules`), or a variant column. A schema contract may drop the value or
the whole row; a dropped row's values are taken back from the buffer.
"""

from __future__ import annotations

import decimal

import attrs

from loadstone.plugins.normalizers.relational import type_rules
from loadstone.plugins.normalizers.relational.column_types import ColumnTypes
from loadstone.plugins.normalizers.relational.facts import TaskError
from loadstone.plugins.normalizers.relational.names import ColumnNames
from loadstone.plugins.normalizers.relational.native import Cell, NativeLoops
from loadstone.plugins.normalizers.relational.table_buffers import TableBuffers, discard, put
from loadstone.plugins.normalizers.relational.task import RootSpec, TaskFailure
from loadstone.plugins.normalizers.relational.type_rules import json_text
from loadstone.schema.decimals import misfit_reason
from loadstone.typing import TDataItem

_FAST_TYPES = {str: "text", bool: "bool", float: "double", dict: "json", list: "json"}
#: types whose values are converted even into a column of their own type (JSON text, the
#: wei storage of 38 digits, a decimal column's own precision and scale)
_SLOW_TYPES = frozenset(("json", "wei", "decimal"))
_I64_MIN = type_rules.INT64_MIN
_I64_MAX = type_rules.INT64_MAX


@attrs.define
class Cursor:
    """Where the task is: the line of the current item, and the visit order within it.

    ``(chunk, line, seq)`` is the position a new column or table reports: the driver keeps
    the decision of the globally first one.
    """

    line: int = 0
    seq: int = 0


def _refuse_nulls(table: str, raw: dict[str, TDataItem], spec: RootSpec) -> None:
    """A null in a column declared not nullable fails the package at normalize, naming
    table and column (dlt 1.31's ``CannotCoerceNullException``), not the load later."""
    for column in spec.null_refused.get(table, ()):
        if column in raw and raw[column] is None:
            raise TaskFailure(TaskError("not_null", table=table, column=column))


class RowTyper:
    """Places the values of flattened rows into the table buffers, by column type."""

    __slots__ = (
        "_buffers",
        "_chunk_index",
        "_cursor",
        "_exact",
        "_flush",
        "_flush_rows",
        "_names",
        "_native",
        "_tables",
        "_types",
        "column_types",
        "discarded_rows",
    )

    def __init__(
        self,
        chunk_index: int,
        flush_rows: int,
        column_types: ColumnTypes,
        names: ColumnNames,
        buffers: TableBuffers,
        cursor: Cursor,
        native: NativeLoops | None,
    ) -> None:
        self._chunk_index = chunk_index
        self._flush_rows = flush_rows
        self.column_types = column_types
        self._names = names
        self._cursor = cursor
        self._native = native
        # the owners' dicts and methods, bound once: the per-row loop reads one attribute
        self._types = column_types.by_table
        self._exact = column_types.exact
        self._tables = buffers.tables
        self._buffers = buffers
        self._flush = buffers.flush
        #: rows a schema contract dropped because of one of their values
        self.discarded_rows = 0

    def type_row(self, table: str, raw: dict[str, TDataItem], spec: RootSpec) -> bool:
        """Type and coerce one flattened row straight into the table's column lists.

        Returns False when a schema contract discards the row (nothing of it is kept).
        """
        if spec.null_refused:
            _refuse_nulls(table, raw, spec)
        types = self._types.get(table)
        if types is None:
            types = self._types[table] = {}
        buffer = self._tables.get(table)
        if buffer is None:
            buffer = self._buffers.of(table)
        n = buffer.rows
        columns = buffer.columns
        exact = self._exact.get(table)
        if exact is None:
            exact = self.column_types.exact_of(table)
        cursor = self._cursor
        seq = cursor.seq
        native = self._native
        # a row a contract discards is still read to its end: the changes its other values
        # make where the contract lets them (a new column, a variant) stay, as in dlt 1.31
        kept = True
        if native is not None:
            fill = native.fill
            step = fill(raw, exact, columns, n, 0, seq)
            while type(step) is tuple:
                pos, col, value, seq = step
                cursor.seq = seq
                try:
                    placed = self.place_other(table, col, value, spec, types, columns, n)
                except TaskFailure as failure:
                    raise failure.with_row(raw, col) from None
                kept = kept and placed
                step = fill(raw, exact, columns, n, pos, seq)
            seq = step  # type: ignore[assignment]  # the loop above ends on an int (no cast: hot path)
        else:
            for col, value in raw.items():
                seq += 1
                tv = type(value)
                if tv is exact.get(col) and (tv is not int or _I64_MIN <= value <= _I64_MAX):
                    put(columns, n, col, value)  # the value already has the column's type
                    continue
                if value is None:
                    continue
                cursor.seq = seq
                try:
                    placed = self.place_other(table, col, value, spec, types, columns, n)
                except TaskFailure as failure:
                    raise failure.with_row(raw, col) from None
                kept = kept and placed
        cursor.seq = seq
        if not kept:
            return self._discard(columns, n)
        n += 1
        buffer.rows = n
        if n >= self._flush_rows:
            self._flush(table)
        return True

    def _discard(self, columns: dict[str, Cell], n: int) -> bool:
        """Drop row ``n`` (a contract said so): count it, take its values back."""
        self.discarded_rows += 1
        return discard(columns, n)

    def place_other(
        self,
        table: str,
        col: str,
        value: TDataItem,
        spec: RootSpec,
        types: dict[str, str],
        columns: dict[str, Cell],
        n: int,
    ) -> bool:
        """Place a value the fast path did not: a new column, a coercion, a variant.

        Returns False when the row must be discarded (a contract said so); a value a
        contract drops is simply not placed. The cursor's ``seq`` is the value's visit.
        """
        tv = type(value)
        vt = _FAST_TYPES.get(tv)
        if vt is None:
            if tv is int:
                vt = "bigint" if _I64_MIN <= value <= _I64_MAX else "wei"
            else:
                vt = type_rules.py_type(value)
        t = types.get(col)
        if t is None:
            t = self.column_types.new_column(table, col, value, vt, spec, self._position())
            if t is None:
                return True
            if t == "":
                return False
        if t != vt or vt in _SLOW_TYPES:
            return self._place_slow(table, col, t, vt, value, spec, types, columns, n) is not None
        put(columns, n, col, value)
        return True

    def _place_slow(
        self,
        table: str,
        col: str,
        t: str,
        vt: str,
        value: TDataItem,
        spec: RootSpec,
        types: dict[str, str],
        columns: dict[str, Cell],
        n: int,
    ) -> bool | None:
        """Coercions, JSON text, wide integers and variant columns (None: discard the row)."""
        if t == vt == "json":  # a scalar is no document: coerce refuses it, it goes to a variant
            put(columns, n, col, json_text(value))
            return True
        if t == vt == "wei":
            if type_rules.fits_wei_storage(value):
                put(columns, n, col, decimal.Decimal(value))
                return True
            return self._variant(table, col, "text", str(value), spec, types, columns, n)
        try:
            coerced = type_rules.coerce(t, vt, value)
        except type_rules.CoercionError:
            pass
        else:
            if t == "decimal":
                coerced = self._fitted(table, col, value, coerced)
            put(columns, n, col, coerced)
            return True
        if vt == "json":
            value = json_text(value)
        elif vt == "wei":
            if type_rules.fits_wei_storage(value):
                value = decimal.Decimal(value)
            else:
                vt, value = "text", str(value)
        return self._variant(table, col, vt, value, spec, types, columns, n)

    def _fitted(
        self, table: str, col: str, value: TDataItem, exact: decimal.Decimal
    ) -> decimal.Decimal:
        """``exact`` in its decimal column's scale; a value the column cannot hold without
        rounding stops the task as a data error naming table, column and value."""
        shape = self.column_types.decimal_shape(table, col)
        fitted = type_rules.fit_decimal(exact, shape)
        if fitted is None:
            error = TaskError(
                "does_not_fit",
                line=self._cursor.line,
                message=misfit_reason(exact, shape),
                table=table,
                column=col,
                value=str(value),
                column_type=shape.type_name,
            )
            raise TaskFailure(error)
        return fitted

    def _variant(
        self,
        table: str,
        col: str,
        vt: str,
        value: TDataItem,
        spec: RootSpec,
        types: dict[str, str],
        columns: dict[str, Cell],
        n: int,
    ) -> bool | None:
        """``value`` into the variant column of ``col`` for its type ``vt``."""
        vcol = self._names.variant_name(col, vt)
        if vt == "decimal":
            value = self._fitted(table, vcol, value, value)
        if vcol not in types:
            admitted = self.column_types.admit_variant(
                table, col, vcol, vt, value, spec, self._position()
            )
            if not admitted:
                return admitted
        put(columns, n, vcol, value)
        return True

    def _position(self) -> tuple[int, int, int]:
        cursor = self._cursor
        return (self._chunk_index, cursor.line, cursor.seq)
