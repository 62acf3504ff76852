"""``incremental(..., allow_external_schedulers=True)`` as a dlt user writes it, against a
library given as an argument: the rows a run loads for the interval in
``DLT_INTERVAL_START`` / ``DLT_INTERVAL_END``, per cursor type, and the errors without one.

Recorded under dlt 1.31 by ``tests/compat/record_external_schedule.py``
(``tests/fixtures/dlt_external_schedulers.json``); compared by
``tests/extract/test_external_schedulers.py``.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

BASE = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
INTERVAL = ("2024-01-04T00:00:00+00:00", "2024-01-06T00:00:00+00:00")


def _day(i: int) -> dt.datetime:
    return BASE + dt.timedelta(days=i)


#: name -> (initial_value, cursor value of row i)
CURSORS: dict[str, tuple[Any, Callable[[int], Any]]] = {
    "aware_datetime": (dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc), _day),
    "naive_datetime": (dt.datetime(2024, 1, 1), lambda i: _day(i).replace(tzinfo=None)),
    "date": (dt.date(2024, 1, 1), lambda i: _day(i).date()),
    "int_epoch": (0, lambda i: int(_day(i).timestamp())),
    "float_epoch": (0.0, lambda i: _day(i).timestamp()),
    "initial_after_start": (dt.datetime(2024, 1, 5, tzinfo=dt.timezone.utc), _day),
    "text": ("2024-01-01", lambda i: _day(i).isoformat()),
    "no_initial_value": (None, _day),
}


def _innermost(error: BaseException) -> BaseException:
    while error.__cause__ is not None:
        error = error.__cause__
    return error


def _run_one(dlt: Any, pipeline: Any, name: str) -> dict[str, Any]:
    initial, value = CURSORS[name]

    @dlt.resource(name=name)
    def rows(
        c: Any = dlt.sources.incremental(
            "c", initial_value=initial, allow_external_schedulers=True
        ),
    ) -> Any:
        yield from [{"id": i, "c": value(i)} for i in range(8)]

    try:
        pipeline.run(rows())
    except Exception as error:  # the refusal is the outcome recorded
        return {"error": type(_innermost(error)).__name__}
    with pipeline.sql_client() as client:
        ids = [r[0] for r in client.execute_sql(f"SELECT id FROM {name} ORDER BY id")]
    kept = pipeline.state.get("sources", {}).get(pipeline.pipeline_name, {})
    cursor_kept = "incremental" in kept.get("resources", {}).get(name, {})
    return {"ids": ids, "cursor_kept_in_state": cursor_kept}


def schedule_outcome(dlt: Any, workdir: Path) -> dict[str, Any]:
    """Every cursor type under the interval, then a run without one."""
    pipeline = dlt.pipeline(
        "scheduled",
        destination=dlt.destinations.duckdb(str(workdir / "scheduled.duckdb")),
        pipelines_dir=str(workdir / "pipelines"),
    )
    os.environ["DLT_INTERVAL_START"], os.environ["DLT_INTERVAL_END"] = INTERVAL
    try:
        out = {name: _run_one(dlt, pipeline, name) for name in CURSORS}
        del os.environ["DLT_INTERVAL_END"]
        out["start_only"] = _run_one(dlt, pipeline, "aware_datetime")
    finally:
        os.environ.pop("DLT_INTERVAL_START", None)
        os.environ.pop("DLT_INTERVAL_END", None)
    out["no_interval"] = _run_one(dlt, pipeline, "date")
    return out
