"""How dlt's accessors read a configured value: ``config[key]`` and ``config.get(key, type)``.

Why apart from the resolver: the resolver (:mod:`loadstone.config`) reads an environment
value as a TOML literal for loadstone's own settings, while a program's ``dlt.config`` sees
what dlt 1.31 gives it, observed from the outside:

* ``config.get(key)``: the value as the provider holds it (an environment value is text);
* ``config[key]``: text is cast when it reads as a boolean (``true``/``false``, any case), an
  integer (``01``, ``1_000``, ``0x10``), a number (``1e3``, ``nan``) or a JSON list or object;
  anything else (``"quoted"``, ``null``, ``yes``, a date) stays the text it is;
* ``config.get(key, T)`` for ``T`` in ``str``, ``int``, ``float``, ``bool``, ``list``,
  ``dict``: the value coerced to ``T``, or :class:`ValueError` (the caller raises dlt's
  ``ConfigValueCannotBeCoercedException``). A list or dict taken from a file is returned as
  it is for either of the two collection types, as dlt's.
"""

from __future__ import annotations

import datetime
import json
from typing import Final

__all__ = ["auto_cast", "coerce"]

_TRUE: Final = frozenset({"true", "yes", "y", "t", "1"})
_FALSE: Final = frozenset({"false", "no", "n", "f", "0"})


def _integer(text: str) -> int:
    """``5``, ``+5``, ``01``, ``1_000`` and ``0x10``/``0o7``/``0b1`` as dlt reads them."""
    try:
        return int(text)
    except ValueError:
        return int(text, 0)


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return float(_integer(text))


def auto_cast(value: object) -> object:
    """The value ``config[key]`` gives for a configured ``value`` (see module docs)."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for parse in (_integer, float):
        try:
            return parse(text)
        except ValueError:
            pass
    if text[:1] in ("[", "{"):
        try:
            document = json.loads(text)
        except ValueError:
            return value
        if isinstance(document, list | dict):
            return document
    return value


def _as_text(value: object) -> str:
    if isinstance(value, list | dict):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    return str(value)


def _as_collection(value: object, kind: type) -> object:
    if isinstance(value, list | dict):
        return value
    if isinstance(value, str):
        document = json.loads(value)
        if isinstance(document, kind):
            return document
    raise ValueError(f"{value!r} is no {kind.__name__}")


def _as_bool(value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return bool(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
    raise ValueError(f"{value!r} is no bool")


def _as_int(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        return _integer(value.strip())
    raise ValueError(f"{value!r} is no int")


def _as_float(value: object) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        return _number(value.strip())
    raise ValueError(f"{value!r} is no float")


def coerce(value: object, hint: object) -> object:
    """``value`` as ``hint`` (one of the six plain types; any other hint: as it is).
    Raises ValueError when it cannot be read as that type."""
    if hint is str:
        return _as_text(value)
    if hint is list or hint is dict:
        return _as_collection(value, hint)
    if hint is bool:
        return _as_bool(value)
    if hint is int:
        return _as_int(value)
    if hint is float:
        return _as_float(value)
    return value
