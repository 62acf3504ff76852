"""Type rules as the normalizer applies them to each value inside Spark workers.

The rules live in ``loadstone.schema.data_types`` and ``loadstone.schema.detections`` (shared with the
schema, so a column's schema type and its stored values never drift apart); this module adds
what is specific to writing Parquet: the data type of a JSON-parsed value with the ``wei``
storage limit (:data:`loadstone.normalizers.contract.WEI_PARQUET_MAX`) and ``Decimal`` forms.
Preferred types are the schema's own rule (``loadstone.schema.settings.compile_preferred``).
The first value of a new column fixes its type (preferred types, then detections, then the Python type); a later value
is coerced into the column's type when it can be, else it goes to a variant column named for
its *Python* type (behaviour checked against dlt in ``tests/fixtures/relational/``).
"""

from __future__ import annotations

import decimal
import json
from collections.abc import Sequence

import orjson

from loadstone.exceptions import CoercionError
from loadstone.normalizers.contract import WEI_PARQUET_MAX, WEI_PARQUET_PRECISION
from loadstone.schema import data_types as _data_types
from loadstone.schema import detections as _detections
from loadstone.typing import TDataItem

__all__ = [
    "CoercionError",
    "coerce",
    "detect_type",
    "fits_wei_storage",
    "json_text",
    "py_type",
    "sorted_json_text",
]

INT64_MIN = _data_types.BIGINT_MIN
INT64_MAX = _data_types.BIGINT_MAX
_SCALE_9 = decimal.Decimal("1e-9")
_DECIMAL_LIMIT = decimal.Decimal(10) ** 29


def py_type(value: object) -> str:
    """The data type of a (non-None) Python value; JSON's own types take the engine's fast path."""
    return _data_types.py_type_to_data_type(value) or "text"


def detect_type(value: object, detections: Sequence[str]) -> str | None:
    """The type a detection gives a new column's first value (``loadstone.schema.detections``)."""
    return _detections.detect_type(value, detections)


def fits_wei_storage(value: int) -> bool:
    """Whether an integer fits a Parquet ``wei`` column (else it goes to ``__v_text``)."""
    return -WEI_PARQUET_MAX <= value <= WEI_PARQUET_MAX


def coerce(to_type: str, from_type: str, value: TDataItem) -> TDataItem:
    """``value`` as a value of ``to_type`` in the form the Parquet writer takes.

    The rule itself is ``loadstone.schema.data_types.coerce_value`` (shared with the schema); this
    adds the storage limits: ``wei`` holds at most 38 digits (the Parquet column) and
    ``decimal`` is rounded to the column's scale 9, both as ``Decimal``.
    """
    if to_type == from_type and to_type != "decimal":
        return value
    try:
        result = _data_types.coerce_value(to_type, from_type, value)
    except (ValueError, TypeError, ArithmeticError) as exc:
        raise CoercionError(to_type, from_type, value, str(exc)) from None
    if to_type == "wei":
        if not fits_wei_storage(result):
            raise CoercionError(
                to_type, from_type, value, f"more than {WEI_PARQUET_PRECISION} digits"
            )
        return decimal.Decimal(result)
    if to_type == "decimal":
        try:
            quantized = decimal.Decimal(result).quantize(_SCALE_9)
        except decimal.InvalidOperation as exc:
            raise CoercionError(to_type, from_type, value, str(exc)) from None
        if abs(quantized) >= _DECIMAL_LIMIT:
            raise CoercionError(to_type, from_type, value, "more than 29 integer digits")
        return quantized
    return result


def sorted_json_text(value: object) -> str:
    """Compact JSON with keys sorted at every level (the form dlt hashes)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode("utf-8")
    except TypeError:
        return json.dumps(
            value, separators=(",", ":"), ensure_ascii=False, sort_keys=True, default=str
        )


def json_text(value: object) -> str:
    """A ``json`` column's stored form: compact JSON text (non-JSON values as ``str``)."""
    try:
        return orjson.dumps(value).decode("utf-8")
    except TypeError:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
