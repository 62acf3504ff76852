"""Type rules as the normalizer applies them to each value inside Spark workers.

The rules live in ``loadstone.schema.data_types`` and ``loadstone.schema.detections`` (shared with the
schema, so a column's schema type and its stored values never drift apart); this module adds
what is specific to writing Parquet: the data type of a JSON-parsed value with the ``wei``
storage limit, ``Decimal`` forms, and compiled preferred-type rules. The first value of a new
column fixes its type (preferred types, then detections, then the Python type); a later value
is coerced into the column's type when it can be, else it goes to a variant column named for
its *Python* type (behaviour checked against dlt in ``tests/fixtures/relational/``).
"""

from __future__ import annotations

import decimal
import re
from collections.abc import Mapping, Sequence
from typing import Any

from loadstone.schema import data_types as _data_types
from loadstone.schema import detections as _detections

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
WEI_MAX = 10**38 - 1
_SCALE_9 = decimal.Decimal("1e-9")
_DECIMAL_LIMIT = decimal.Decimal(10) ** 29


class CoercionError(ValueError):
    """A value cannot be stored in a column of the given type."""


def py_type(value: Any) -> str:
    """The data type of a (non-None) Python value; JSON's own types take the engine's fast path."""
    return _data_types.py_type_to_data_type(value) or "text"


def detect_type(value: Any, detections: Sequence[str]) -> str | None:
    """The type a detection gives a new column's first value (``loadstone.schema.detections``)."""
    return _detections.detect_type(value, detections)


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


def coerce(to_type: str, from_type: str, value: Any) -> Any:
    """``value`` as a value of ``to_type`` in the form the Parquet writer takes.

    The rule itself is ``loadstone.schema.data_types.coerce_value`` (shared with the schema); this
    adds the storage limits: ``wei`` holds at most 38 digits (DuckDB's widest decimal) and
    ``decimal`` is rounded to the column's scale 9, both as ``Decimal``.
    """
    if to_type == from_type:
        return value
    try:
        result = _data_types.coerce_value(to_type, from_type, value)
    except (ValueError, TypeError, ArithmeticError) as exc:
        raise CoercionError(str(exc)) from None
    if to_type == "wei":
        if not -WEI_MAX <= result <= WEI_MAX:
            raise CoercionError("an integer of more than 38 digits does not fit wei storage")
        return decimal.Decimal(result)
    if to_type == "decimal":
        try:
            quantized = decimal.Decimal(result).quantize(_SCALE_9)
        except decimal.InvalidOperation as exc:
            raise CoercionError(str(exc)) from None
        if abs(quantized) >= _DECIMAL_LIMIT:
            raise CoercionError("more than 29 integer digits")
        return quantized
    return result
