"""One Python item as one line of JSON, keeping what JSON can keep of its values.

orjson is the fast path; integers beyond 64 bits and other values orjson refuses go through
the stdlib encoder. ``Decimal``, ``date``, ``time`` and bytes become marked strings that
normalize reads back as those values (:mod:`loadstone.extract.typed_json`); a value JSON has
no form for is refused by type (:class:`ItemError`), never written as its printed text.
"""

from __future__ import annotations

import datetime as _dt
import enum
import json
import uuid
from collections.abc import Mapping
from decimal import Decimal
from typing import Final

import orjson

from loadstone.extract.typed_json import mark
from loadstone.typing import TDataItem


class ItemError(ValueError):
    """One Python item cannot be written as JSON; the writer adds table and item number."""


def _default(value: TDataItem) -> TDataItem:
    """JSON for values orjson does not know; keeps their meaning as far as JSON can.

    ``Decimal``, ``date``, ``time`` and bytes become marked strings that normalize reads
    back as those values (:mod:`loadstone.extract.typed_json`), so they are typed as dlt does.
    """
    marked = mark(value)
    if marked is not None:
        return marked
    if _is_missing(value):
        return None
    if isinstance(value, _dt.datetime):
        return value.isoformat()
    if isinstance(value, tuple) and callable(
        getattr(value, "_asdict", None) or getattr(value, "asDict", None)
    ):
        return plain_value(value)  # a named tuple or a Spark Row: its fields by name
    if isinstance(value, (set, frozenset)):
        return _ordered(value)
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, enum.Enum):  # as orjson writes it, for the stdlib path too
        return value.value
    if isinstance(value, _dt.timedelta):  # pandas' Timedelta has an ISO text: still a text
        raise ItemError(refusal(value))
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return plain_value(value)


#: pandas' markers of a missing value (``pd.NaT``, ``pd.NA``), by type name: pandas is not
#: imported to find them. Their text ("NaT") would load as a string column beside the real one.
_MISSING_TYPES: Final = frozenset({"NaTType", "NAType"})


def _is_missing(value: TDataItem) -> bool:
    """A value that stands for no value: pandas' ``NaT``/``NA``, a NaN or infinite ``Decimal``.

    They load as null, as NaN and infinite floats do (dlt 1.31 stores a float NaN as null, but
    loads ``NaT`` as its text in a variant column and fails the load of a ``Decimal('NaN')``).
    """
    if isinstance(value, Decimal):
        return not value.is_finite()
    kind = type(value)
    return kind.__name__ in _MISSING_TYPES and kind.__module__.startswith("pandas")


def _ordered(values: set[TDataItem] | frozenset[TDataItem]) -> list[TDataItem]:
    """A set as a list in sorted order when its members compare (a set has no order of its
    own: its elements' ``_dlt_list_idx`` must not change from one process to the next)."""
    try:
        return sorted(values)
    except TypeError:
        return list(values)


def plain_value(value: TDataItem) -> TDataItem:
    """A value of a type JSON has no form for, as dlt stores it, or :class:`ItemError`.

    Never the value's printed text: that would load ``<object at 0x...>`` as data and report
    success. numpy scalars are their Python value; pydantic models and objects with
    ``_asdict`` (named tuples) are their dicts; everything else is refused by type.
    """
    item = getattr(value, "item", None)
    if type(value).__module__ == "numpy" and callable(item) and getattr(value, "ndim", 1) == 0:
        return item()
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump()
    as_dict = getattr(value, "asDict", None) or getattr(value, "_asdict", None)
    if callable(as_dict):
        return as_dict()
    raise ItemError(refusal(value))


def refusal(value: TDataItem) -> str:
    """Why ``value`` is refused and what to yield instead (one line, the type named)."""
    kind = type(value)
    name = f"{kind.__module__}.{kind.__qualname__}"
    if kind.__module__ == "numpy":
        hint = "convert it with .tolist(), or yield a pyarrow.Table or pandas.DataFrame"
    elif isinstance(value, _dt.timedelta):
        hint = (
            "a duration has no data type to load as: convert it first (seconds: .total_seconds())"
        )
    else:
        hint = (
            "yield dicts, lists, scalars, pyarrow.Table/RecordBatch or pandas.DataFrame "
            "(or map the object to a dict with add_map)"
        )
    return f"it holds a value of type {name}, which loadstone does not load as text: {hint}"


#: dates and times reach :func:`_default` (orjson would write them as plain ISO text)
_ORJSON_OPTIONS: Final = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME


def _prepare(value: TDataItem) -> TDataItem:
    """The item for the stdlib encoder: non-finite floats as null (as orjson writes them)."""
    if isinstance(value, Mapping):
        return {str(k): _prepare(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_prepare(v) for v in value]
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    return value


def encode_item(item: TDataItem) -> bytes:
    """One item as one line of JSON (without the newline).

    orjson is the fast path; integers beyond 64 bits go through the stdlib encoder so that
    no digit is lost (a bare JSON number, which the normalizer types). Values JSON has no
    type for are marked strings (:func:`_default`). NaN and infinities become null on both
    paths (as dlt 1.31 stores them from Python objects), and so do pandas' ``NaT``/``NA`` and
    a non-finite ``Decimal`` (:func:`_is_missing`). An item nested too deep for JSON,
    or holding a string with an unpaired surrogate, raises :class:`ItemError` with the
    cause in one line.
    """
    try:
        return orjson.dumps(item, default=_default, option=_ORJSON_OPTIONS)
    except TypeError:
        try:
            text = json.dumps(
                _prepare(item), default=_default, ensure_ascii=False, separators=(",", ":")
            )
            return text.encode("utf-8")
        except RecursionError:
            raise ItemError("it is nested too deep to be written as JSON") from None
        except UnicodeEncodeError as error:
            bad = error.object[error.start : error.end]
            raise ItemError(
                f"a string holds the unpaired surrogate {bad!r}, which UTF-8 cannot encode"
            ) from None
