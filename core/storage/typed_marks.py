"""dlt's marked text for values JSON has no type for: one private-use character, then the text.

dlt 1.31 writes a datetime, date, time, decimal or bytes this way wherever it keeps typed
JSON: the pipeline state (``state.json`` and the destination's ``_dlt_pipeline_state``) and
the typed-jsonl files a custom destination may be handed. Loadstone writes and reads the same
marks, so a state either tool wrote restores the other's values, and a sink function that reads
dlt's files reads ours.
"""

from __future__ import annotations

import base64
import datetime as _dt
from collections.abc import Callable
from decimal import Decimal

from loadstone.typing import TDataItem

__all__ = ["marked", "unmarked"]

#: (mark, type) in the order a value is tested: a datetime is also a date
_MARKS: tuple[tuple[str, type], ...] = (
    ("\uf027", _dt.datetime),
    ("\uf028", _dt.date),
    ("\uf02d", _dt.time),
    ("\uf026", Decimal),
    ("\uf02b", bytes),
)
_READERS: dict[str, Callable[[str], TDataItem]] = {
    "\uf026": Decimal,
    "\uf027": _dt.datetime.fromisoformat,
    "\uf028": _dt.date.fromisoformat,
    "\uf02d": _dt.time.fromisoformat,
    "\uf029": _dt.time.fromisoformat,  # a time in a state loadstone wrote before 2026-11-28
    "\uf02b": base64.b64decode,
}


def _text(value: object) -> str:
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    isoformat = getattr(value, "isoformat", None)
    return str(isoformat()) if isoformat is not None else str(value)


def marked(value: TDataItem) -> TDataItem:
    """``value`` as its marked text when it is of a marked type, else as it is."""
    for mark, kind in _MARKS:
        if isinstance(value, kind):
            return mark + _text(value)
    return value


def unmarked(value: TDataItem) -> TDataItem:
    """Marked text read back as the value it stands for; anything else (a text that only
    starts like one, too) as it is."""
    if isinstance(value, str) and value[:1] in _READERS:
        try:
            return _READERS[value[0]](value[1:])
        except (ValueError, ArithmeticError):
            return value
    return value
