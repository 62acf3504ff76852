"""Type detections: give a *new* column a richer type than its Python value has.

A JSON document carries timestamps as strings and Unix times as numbers. The schema's
``settings.detections`` lists detectors, tried in order, for the first value of a column that
is not yet in the schema (existing columns keep their type; later values are coerced). The
first detector that answers wins; none answering means the value's own type
(:func:`loadstone.schema.data_types.py_type_to_data_type`).

Pure functions, picklable, no Spark: the normalizer calls them in workers.

Behaviour observed from dlt 1.31 (black-box runs, recorded in
``tests/fixtures/schemas/detections_dlt.json``):

* ``iso_timestamp`` (on by default): a *string* holding an ISO 8601 date **and** time:
  extended ``2023-07-26T14:45:00``, basic ``20230726T144500``, week ``2023-W30-3T10:00``,
  ordinal ``2023-207T10:00``; ``T`` or one space between date and time; the time may stop at
  hours or minutes; a fraction after ``.`` or ``,`` (truncated to microseconds); an offset
  ``Z``, ``±HH:MM``, ``±HHMM`` or ``±HH``. Not detected: a date alone, a time alone, lower
  case ``t``/``z``, surrounding white space, ``24:00``, invalid calendar values, a space
  before the offset, mixing basic time with an extended date. Naive values are UTC.
* ``iso_date``: a string holding an ISO 8601 date without time: ``2023-07-26``,
  ``20230726``, ``2023-07`` (first of month), ``2023`` (1 January), ``2023-W30`` (Monday),
  ``2023-W30-3``, ``2023-207``.
* ``timestamp``: an int or float (not bool) that is a Unix time within about five years of
  now becomes a ``timestamp`` (UTC). Observed bounds: ``now - 5*365 days`` is detected and a
  quarter year earlier is not; ``now + 5*365 days - 45 days`` is detected and ``now +
  5*365 days`` is not. We use the window ``[now - 5*365d, now + 5*365d)``.
* ``large_integer``: an int outside the signed 64-bit range becomes ``wei``.
* ``hexbytes_to_text``: dlt applies it to ``HexBytes`` objects only (plain ``bytes`` stay
  ``binary``, hex strings stay ``text``). loadstone has no HexBytes type, so it applies to
  values whose class is named ``HexBytes`` (duck-typed, so a user's hexbytes objects
  work without loadstone importing the package) and turns them into ``0x``-prefixed hex text.
* ``wei_to_double``: dlt applies it to its ``Wei`` decimals; plain ``Decimal`` stays
  ``decimal``. In loadstone a ``wei`` value is an int outside the 64-bit range, so this
  detector turns such ints into ``double``.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Sequence
from typing import Final

from loadstone.exceptions import UnknownDetectionError
from loadstone.schema.data_types import BIGINT_MAX, BIGINT_MIN, WEI_MAX_ABS
from loadstone.schema.iso8601 import parse_iso_date, parse_iso_timestamp
from loadstone.typing import TDataItem

__all__ = [
    "DEFAULT_DETECTIONS",
    "DETECTIONS",
    "TIMESTAMP_WINDOW_SECONDS",
    "check_detections",
    "convert_detected",
    "detect",
    "detect_type",
    "is_iso_date",
    "is_iso_timestamp",
    "parse_iso_date",
    "parse_iso_timestamp",
]

#: every detection name, in the order dlt documents them.
DETECTIONS: Final[tuple[str, ...]] = (
    "timestamp",
    "iso_timestamp",
    "iso_date",
    "large_integer",
    "hexbytes_to_text",
    "wei_to_double",
)
#: the detections of a new schema.
DEFAULT_DETECTIONS: Final[tuple[str, ...]] = ("iso_timestamp",)
#: half-width of the window around "now" in which a number counts as a Unix time.
TIMESTAMP_WINDOW_SECONDS: Final = 5 * 365 * 86400

_UTC: Final = dt.timezone.utc


def is_iso_timestamp(value: TDataItem) -> bool:
    """True for a string that the ``iso_timestamp`` detection turns into a timestamp."""
    return type(value) is str and parse_iso_timestamp(value) is not None


def is_iso_date(value: TDataItem) -> bool:
    """True for a string that the ``iso_date`` detection turns into a date."""
    return type(value) is str and parse_iso_date(value) is not None


# ---------------------------------------------------------------------------------- detectors


def _detect_iso_timestamp(value: TDataItem) -> str | None:
    # cheap pre-check: a timestamp string has a digit first and at least 11 characters
    if type(value) is str and len(value) >= 11 and value[0].isdigit():
        if parse_iso_timestamp(value) is not None:
            return "timestamp"
    return None


def _detect_iso_date(value: TDataItem) -> str | None:
    if type(value) is str and 4 <= len(value) <= 10 and value[0].isdigit():
        if parse_iso_date(value) is not None:
            return "date"
    return None


def _detect_timestamp(value: TDataItem, now: float | None = None) -> str | None:
    if type(value) is int or type(value) is float:
        current = time.time() if now is None else now
        if current - TIMESTAMP_WINDOW_SECONDS <= value < current + TIMESTAMP_WINDOW_SECONDS:
            return "timestamp"
    return None


def _detect_large_integer(value: TDataItem) -> str | None:
    if type(value) is int and not BIGINT_MIN <= value <= BIGINT_MAX:
        return "wei" if -WEI_MAX_ABS < value < WEI_MAX_ABS else None
    return None


def _detect_hexbytes(value: TDataItem) -> str | None:
    if isinstance(value, bytes) and type(value).__name__ == "HexBytes":
        return "text"
    return None


def _detect_wei_to_double(value: TDataItem) -> str | None:
    if type(value) is int and not BIGINT_MIN <= value <= BIGINT_MAX:
        return "double"
    return None


_DETECTORS: Final[dict[str, Callable[[TDataItem], str | None]]] = {
    "timestamp": _detect_timestamp,
    "iso_timestamp": _detect_iso_timestamp,
    "iso_date": _detect_iso_date,
    "large_integer": _detect_large_integer,
    "hexbytes_to_text": _detect_hexbytes,
    "wei_to_double": _detect_wei_to_double,
}


def check_detections(detections: Sequence[str]) -> None:
    """Raise :class:`UnknownDetectionError` for a name that is not a detection."""
    for name in detections:
        if name not in _DETECTORS:
            raise UnknownDetectionError(name, DETECTIONS)


def detect_type(value: TDataItem, detections: Sequence[str]) -> str | None:
    """The data type the first answering detection gives ``value``; ``None`` when none does.

    Unknown names raise :class:`UnknownDetectionError` (a typo must not silently disable a
    detection).
    """
    if value is None:
        return None
    for name in detections:
        try:
            detector = _DETECTORS[name]
        except KeyError:
            raise UnknownDetectionError(name, DETECTIONS) from None
        detected = detector(value)
        if detected is not None:
            return detected
    return None


def convert_detected(data_type: str, value: TDataItem) -> TDataItem:
    """Convert ``value`` to the Python value of the type its detection gave it.

    Only valid for a (value, type) pair that :func:`detect_type` produced.
    """
    if data_type == "timestamp":
        if type(value) is str:
            return parse_iso_timestamp(value)
        return dt.datetime(1970, 1, 1, tzinfo=_UTC) + dt.timedelta(seconds=value)
    if data_type == "date":
        return parse_iso_date(value)
    if data_type == "text" and isinstance(value, bytes):
        return "0x" + bytes(value).hex()
    if data_type == "double":
        return float(value)
    return value


def detect(value: TDataItem, detections: Sequence[str]) -> tuple[str, TDataItem] | None:
    """``(data_type, converted value)`` from the first answering detection, else ``None``."""
    data_type = detect_type(value, detections)
    if data_type is None:
        return None
    return data_type, convert_detected(data_type, value)
