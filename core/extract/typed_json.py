"""The JSON form of Python values JSON has no type for: ``Decimal``, ``date``, ``time``, bytes.

Extract writes items as JSON lines and normalize reads them back, so a value JSON cannot hold
would lose its type on the way (a ``Decimal`` would come back a float, a ``date`` a string).
dlt 1.31 types them ``decimal``, ``date``, ``time`` and ``binary``; to do the same, extract
writes each as a *marked string* (a private-use character, a type letter, the value's text)
and normalize turns marked strings back into the Python value before typing.

The cost stays off the hot path: items without such values are written by orjson as before,
and normalize looks for the marker's bytes in a line (one ``in`` over the bytes) before it
walks an item. ``datetime`` is not marked: its ISO text is typed by ``iso_timestamp``
detection, as before.
"""

from __future__ import annotations

import base64
import datetime as _dt
from decimal import Decimal, InvalidOperation
from typing import Final

from loadstone.typing import TDataItem

__all__ = ["MARK", "MARK_BYTES", "decode_item", "mark"]

#: first character of a marked string (Unicode private use area, never in API data by chance)
MARK: Final = "\uf8e0"
#: ``MARK`` as it appears in a UTF-8 line (orjson and ``json.dumps(ensure_ascii=False)``)
MARK_BYTES: Final = MARK.encode("utf-8")

_DECIMAL: Final = MARK + "d"
_DATE: Final = MARK + "D"
_TIME: Final = MARK + "t"
_BINARY: Final = MARK + "b"


def mark(value: TDataItem) -> str | None:
    """The marked string of ``value``, or None when it is not one of the marked types.

    A ``datetime`` is a ``date`` in Python and a non-finite ``Decimal`` has no exact value:
    neither is marked (the caller writes them as before).
    """
    if isinstance(value, Decimal):
        return _DECIMAL + str(value) if value.is_finite() else None
    if isinstance(value, _dt.date) and not isinstance(value, _dt.datetime):
        return _DATE + value.isoformat()
    if isinstance(value, _dt.time):
        return _TIME + value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _BINARY + base64.b64encode(bytes(value)).decode("ascii")
    return None


def _unmark(text: str) -> TDataItem:
    """The value a marked string stands for (the text itself when it does not parse)."""
    kind = text[1:2]
    payload = text[2:]
    try:
        if kind == "d":
            return Decimal(payload)
        if kind == "D":
            return _dt.date.fromisoformat(payload)
        if kind == "t":
            return _dt.time.fromisoformat(payload)
        if kind == "b":
            return base64.b64decode(payload, validate=True)
    except (ValueError, InvalidOperation):
        pass
    return text


def decode_item(item: TDataItem) -> TDataItem:
    """``item`` with every marked string replaced by its value (changed in place, returned)."""
    if isinstance(item, str):
        return _unmark(item) if item.startswith(MARK) else item
    if isinstance(item, dict):
        for key, value in item.items():
            if isinstance(value, (str, dict, list)):
                item[key] = decode_item(value)
    elif isinstance(item, list):
        for index, value in enumerate(item):
            if isinstance(value, (str, dict, list)):
                item[index] = decode_item(value)
    return item
