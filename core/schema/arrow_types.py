"""The data type dlt 1.31 gives a column from its Arrow type: the one reading of Arrow types.

Recorded from dlt 1.31 as a black box (``tests/fixtures/arrow/dlt_arrow_types.json``):

* integers are ``bigint`` with their width in bits as precision below 64 (``int32`` ->
  precision 32: ``INTEGER`` in DuckDB); unsigned widths alike; 64-bit ones have none;
* every float is ``double``; ``bool``; strings (large, view, dictionary-encoded) ``text``;
  binaries ``binary``;
* ``decimal128(p, s)`` keeps precision and scale;
* ``date32/64`` ``date``; ``time32/64`` ``time``;
* timestamps are ``timestamp``, with or without a zone (no ``timezone`` hint: dlt loads a
  naive timestamp as UTC);
* a time's or timestamp's precision is recorded for seconds (0) and milliseconds (3), not
  for micro- or nanoseconds;
* structs, lists and maps are ``json``;
* a ``null``-typed column has no type: it is not created (as a column of only nulls).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loadstone.schema.model import Column

if TYPE_CHECKING:
    import pyarrow as pa

#: a time's or timestamp's unit -> the precision dlt records (None: the default, not recorded)
_UNIT_PRECISION = {"s": 0, "ms": 3, "us": None, "ns": None}


def column_from_arrow(name: str, arrow_type: pa.DataType) -> Column | None:
    """The column dlt 1.31 infers for an Arrow field of ``arrow_type``; None for ``null``."""
    import pyarrow as pa

    t = pa.types
    if t.is_dictionary(arrow_type):
        return column_from_arrow(name, arrow_type.value_type)
    if t.is_null(arrow_type):
        return None
    if t.is_integer(arrow_type):
        width = arrow_type.bit_width
        return Column(
            name, data_type="bigint", nullable=True, precision=None if width >= 64 else width
        )
    if t.is_floating(arrow_type):
        return Column(name, data_type="double", nullable=True)
    if t.is_boolean(arrow_type):
        return Column(name, data_type="bool", nullable=True)
    if t.is_string(arrow_type) or t.is_large_string(arrow_type) or _is_view(arrow_type, "string"):
        return Column(name, data_type="text", nullable=True)
    if (
        t.is_binary(arrow_type)
        or t.is_large_binary(arrow_type)
        or t.is_fixed_size_binary(arrow_type)
    ):
        return Column(name, data_type="binary", nullable=True)
    if t.is_decimal(arrow_type):
        return Column(
            name,
            data_type="decimal",
            nullable=True,
            precision=arrow_type.precision,
            scale=arrow_type.scale,
        )
    if t.is_date(arrow_type):
        return Column(name, data_type="date", nullable=True)
    if t.is_time(arrow_type):
        precision = _UNIT_PRECISION[arrow_type.unit]
        return Column(name, data_type="time", nullable=True, precision=precision)
    if t.is_timestamp(arrow_type):
        precision = _UNIT_PRECISION[arrow_type.unit]
        return Column(name, data_type="timestamp", nullable=True, precision=precision)
    if t.is_nested(arrow_type):
        return Column(name, data_type="json", nullable=True)
    # other types (an interval read by connectorx) as their text; extract refuses Arrow
    # durations and intervals in items (loadstone.extract.arrow_items)
    return Column(name, data_type="text", nullable=True)


def _is_view(arrow_type: pa.DataType, kind: str) -> bool:
    return str(arrow_type) == f"{kind}_view"
