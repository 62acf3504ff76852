"""``loadstone.common.json``: dlt's ``dlt.common.json`` (``from dlt.common import json``).

orjson with dlt 1.31's answers for values JSON has no form for: a ``Decimal`` is its text
(``"1.50"``), bytes are base64, a pydantic model its fields; dates, times, UUIDs, enums and
dataclasses as orjson writes them; NaN as null; keys that are not text as their text. Any
other value fails with ``TypeError: Type is not JSON serializable: <type>``, as dlt's does.
"""

from __future__ import annotations

import base64
import datetime as dt
from collections.abc import Callable
from decimal import Decimal
from typing import IO, Any

import orjson

__all__ = ["dump", "dumpb", "dumps", "load", "loadb", "loads"]


def dumps(
    obj: Any,
    sort_keys: bool = False,
    pretty: bool = False,
    utc_z: bool = False,
    datetime_encoder: Callable[[Any], Any] | None = None,
) -> str:
    """``obj`` as JSON text; ``utc_z`` writes UTC times with ``Z``; ``datetime_encoder``
    writes each datetime instead."""
    return dumpb(obj, sort_keys, pretty, utc_z=utc_z, datetime_encoder=datetime_encoder).decode()


def dumpb(
    obj: Any,
    sort_keys: bool = False,
    pretty: bool = False,
    *,
    utc_z: bool = False,
    datetime_encoder: Callable[[Any], Any] | None = None,
) -> bytes:
    """``obj`` as JSON bytes (see :func:`dumps`)."""
    option = orjson.OPT_NON_STR_KEYS
    option |= orjson.OPT_SORT_KEYS if sort_keys else 0
    option |= orjson.OPT_INDENT_2 if pretty else 0
    option |= orjson.OPT_UTC_Z if utc_z else 0
    if datetime_encoder is not None:
        option |= orjson.OPT_PASSTHROUGH_DATETIME
    return orjson.dumps(obj, default=_encoder(datetime_encoder, utc_z), option=option)


def dump(obj: Any, fp: IO[bytes], sort_keys: bool = False, pretty: bool = False) -> None:
    """Write ``obj`` as JSON to the binary file ``fp``."""
    fp.write(dumpb(obj, sort_keys, pretty))


def loads(s: str) -> Any:
    """The value of the JSON text ``s``."""
    return orjson.loads(s)


def loadb(s: bytes | bytearray | memoryview) -> Any:
    """The value of JSON bytes."""
    return orjson.loads(s)


def load(fp: IO[bytes]) -> Any:
    """The value of the JSON in the binary file ``fp``."""
    return orjson.loads(fp.read())


def _encoder(datetime_encoder: Callable[[Any], Any] | None, utc_z: bool) -> Callable[[Any], Any]:
    """orjson's ``default``: the datetimes orjson leaves (subclasses: pandas' ``Timestamp``,
    pendulum's ``DateTime``; all of them with a ``datetime_encoder``) as orjson writes its own."""

    def default(value: Any) -> Any:
        if isinstance(value, dt.datetime):
            if datetime_encoder is not None:
                return datetime_encoder(value)
            text = value.isoformat()
            return text[:-6] + "Z" if utc_z and text.endswith("+00:00") else text
        if isinstance(value, (dt.date, dt.time)):
            return value.isoformat()
        return _default(value)

    return default


def _default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    dump_model = getattr(value, "model_dump", None)
    if callable(dump_model):
        return dump_model()
    kind = type(value)
    name = (
        kind.__qualname__
        if kind.__module__ == "builtins"
        else f"{kind.__module__}.{kind.__qualname__}"
    )
    raise TypeError(f"Type is not JSON serializable: {name}")
