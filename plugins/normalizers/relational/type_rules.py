"""Type rules as the normalizer applies them to each value inside Spark workers.

The rules live in ``loadstone.schema.data_types`` and ``loadstone.schema.detections`` (shared with the
schema, so a column's schema type and its stored values never drift apart); this module adds
what is specific to writing Parquet: the data type of a JSON-parsed value with the ``wei``
storage limit (:data:`loadstone.normalizers.contract.WEI_PARQUET_MAX`), ``Decimal`` forms and
a decimal column's precision and scale (:func:`fit_decimal`).
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
from loadstone.schema import decimals as _decimals
from loadstone.schema import detections as _detections
from loadstone.schema.decimals import DecimalShape
from loadstone.typing import TDataItem

__all__ = [
    "CoercionError",
    "coerce",
    "detect_type",
    "fit_decimal",
    "fits_wei_storage",
    "json_text",
    "py_type",
    "sorted_json_text",
]

INT64_MIN = _data_types.BIGINT_MIN
INT64_MAX = _data_types.BIGINT_MAX


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
    adds the storage limit of ``wei`` (at most 38 digits in the Parquet column, as ``Decimal``).
    A ``decimal`` comes back exact: whether it fits its column's precision and scale is
    :func:`fit_decimal`'s question, and a value that does not is a data error, not a variant.
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
        return decimal.Decimal(result)
    return result


def fit_decimal(value: decimal.Decimal, shape: DecimalShape) -> decimal.Decimal | None:
    """``value`` with exactly the column's scale, or None when it does not fit the column
    (never rounded: ``loadstone.schema.decimals.fit``)."""
    return _decimals.fit(value, shape)


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
