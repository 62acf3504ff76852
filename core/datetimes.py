"""dlt's datetime coercions (``dlt.common.time``): any date-like value as a pendulum value.

dlt programs pass cursor values, API parameters and configured dates through
``ensure_pendulum_datetime`` / ``ensure_pendulum_date``; these are the same functions with
dlt 1.31's answers: a value is read in ``tz`` (UTC by default) when it has no zone of its own
and shown in ``tz`` when it has, a number is seconds since the epoch, a date is its midnight,
and a string is ISO 8601 (pendulum's parser; its ``ParserError`` for anything else, a
``ValueError`` for a time of day).
"""

from __future__ import annotations

import datetime as _dt

import pendulum

__all__ = ["ensure_pendulum_date", "ensure_pendulum_datetime"]

TAnyDate = pendulum.DateTime | pendulum.Date | _dt.datetime | _dt.date | str | float | int


def ensure_pendulum_datetime(value: TAnyDate, tz: _dt.tzinfo | None = None) -> pendulum.DateTime:
    """``value`` as an aware pendulum ``DateTime`` in ``tz`` (UTC when not given)."""
    zone = tz if tz is not None else pendulum.UTC
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            return pendulum.instance(value.replace(tzinfo=zone))
        return pendulum.instance(value.astimezone(zone))
    if isinstance(value, _dt.date):
        return pendulum.datetime(value.year, value.month, value.day, tz=zone)
    if isinstance(value, (int, float)):
        return pendulum.instance(pendulum.from_timestamp(value).astimezone(zone))
    if isinstance(value, str):
        parsed = pendulum.parse(value, exact=True, tz=zone)
        if not isinstance(parsed, (_dt.datetime, _dt.date)):  # a time or a duration
            raise ValueError(f"Cannot coerce `{value}` to `pendulum.DateTime` object.")
        return ensure_pendulum_datetime(parsed, zone)
    raise TypeError(f"Cannot coerce `{value!r}` to `pendulum.DateTime` object.")


def ensure_pendulum_date(value: TAnyDate, tz: _dt.tzinfo | None = None) -> pendulum.Date:
    """``value`` as a pendulum ``Date``: a date as it is, anything else its date in ``tz``."""
    if isinstance(value, _dt.date) and not isinstance(value, _dt.datetime):
        return pendulum.date(value.year, value.month, value.day)
    return ensure_pendulum_datetime(value, tz).date()
