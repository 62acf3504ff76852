"""The one rule of a decimal column's precision and scale, and of what fits it exactly."""

from __future__ import annotations

from decimal import Context, Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loadstone.schema.decimals import DEFAULT_SHAPE, DecimalShape, fit, misfit_reason, shape_of

EXACT = Context(prec=100)


@pytest.mark.parametrize(
    ("precision", "scale", "shape"),
    [
        (None, None, (38, 9)),
        (38, 10, (38, 10)),
        (5, None, (5, 0)),
        (None, 3, (38, 3)),
        (50, 10, (50, 10)),
    ],
)
def test_a_declared_shape_is_kept_and_the_default_fills_only_what_is_missing(
    precision: int | None, scale: int | None, shape: tuple[int, int]
) -> None:
    assert shape_of(precision, scale) == DecimalShape(*shape)


def test_nothing_declared_is_decimal_38_9() -> None:
    assert shape_of(None, None) is DEFAULT_SHAPE


@given(
    st.integers(1, 38).flatmap(
        lambda p: st.tuples(st.just(p), st.integers(0, p), st.integers(-(10**p) + 1, 10**p - 1))
    )
)
def test_every_value_of_a_shape_fits_it_unchanged(drawn: tuple[int, int, int]) -> None:
    precision, scale, unscaled = drawn
    value = Decimal(unscaled).scaleb(-scale, EXACT)
    fitted = fit(value, DecimalShape(precision, scale))
    assert fitted == value
    assert fitted is not None and fitted.as_tuple().exponent == -scale


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("1E+40", "41 digits before the point, the column holds 28"),
        ("-1E-11", "11 digits after the point, the column keeps 10"),
        ("1.00000000001", "11 digits after the point, the column keeps 10"),
        ("NaN", "not a finite number"),
    ],
)
def test_a_value_beyond_the_shape_does_not_fit_and_says_why(value: str, reason: str) -> None:
    shape = DecimalShape(38, 10)
    assert fit(Decimal(value), shape) is None
    assert misfit_reason(Decimal(value), shape) == reason


def test_trailing_zeros_beyond_the_scale_are_no_digit_lost() -> None:
    assert fit(Decimal("1.50000000000000"), DecimalShape(5, 2)) == Decimal("1.50")
