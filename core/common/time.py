"""``loadstone.common.time``: dlt's ``dlt.common.time`` coercions (:mod:`loadstone.datetimes`)."""

from __future__ import annotations

from loadstone.datetimes import ensure_pendulum_date, ensure_pendulum_datetime

__all__ = ["ensure_pendulum_date", "ensure_pendulum_datetime"]
