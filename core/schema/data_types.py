"""The type rules of loadstone, in one pure module.

Why one module: the normalizer applies these rules inside Spark workers for every value of
every row, and the schema applies them when it infers a new column. If the two disagreed, a
column's schema type and its stored values would drift apart. So everything about data types
lives here, as pure functions without Spark, state or I/O (they pickle and run anywhere):

* :func:`py_type_to_data_type`: which data type a Python value has;
* :func:`coerce_value`: whether (and how) a value of one data type is stored in a column of
  another; when it cannot be, the normalizer writes a *variant column* instead;
* :func:`variant_column_name`: the name of that variant column, ``<column>__v_<type>``;
* precision and scale rules (:func:`default_precision_scale`, :func:`validate_precision`).

The coercion table reproduces dlt 1.31's observed behaviour (black-box runs recorded in
``tests/fixtures/schemas/coercion_dlt.json`` and ``coercion_hinted_dlt.json``); per target:

=========  ==================================================================================
text       every scalar: ``str()`` (``True`` -> ``"True"``, ``2.0`` -> ``"2.0"``), ISO 8601 for
           date/time values, standard base64 for bytes
bigint     text through Python ``int()`` (spaces, ``+``, ``_``) or a lower-case ``0x`` hex
           literal; whole doubles; wei within 64 bits. Not: ``"1.5"``, ``"1e3"``, bool
double     text through ``float()`` or ``0x`` hex; bigint, wei, decimal. Not: bool
decimal    text through ``Decimal()`` or ``0x`` hex; bigint, wei, finite doubles
wei        integers of up to 76 digits from text, bigint, whole doubles and decimals
bool       numbers (``bool(x)``); text ``y/yes/t/true/1`` and ``n/no/f/false/0`` in any
           case, without surrounding spaces
timestamp  text: ISO 8601 timestamp, else ISO date (midnight), else Unix epoch seconds;
           numbers as epoch seconds; dates as midnight UTC. Zones are converted to UTC
date       as timestamp, then the UTC date
time       text ``HH:MM[:SS[.ffffff]]`` with an optional zone, which is dropped
binary     text: ``0x`` hex or strict base64; non-negative ints little-endian, minimal length
json       only documents (dicts and lists); a scalar goes to a variant column
=========  ==================================================================================

Deliberate difference: dlt lets an out-of-range value reach a ``bigint`` column and the load
fails; here the value does not coerce, so it lands in a variant column and the load succeeds.

Integers beyond the signed 64-bit range (dlt's extract rejects them) are stored losslessly:
as ``wei`` when ``abs(value) < 10**76`` (exact in a Parquet ``decimal256(76, 0)``, which covers
every 252-bit integer and so every realistic Ethereum amount) and as ``text`` (the exact
decimal digits) beyond that, because no decimal type of any destination holds them.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
import math
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Final

from loadstone.exceptions import (
    CoercionError,
    InvalidPrecisionError,
    UnsupportedValueError,
)
from loadstone.schema.iso8601 import parse_iso_date, parse_iso_timestamp
from loadstone.typing import TDataItem

if TYPE_CHECKING:
    from loadstone.naming import NamingConvention

__all__ = [
    "BIGINT_MAX",
    "BIGINT_MIN",
    "DATA_TYPES",
    "DEFAULT_DECIMAL_PRECISION",
    "DEFAULT_DECIMAL_SCALE",
    "DEFAULT_TIMESTAMP_PRECISION",
    "PRECISION_MEANING",
    "WEI_MAX_ABS",
    "WEI_PRECISION",
    "can_coerce",
    "coerce_value",
    "default_precision_scale",
    "is_data_type",
    "py_type_to_data_type",
    "validate_precision",
    "variant_column_name",
]

#: every data type a column may have (dlt's names).
DATA_TYPES: Final[tuple[str, ...]] = (
    "text",
    "double",
    "bool",
    "timestamp",
    "date",
    "time",
    "bigint",
    "binary",
    "json",
    "decimal",
    "wei",
)
_DATA_TYPE_SET: Final = frozenset(DATA_TYPES)

BIGINT_MIN: Final = -(2**63)
BIGINT_MAX: Final = 2**63 - 1
#: largest decimal precision Parquet (decimal256) holds; wei values are exact below 10**76.
WEI_PRECISION: Final = 76
WEI_MAX_ABS: Final = 10**WEI_PRECISION
#: decimals without a hint are stored as decimal(38, 9) (dlt stores Decimal('4.56') as 4.560000000).
DEFAULT_DECIMAL_PRECISION: Final = 38
DEFAULT_DECIMAL_SCALE: Final = 9
#: timestamps and times are microseconds unless a precision says otherwise.
DEFAULT_TIMESTAMP_PRECISION: Final = 6

_UTC: Final = dt.timezone.utc
_ZERO: Final = dt.timedelta(0)


def is_data_type(name: object) -> bool:
    """True when ``name`` is one of :data:`DATA_TYPES`."""
    return name in _DATA_TYPE_SET


def py_type_to_data_type(value: TDataItem) -> str | None:
    """The data type of a Python value; ``None`` for ``None`` (a null has no type).

    Order matters: ``bool`` is an ``int`` and ``datetime`` is a ``date`` in Python.
    """
    if value is None:
        return None
    t = type(value)
    # fast path for exact JSON types, the overwhelming majority on the hot path
    if t is str:
        return "text"
    if t is int:
        if BIGINT_MIN <= value <= BIGINT_MAX:
            return "bigint"
        return "wei" if -WEI_MAX_ABS < value < WEI_MAX_ABS else "text"
    if t is float:
        return "double"
    if t is bool:
        return "bool"
    if t is dict or t is list:
        return "json"
    # subclasses and the remaining types
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, str):
        return "text"
    if isinstance(value, int):
        return py_type_to_data_type(int(value))
    if isinstance(value, float):
        return "double"
    if isinstance(value, dt.datetime):
        return "timestamp"
    if isinstance(value, dt.date):
        return "date"
    if isinstance(value, dt.time):
        return "time"
    if isinstance(value, Decimal):
        return "decimal"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "binary"
    if isinstance(value, (dict, list, tuple)):
        return "json"
    raise UnsupportedValueError(value)


def variant_column_name(column: str, data_type: str, naming: NamingConvention) -> str:
    """The variant column for values of ``data_type`` that do not fit ``column``.

    ``id`` + ``text`` -> ``id__v_text``. Built with the convention's ``shorten_fragments`` so a
    long column name is shortened exactly as dlt shortens it (and ``direct`` uses its own
    separator).
    """
    name = naming.shorten_fragments(column, "v_" + data_type)
    assert name is not None  # None only when called without parts
    return name


# --------------------------------------------------------------------------------------------
# coercion


def can_coerce(to_type: str, from_type: str, value: TDataItem) -> bool:
    """True when :func:`coerce_value` would succeed (convenience for planners and tests)."""
    try:
        coerce_value(to_type, from_type, value)
    except CoercionError:
        return False
    return True


def coerce_value(to_type: str, from_type: str | None, value: TDataItem) -> TDataItem:
    """Convert ``value`` (of data type ``from_type``) so it is stored in a ``to_type`` column.

    Returns the converted value (``None`` stays ``None``); raises :class:`CoercionError` when
    the value does not fit, which the normalizer turns into a variant column. ``from_type`` is
    normally ``py_type_to_data_type(value)``; when ``None`` it is computed.
    """
    if value is None:
        return None
    if from_type is None:
        from_type = py_type_to_data_type(value)
        if from_type is None:
            raise CoercionError(to_type, None, value, f"{type(value).__name__} has no data type")
    if to_type == from_type:
        if to_type == "timestamp" and value.tzinfo is None:
            return value.replace(tzinfo=_UTC)
        return value
    try:
        converter = _TO[to_type]
    except KeyError:
        raise CoercionError(to_type, from_type, value, f"unknown data type {to_type!r}") from None
    try:
        return converter(from_type, value)
    except CoercionError:
        raise
    except (ValueError, TypeError, OverflowError, ArithmeticError, binascii.Error) as ex:
        raise CoercionError(to_type, from_type, value, str(ex)) from None


def _fail(to_type: str, from_type: str, value: TDataItem) -> CoercionError:
    return CoercionError(to_type, from_type, value, f"{from_type} does not coerce to {to_type}")


def _to_text(from_type: str, value: TDataItem) -> str:
    if from_type == "text":
        return str(value)
    if from_type in ("timestamp", "date", "time"):
        return str(value.isoformat())
    if from_type == "binary":
        return base64.b64encode(bytes(value)).decode("ascii")
    if from_type == "json":
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
    # bool -> "True"/"False", numbers -> str() (2.0 -> "2.0"), as dlt stores them
    return str(value)


def _hex_digits(text: str) -> str | None:
    """The digits of a ``0x`` literal (lower-case prefix only, as dlt reads them)."""
    return text[2:] if text.startswith("0x") else None


def _text_to_int(text: str) -> int:
    """Integer from text: Python's ``int()`` (spaces, ``+``, ``_`` allowed) or ``0x`` hex."""
    digits = _hex_digits(text)
    if digits is not None:
        return int(digits, 16)
    return int(text, 10)


def _to_bigint(from_type: str, value: TDataItem) -> int:
    if from_type == "text":
        result = _text_to_int(value)
    elif from_type == "double":
        if not (math.isfinite(value) and float(value).is_integer()):
            raise CoercionError("bigint", from_type, value, "not a whole number")
        result = int(value)
    elif from_type == "wei":
        result = int(value)
    else:
        raise _fail("bigint", from_type, value)
    if not BIGINT_MIN <= result <= BIGINT_MAX:
        # dlt lets these through and the load fails; a variant keeps the row loadable
        raise CoercionError("bigint", from_type, value, "outside the signed 64-bit range")
    return result


def _to_wei(from_type: str, value: TDataItem) -> int:
    if from_type == "text":
        result = _text_to_int(value)
    elif from_type == "bigint":
        result = int(value)
    elif from_type == "double":
        if not (math.isfinite(value) and float(value).is_integer()):
            raise CoercionError("wei", from_type, value, "not a whole number")
        result = int(value)
    elif from_type == "decimal":
        if not value.is_finite() or value != value.to_integral_value():
            raise CoercionError("wei", from_type, value, "not a whole number")
        result = int(value)
    else:
        raise _fail("wei", from_type, value)
    if not -WEI_MAX_ABS < result < WEI_MAX_ABS:
        raise CoercionError("wei", from_type, value, f"more than {WEI_PRECISION} digits")
    return result


def _to_double(from_type: str, value: TDataItem) -> float:
    if from_type == "text":
        digits = _hex_digits(value)
        if digits is not None:
            return float(int(digits, 16))
        return float(value)
    if from_type in ("bigint", "wei", "decimal"):
        return float(value)
    raise _fail("double", from_type, value)


def _to_decimal(from_type: str, value: TDataItem) -> Decimal:
    if from_type == "text":
        digits = _hex_digits(value)
        if digits is not None:
            return Decimal(int(digits, 16))
        try:
            result = Decimal(value)
        except InvalidOperation:
            raise CoercionError("decimal", from_type, value, "not a number") from None
        if not result.is_finite():
            raise CoercionError("decimal", from_type, value, "not a finite number")
        return result
    if from_type in ("bigint", "wei"):
        return Decimal(int(value))
    if from_type == "double":
        if not math.isfinite(value):
            raise CoercionError("decimal", from_type, value, "not a finite number")
        return Decimal(repr(float(value)))
    raise _fail("decimal", from_type, value)


#: text a bool column accepts (case-insensitive, no surrounding spaces), as dlt reads it
_TRUE_TEXT: Final = frozenset({"y", "yes", "t", "true", "1"})
_FALSE_TEXT: Final = frozenset({"n", "no", "f", "false", "0"})


def _to_bool(from_type: str, value: TDataItem) -> bool:
    if from_type == "text":
        lowered = value.lower()
        if lowered in _TRUE_TEXT:
            return True
        if lowered in _FALSE_TEXT:
            return False
        raise CoercionError("bool", from_type, value, "not a boolean word")
    if from_type in ("bigint", "double", "decimal", "wei"):
        return bool(value)
    raise _fail("bool", from_type, value)


def _epoch_to_datetime(seconds: float | int | Decimal) -> dt.datetime:
    return dt.datetime(1970, 1, 1, tzinfo=_UTC) + dt.timedelta(seconds=float(seconds))


def _text_to_epoch_or_iso(text: str) -> dt.datetime:
    """Text in a timestamp/date column: ISO 8601 timestamp, ISO date (midnight UTC), else a
    number of Unix epoch seconds (so ``"2023"`` is a year, ``"1700000000"`` a Unix time)."""
    parsed = parse_iso_timestamp(text)
    if parsed is not None:
        return parsed
    day = parse_iso_date(text)
    if day is not None:
        return dt.datetime(day.year, day.month, day.day, tzinfo=_UTC)
    return _epoch_to_datetime(float(text))


def _to_timestamp(from_type: str, value: TDataItem) -> dt.datetime:
    if from_type == "text":
        return _text_to_epoch_or_iso(value)
    if from_type in ("bigint", "double"):
        return _epoch_to_datetime(value)
    if from_type == "date":
        return dt.datetime(value.year, value.month, value.day, tzinfo=_UTC)
    raise _fail("timestamp", from_type, value)


def _to_date(from_type: str, value: TDataItem) -> dt.date:
    if from_type == "text":
        return _text_to_epoch_or_iso(value).date()
    if from_type in ("bigint", "double"):
        return _epoch_to_datetime(value).date()
    if from_type == "timestamp":
        instant: dt.datetime = value
        if instant.tzinfo is not None:
            instant = instant.astimezone(_UTC)
        return instant.date()
    raise _fail("date", from_type, value)


def _to_time(from_type: str, value: TDataItem) -> dt.time:
    if from_type == "text":
        stripped = value.strip()
        if ":" not in stripped or "T" in stripped or "-" in stripped[:3]:
            raise ValueError(f"not a time of day: {value!r}")
        parsed = dt.time.fromisoformat(stripped.replace("Z", "+00:00"))
        # time is stored without time zone; the zone is stripped (schema seed doc)
        return parsed.replace(tzinfo=None)
    raise _fail("time", from_type, value)


def _to_binary(from_type: str, value: TDataItem) -> bytes:
    if from_type == "text":
        digits = _hex_digits(value)
        if digits is not None:
            return bytes.fromhex(digits)
        return base64.b64decode(value, validate=True)
    if from_type == "bigint":
        # little-endian, minimal length (0 -> b""), as dlt stores ints in binary columns
        if value < 0:
            raise CoercionError("binary", from_type, value, "negative integers have no bytes")
        number: int = value
        return number.to_bytes((number.bit_length() + 7) // 8, "little")
    raise _fail("binary", from_type, value)


def _to_json(from_type: str, value: TDataItem) -> TDataItem:
    # a json column takes documents (dicts and lists) only; dlt puts a scalar arriving at a
    # json column into a variant column
    raise _fail("json", from_type, value)


_TO: Final = {
    "text": _to_text,
    "bigint": _to_bigint,
    "wei": _to_wei,
    "double": _to_double,
    "decimal": _to_decimal,
    "bool": _to_bool,
    "timestamp": _to_timestamp,
    "date": _to_date,
    "time": _to_time,
    "binary": _to_binary,
    "json": _to_json,
}


# --------------------------------------------------------------------------------------------
# precision and scale

#: data types that accept a precision hint, and what it means
PRECISION_MEANING: Final = {
    "text": "maximum length in characters",
    "binary": "maximum length in bytes",
    "timestamp": "fractional second digits (0-9)",
    "time": "fractional second digits (0-9)",
    "bigint": "integer size in bits (1-64)",
    "decimal": "total digits",
    "wei": "total digits",
}


def default_precision_scale(data_type: str) -> tuple[int | None, int | None]:
    """The (precision, scale) a column of ``data_type`` gets when no hint gives one."""
    if data_type == "decimal":
        return DEFAULT_DECIMAL_PRECISION, DEFAULT_DECIMAL_SCALE
    if data_type == "wei":
        return WEI_PRECISION, 0
    if data_type in ("timestamp", "time"):
        return DEFAULT_TIMESTAMP_PRECISION, None
    if data_type == "bigint":
        return 64, None
    return None, None


def validate_precision(data_type: str, precision: int | None, scale: int | None) -> None:
    """Raise :class:`InvalidPrecisionError` for a precision/scale that cannot be right.

    Precision means something for text, binary, timestamp, time, bigint, decimal and wei;
    scale for decimal and wei. On other types both are *ignored* (dlt keeps e.g. a
    ``double`` with precision 10 and destinations ignore it), but they must still be
    non-negative integers. Rules: timestamp/time precision 0-9 digits; bigint 1-64 bits;
    decimal/wei 1-76 digits; ``scale <= precision``.
    """
    for label, number in (("precision", precision), ("scale", scale)):
        if number is not None and (
            isinstance(number, bool) or not isinstance(number, int) or number < 0
        ):
            raise InvalidPrecisionError(
                f"{label} of {data_type} must be a non-negative integer, got {number!r}"
            )
    if precision is not None:
        if data_type in ("timestamp", "time") and precision > 9:
            raise InvalidPrecisionError(f"{data_type} precision is 0-9 digits, got {precision}")
        if data_type == "bigint" and not 1 <= precision <= 64:
            raise InvalidPrecisionError(f"bigint precision is 1-64 bits, got {precision}")
        if data_type in ("decimal", "wei") and not 1 <= precision <= WEI_PRECISION:
            raise InvalidPrecisionError(
                f"{data_type} precision is 1-{WEI_PRECISION} digits, got {precision}"
            )
    if scale is not None and data_type in ("decimal", "wei"):
        effective = precision if precision is not None else default_precision_scale(data_type)[0]
        if effective is not None and scale > effective:
            raise InvalidPrecisionError(f"scale {scale} exceeds precision {effective}")
