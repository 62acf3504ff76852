"""A decimal column's precision and scale, and whether a value fits them exactly.

Why one module: the shape of a ``decimal`` column is decided once (here) and read by every
part that writes or creates it -- the normalizer's Parquet arrays, the Arrow path's casts and
each destination's DDL -- so a ``decimal(38,10)`` declared by a hint, by reflection or by
Arrow data is the ``decimal(38,10)`` the table gets, everywhere. The default
``decimal(38,9)`` applies only when nothing declares a precision or a scale.

:func:`shape_of` is the rule (dlt 1.31 agrees where it is consistent, see
``tests/fixtures/decimals/``):

* neither precision nor scale: ``(38, 9)``;
* a scale alone: precision 38 (dlt's DuckDB and PostgreSQL tables, ``DECIMAL(38,3)``);
* a precision alone: scale 0, as SQL's ``DECIMAL(p)`` and dlt's Parquet files
  (``decimal128(p, 0)``); dlt's DuckDB and PostgreSQL tables take scale 9 there, which
  cannot even be created below 9 digits (``DECIMAL(5,9)``), so loadstone does not follow it.

:func:`fit` never rounds: a value with more digits after the point than the scale keeps, or
more before it than ``precision - scale`` allows, does not fit, and the caller refuses it
as a data error naming table, column and value (:func:`misfit_reason` says why in words).
"""

from __future__ import annotations

import decimal
from decimal import Decimal
from typing import Final

import attrs

from loadstone.schema.data_types import DEFAULT_DECIMAL_PRECISION, DEFAULT_DECIMAL_SCALE

__all__ = ["DEFAULT_SHAPE", "DecimalShape", "fit", "misfit_reason", "shape_of"]

#: quantize exactly or not at all: a dropped non-zero digit raises ``Inexact``; 100 digits
#: hold any coefficient of a 76-digit column, a larger one raises ``InvalidOperation``
_EXACT: Final = decimal.Context(
    prec=100, traps=[decimal.Inexact, decimal.InvalidOperation, decimal.Overflow]
)
#: reads any finite value's digits (for the message only)
_WORDS: Final = decimal.Context(prec=10_000)


@attrs.frozen
class DecimalShape:
    """The precision (total digits) and scale (digits after the point) of a decimal column."""

    precision: int
    scale: int
    #: ``1E-scale``, the exponent :func:`fit` quantizes to (made once: ``fit`` runs per value)
    quantum: Decimal = attrs.field(
        init=False, eq=False, repr=False,
        default=attrs.Factory(lambda s: Decimal(1).scaleb(-s.scale, _EXACT), takes_self=True),
    )  # fmt: skip
    #: the smallest absolute value with too many digits before the point
    limit: Decimal = attrs.field(
        init=False, eq=False, repr=False,
        default=attrs.Factory(lambda s: Decimal(10) ** (s.precision - s.scale), takes_self=True),
    )  # fmt: skip

    @property
    def type_name(self) -> str:
        """``decimal(p,s)``, as messages name the column's type."""
        return f"decimal({self.precision},{self.scale})"


DEFAULT_SHAPE: Final = DecimalShape(DEFAULT_DECIMAL_PRECISION, DEFAULT_DECIMAL_SCALE)


def shape_of(precision: int | None, scale: int | None) -> DecimalShape:
    """The shape of a decimal column declared with ``precision`` / ``scale`` (None: not
    declared); the module docstring gives the rule."""
    if precision is None:
        if scale is None:
            return DEFAULT_SHAPE
        return DecimalShape(max(DEFAULT_DECIMAL_PRECISION, scale), scale)
    return DecimalShape(precision, 0 if scale is None else scale)


def fit(value: Decimal, shape: DecimalShape) -> Decimal | None:
    """``value`` with exactly ``shape.scale`` digits after the point, or None when that
    would drop a non-zero digit or need more than ``shape.precision`` digits in all."""
    if not value.is_finite():
        return None
    try:
        fitted = value.quantize(shape.quantum, None, _EXACT)  # positional: a keyword costs 2x
    except decimal.DecimalException:  # a dropped digit, or a coefficient beyond 100 digits
        return None
    limit = shape.limit
    return fitted if -limit < fitted < limit else None


def misfit_reason(value: Decimal, shape: DecimalShape) -> str:
    """Why ``value`` does not fit ``shape``, in words (for a value :func:`fit` refused)."""
    if not value.is_finite():
        return "not a finite number"
    _, digits, exponent = value.normalize(_WORDS).as_tuple()
    assert isinstance(exponent, int)  # finite
    after = max(0, -exponent)
    if after > shape.scale:
        return f"{_digits(after)} after the point, the column keeps {shape.scale}"
    before = max(0, len(digits) + exponent)
    return f"{_digits(before)} before the point, the column holds {shape.precision - shape.scale}"


def _digits(count: int) -> str:
    return "1 digit" if count == 1 else f"{count} digits"
