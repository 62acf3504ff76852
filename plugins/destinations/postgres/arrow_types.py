"""The Arrow type of a PostgreSQL result column, from what the driver describes of it.

``pipeline.dataset()["t"].arrow()`` (and ``.df()``) on PostgreSQL gives each column the type
dlt 1.31 gives it, not one guessed from the values: ``numeric(p,s)`` as ``decimal128(p, s)``
(``decimal128(38, 9)`` without a declared shape), a timestamp's unit by its precision
(``timestamptz(3)`` as ``timestamp[ms, tz=UTC]``), a column of nulls in its own type (not
Arrow's ``null``), JSON, arrays and UUIDs as text. A value that does not fit the type (a
``wei`` beyond 38 digits) is read as it is instead (``query_results``), never cut.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pyarrow as pa

#: Arrow's widest 128-bit decimal: dlt reads a wider ``numeric`` (wei's 156,78) as 38,0
_DECIMAL128_DIGITS = 38

#: PostgreSQL type OIDs whose Arrow type does not depend on the column's modifier
_FIXED: Mapping[int, pa.DataType] = {
    16: pa.bool_(),  # boolean
    17: pa.binary(),  # bytea
    18: pa.string(),  # "char"
    19: pa.string(),  # name
    20: pa.int64(),  # bigint
    21: pa.int64(),  # smallint
    23: pa.int64(),  # integer
    25: pa.string(),  # text
    114: pa.string(),  # json
    700: pa.float64(),  # real
    701: pa.float64(),  # double precision
    1042: pa.string(),  # character(n)
    1043: pa.string(),  # character varying
    1082: pa.date32(),  # date
    2950: pa.string(),  # uuid
    3802: pa.string(),  # jsonb
}


def _unit(precision: int | None) -> str:
    """A timestamp's Arrow unit by its fractional digits (6, PostgreSQL's finest, unsaid)."""
    if precision is None:
        return "us"
    if precision <= 0:
        return "s"
    return "ms" if precision <= 3 else "us"


def _numeric(precision: int | None, scale: int | None) -> pa.DataType:
    if precision is None:
        return pa.decimal128(38, 9)
    if precision > _DECIMAL128_DIGITS:
        return pa.decimal128(_DECIMAL128_DIGITS, 0)
    return pa.decimal128(precision, scale or 0)


def _time(precision: int | None) -> pa.DataType:
    """A time of day's Arrow type by its fractional digits, as a timestamp's unit."""
    unit = _unit(precision)
    return pa.time64(unit) if unit == "us" else pa.time32(unit)


_MODIFIED: Mapping[int, Callable[[int | None, int | None], pa.DataType]] = {
    1700: _numeric,
    1083: lambda precision, _: _time(precision),
    1114: lambda precision, _: pa.timestamp(_unit(precision)),
    1184: lambda precision, _: pa.timestamp(_unit(precision), tz="UTC"),
}


def arrow_type(type_code: int, precision: int | None, scale: int | None) -> pa.DataType | None:
    """The Arrow type of a column the driver describes so; None where the values decide
    (a type without a rule here). Arrays are JSON text, as dlt's."""
    if type_code in _FIXED:
        return _FIXED[type_code]
    modified = _MODIFIED.get(type_code)
    if modified is not None:
        return modified(precision, scale)
    if type_code in _ARRAYS:
        return pa.string()
    return None


#: OIDs of the array types of the types above (``_int8``, ``_text`` ...): JSON text
_ARRAYS = frozenset({1000, 1001, 1005, 1007, 1009, 1014, 1015, 1016, 1021, 1022, 1115, 1182})
_ARRAYS |= frozenset({1183, 1185, 1231, 199, 3807, 2951})
