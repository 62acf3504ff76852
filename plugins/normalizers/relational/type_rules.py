"""Type rules applied to each value inside Spark workers: infer, detect, coerce.

Pure functions, no Spark, picklable. They reproduce what dlt 1.31 does with a value that
meets a column (observed in ``tests/fixtures/relational/``): the first value of a new column
fixes its type (preferred types, then detections, then the Python type); a later value is
coerced into the column's type when it can be, else it goes to a variant column named for
its *Python* type.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import re
from collections.abc import Mapping, Sequence
from typing import Any

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
WEI_MAX = 10**38 - 1
UTC = datetime.timezone.utc
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=UTC)

_TRUE = frozenset({"true", "yes", "1", "y", "t", "on"})
_FALSE = frozenset({"false", "no", "0", "n", "f", "off"})


class CoercionError(ValueError):
    """A value cannot be stored in a column of the given type."""


def py_type(value: Any) -> str:
    """The data type of a (non-None) Python value, as the normalizer sees it."""
    t = type(value)
    if t is str:
        return "text"
    if t is bool:
        return "bool"
    if t is int:
        return "bigint" if INT64_MIN <= value <= INT64_MAX else "wei"
    if t is float:
        return "double"
    if t is dict or t is list:
        return "json"
    if isinstance(value, datetime.datetime):
        return "timestamp"
    if isinstance(value, datetime.date):
        return "date"
    if isinstance(value, datetime.time):
        return "time"
    if isinstance(value, decimal.Decimal):
        return "decimal"
    if isinstance(value, (bytes, bytearray)):
        return "binary"
    return "text"


def parse_iso_timestamp(text: str) -> datetime.datetime | None:
    """An ISO 8601 date-time (or date) string as an aware UTC datetime, else None."""
    if len(text) < 10 or text[4:5] != "-" or not text[:4].isdigit():
        text = text.strip()
        if len(text) < 10 or text[4:5] != "-" or not text[:4].isdigit():
            return None
    try:
        parsed = datetime.datetime.fromisoformat(text)
    except ValueError:
        s = text.strip()
        if len(s) < 10 or not s[:4].isdigit() or s[4] != "-":
            return None
        if s.endswith(("Z", "z")):
            s = s[:-1] + "+00:00"
        try:
            parsed = datetime.datetime.fromisoformat(s)
        except ValueError:
            return None
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def detect_type(value: Any, detections: Sequence[str]) -> str | None:
    """The type a detection gives a new column's first value, or None."""
    for name in detections:
        if name == "iso_timestamp":
            if type(value) is str and len(value) > 10 and parse_iso_timestamp(value) is not None:
                return "timestamp"
        elif name == "iso_date":
            if type(value) is str and len(value.strip()) == 10:
                try:
                    datetime.date.fromisoformat(value.strip())
                    return "date"
                except ValueError:
                    pass
        elif name == "timestamp":
            if type(value) in (int, float) and type(value) is not bool:
                now = datetime.datetime.now(UTC).timestamp()
                if now - 365 * 86400 <= value <= now + 365 * 86400:
                    return "timestamp"
        elif name == "large_integer":
            if type(value) is int and not INT64_MIN <= value <= INT64_MAX:
                return "wei"
        elif name == "hexbytes_to_text":
            if isinstance(value, (bytes, bytearray)):
                return "text"
        elif name == "wei_to_double":
            if type(value) is int and not INT64_MIN <= value <= INT64_MAX:
                return "double"
    return None


def compile_preferred(preferred: Mapping[str, str]) -> list[tuple[Any, str]]:
    """Preferred-type rules as (exact name | compiled regex, type), in order."""
    rules: list[tuple[Any, str]] = []
    for pattern, data_type in preferred.items():
        if pattern.startswith("re:"):
            rules.append((re.compile(pattern[3:]), data_type))
        else:
            rules.append((pattern, data_type))
    return rules


def preferred_type(column: str, rules: list[tuple[Any, str]]) -> str | None:
    for pattern, data_type in rules:
        if isinstance(pattern, str):
            if pattern == column:
                return data_type
        elif pattern.search(column):
            return data_type
    return None


def _text_to_int(text: str) -> int:
    s = text.strip()
    try:
        return int(s)
    except ValueError:
        return int(s, 0)


def _text_to_float(text: str) -> float:
    s = text.strip()
    try:
        return float(s)
    except ValueError:
        return float(int(s, 0))


def _from_epoch(seconds: float) -> datetime.datetime:
    try:
        return EPOCH + datetime.timedelta(seconds=seconds)
    except (OverflowError, ValueError) as exc:
        raise CoercionError(f"{seconds!r} is out of the timestamp range") from exc


def coerce(to_type: str, from_type: str, value: Any) -> Any:
    """``value`` (of ``from_type``) as a value of ``to_type``; raises :class:`CoercionError`."""
    if to_type == from_type:
        return value
    try:
        if to_type == "text":
            if from_type in ("json",):
                raise CoercionError("nested data is not text")
            if from_type in ("timestamp", "date", "time"):
                return value.isoformat()
            if from_type == "binary":
                return base64.b64encode(value).decode("ascii")
            return str(value)
        if to_type == "bigint":
            if from_type == "double":
                if value.is_integer() and INT64_MIN <= value <= INT64_MAX:
                    return int(value)
                raise CoercionError("not an integer")
            if from_type == "text":
                result = _text_to_int(value)
                if INT64_MIN <= result <= INT64_MAX:
                    return result
            if from_type == "decimal" and value == value.to_integral_value():
                return int(value)
            raise CoercionError(f"{from_type} to bigint")
        if to_type == "double":
            if from_type in ("bigint", "wei", "decimal"):
                return float(value)
            if from_type == "text":
                return _text_to_float(value)
            raise CoercionError(f"{from_type} to double")
        if to_type == "bool":
            if from_type in ("bigint", "double"):
                return bool(value)
            if from_type == "text":
                low = value.strip().lower()
                if low in _TRUE:
                    return True
                if low in _FALSE:
                    return False
            raise CoercionError(f"{from_type} to bool")
        if to_type == "timestamp":
            if from_type in ("bigint", "double"):
                return _from_epoch(value)
            if from_type == "text":
                parsed = parse_iso_timestamp(value)
                if parsed is not None:
                    return parsed
                return _from_epoch(float(value.strip()))
            if from_type == "date":
                return datetime.datetime(value.year, value.month, value.day, tzinfo=UTC)
            raise CoercionError(f"{from_type} to timestamp")
        if to_type == "date":
            if from_type == "text":
                parsed = parse_iso_timestamp(value)
                if parsed is not None:
                    return parsed.date()
            if from_type == "timestamp":
                return value.date()
            raise CoercionError(f"{from_type} to date")
        if to_type == "time":
            if from_type == "text":
                s = value.strip()
                parsed_time = datetime.time.fromisoformat(s.rstrip("Zz"))
                return parsed_time.replace(tzinfo=None)
            raise CoercionError(f"{from_type} to time")
        if to_type in ("decimal", "wei"):
            if from_type in ("bigint", "wei"):
                result_dec = decimal.Decimal(value)
            elif from_type == "double":
                result_dec = decimal.Decimal(repr(value))
            elif from_type == "text":
                result_dec = decimal.Decimal(value.strip())
            else:
                raise CoercionError(f"{from_type} to {to_type}")
            if not result_dec.is_finite():
                raise CoercionError("not a finite number")
            if to_type == "wei":
                if result_dec != result_dec.to_integral_value() or abs(result_dec) > WEI_MAX:
                    raise CoercionError("not an integer of at most 38 digits")
                return result_dec
            quantized = result_dec.quantize(decimal.Decimal("1e-9"))
            if abs(quantized) >= decimal.Decimal(10) ** 29:
                raise CoercionError("more than 29 integer digits")
            return quantized
        if to_type == "json":
            return value
        if to_type == "binary":
            if from_type == "text":
                return base64.b64decode(value, validate=True)
            raise CoercionError(f"{from_type} to binary")
    except CoercionError:
        raise
    except (ValueError, TypeError, ArithmeticError, OverflowError) as exc:
        raise CoercionError(str(exc)) from exc
    raise CoercionError(f"{from_type} to {to_type}")
