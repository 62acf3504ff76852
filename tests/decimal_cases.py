"""Random decimal columns for the property tests: a precision 1-38, a scale 0..precision, and
values of either sign that fit them, with the edge values (the smallest negative ``-1E-s``
and all nines); sometimes one value that does not fit, which the run must refuse."""

from __future__ import annotations

import os
from decimal import Context, Decimal

import attrs
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

#: examples per property test: small by default (the suite's time budget), more on demand
EXAMPLES = int(os.environ.get("LOADSTONE_DECIMAL_EXAMPLES", "3"))
#: exact arithmetic on 38-digit values (the default context rounds to 28 digits)
EXACT = Context(prec=100)
PROPERTY = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@attrs.frozen
class DecimalColumn:
    precision: int
    scale: int
    values: tuple[Decimal, ...]

    @property
    def hint(self) -> dict[str, object]:
        return {"data_type": "decimal", "precision": self.precision, "scale": self.scale}

    @property
    def fits(self) -> bool:
        limit = Decimal(10) ** (self.precision - self.scale)
        return all(
            -limit < v < limit
            and v == v.quantize(Decimal(1).scaleb(-self.scale, EXACT), context=EXACT)
            for v in self.values
        )


@st.composite
def decimal_columns(draw: st.DrawFn, misfit: bool = True) -> DecimalColumn:
    precision = draw(st.integers(1, 38))
    scale = draw(st.integers(0, precision))
    largest = 10**precision - 1
    unscaled = draw(st.lists(st.integers(-largest, largest), min_size=1, max_size=4))
    edges = [-1, largest, -largest]
    values = [Decimal(u).scaleb(-scale, EXACT) for u in [*unscaled, *edges]]
    if misfit and draw(st.integers(0, 4)) == 0:  # one value in five columns does not fit
        too_fine = Decimal(draw(st.integers(1, 9))).scaleb(-scale - 1, EXACT)
        too_large = Decimal(10) ** (precision - scale)
        values.insert(
            draw(st.integers(0, len(values))), draw(st.sampled_from([too_fine, too_large]))
        )
    return DecimalColumn(precision, scale, tuple(values))


def same_digits(written: Decimal, read: str | None) -> bool:
    """A value read back is the one written: the same number, every digit (``-1E-10`` and
    ``-1.00E-10`` are one number; ``0E-9`` for ``-1E-10`` is not)."""
    return read is not None and Decimal(read) == written
