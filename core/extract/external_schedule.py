"""``incremental(allow_external_schedulers=True)``: the interval a scheduler gives a run.

A scheduler that runs a pipeline once per interval (cron, Airflow, a launcher) says which
interval a run loads through ``DLT_INTERVAL_START`` and ``DLT_INTERVAL_END`` (ISO 8601
timestamps; a naive one is UTC), as dlt 1.31 reads them. The incremental then loads the rows
with ``start <= cursor < end``: the start is the later of the interval's start and the
``initial_value``, and nothing is kept in state (the scheduler owns the position). The
interval takes the cursor's type, known from ``initial_value`` (or ``end_value``): an aware
or naive datetime, a date, or epoch seconds for an int or a float. Observed in dlt 1.31
(``tests/fixtures/dlt_external_schedulers.json``); loadstone has no Airflow context, so the
environment is the only source of an interval.
"""

from __future__ import annotations

import datetime as _dt
import os

from loadstone.exceptions import ExternalSchedulerNotAvailable, JoinSchedulerError
from loadstone.schema.iso8601 import parse_iso_timestamp
from loadstone.typing import TDataItem

__all__ = ["END_VARIABLE", "START_VARIABLE", "scheduled_interval"]

START_VARIABLE = "DLT_INTERVAL_START"
END_VARIABLE = "DLT_INTERVAL_END"

_NO_TYPE = (
    "Could not find the Python data type of Incremental class participating in external "
    "schedule. Please add type hint when declaring incremental argument in your resource or "
    "pass default value or initial_value from which the type can be inferred."
)
_NOT_DATETIME = (
    "Declared data type of Incremental class must be safely coercable to datetime so they "
    "can be compared. Please convert your cursor field from {name} to datetime."
)


def _moment(variable: str, text: str) -> _dt.datetime:
    moment = parse_iso_timestamp(text.strip())
    if moment is None:
        raise ValueError(f"{variable}={text!r} is not an ISO 8601 timestamp")
    return moment


def _as_cursor_type(
    moment: _dt.datetime, like: TDataItem, resource_name: str, cursor_path: str
) -> TDataItem:
    """``moment`` (UTC) as a value of the type of ``like``."""
    if isinstance(like, _dt.datetime):
        return moment if like.tzinfo is not None else moment.replace(tzinfo=None)
    if isinstance(like, _dt.date):
        return moment.date()
    if isinstance(like, bool) or not isinstance(like, (int, float)):
        reason = _NOT_DATETIME.format(name=type(like).__name__)
        raise JoinSchedulerError(resource_name, cursor_path, reason)
    return type(like)(moment.timestamp())


def scheduled_interval(
    resource_name: str, cursor_path: str, initial_value: TDataItem, end_value: TDataItem
) -> tuple[TDataItem, TDataItem]:
    """``(start, end)`` of the scheduler's interval in the cursor's type; the start is not
    before ``initial_value``. Raises when the interval or the cursor's type is missing."""
    start_text, end_text = os.environ.get(START_VARIABLE), os.environ.get(END_VARIABLE)
    if not start_text or not end_text:
        raise ExternalSchedulerNotAvailable(resource_name)
    like = initial_value if initial_value is not None else end_value
    if like is None:
        raise JoinSchedulerError(resource_name, cursor_path, _NO_TYPE)
    start = _as_cursor_type(_moment(START_VARIABLE, start_text), like, resource_name, cursor_path)
    end = _as_cursor_type(_moment(END_VARIABLE, end_text), like, resource_name, cursor_path)
    if initial_value is not None and initial_value > start:
        start = initial_value
    return start, end
