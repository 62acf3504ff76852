"""What an incremental cursor keeps in state, value by value, as dlt 1.31 keeps it."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import loadstone


def test_an_arrow_utc_cursor_is_kept_with_datetime_timezone_utc(tmp_path: Path) -> None:
    """dlt 1.31 stores ``tzinfo=datetime.timezone.utc`` for an Arrow ``timestamp[us, UTC]``
    cursor, as for a dict's (differential program p414); pyarrow itself gives ZoneInfo('UTC')."""
    utc = dt.timezone.utc
    ts = [dt.datetime(2024, 1, day, tzinfo=utc) for day in (1, 2, 3)]

    @loadstone.resource
    def arr(c: Any = loadstone.sources.incremental("ts")) -> Any:
        yield pa.table({"id": [1, 2, 3], "ts": pa.array(ts, pa.timestamp("us", tz="UTC"))})

    pipe = loadstone.pipeline("utc", destination="duckdb", pipelines_dir=str(tmp_path / "p"))
    pipe.run(arr(), table_name="t")
    last = pipe.state["sources"]["utc"]["resources"]["arr"]["incremental"]["ts"]["last_value"]
    assert repr(last) == repr(dt.datetime(2024, 1, 3, tzinfo=utc))


def test_the_incremental_class_takes_a_type_argument_as_dlts_generic_does() -> None:
    """``updated: dlt.sources.incremental[str] = dlt.sources.incremental("updated")`` is how
    dlt's docs annotate a cursor argument; evaluated at run time it raised TypeError here
    (differential program p424)."""
    alias = loadstone.sources.incremental[int]
    cursor = alias("ts", initial_value=1)
    assert isinstance(cursor, loadstone.sources.incremental)
    assert cursor.initial_value == 1


def test_a_lagged_cursor_shows_its_lagged_start_as_dlt_does(tmp_path: Path) -> None:
    """With ``lag=15`` and 40 kept in state, dlt 1.31's body sees ``start_value`` and
    ``last_value`` 25 (the start moved back by the lag); once a page reached the cursor its
    last value goes on from 40, rows within the lag or not; the state keeps start_value 40
    (differential programs p1013, p1015, p1016; literals are dlt's outcome)."""
    data = [{"id": i, "t": i * 10} for i in range(5)]
    seen: list[tuple[str, Any, Any]] = []

    @loadstone.resource(primary_key="id")
    def lagged(t: Any = loadstone.sources.incremental("t", lag=15)) -> Any:
        seen.append(("start", t.start_value, t.last_value))
        yield from data
        seen.append(("end", t.start_value, t.last_value))

    pipe = loadstone.pipeline("lag", destination="duckdb", pipelines_dir=str(tmp_path / "p"))
    pipe.run(lagged())
    data[:] = [{"id": 9, "t": 30}, {"id": 10, "t": 20}]
    pipe.run(lagged())
    data[:] = [{"id": 11, "t": 5}]
    pipe.run(lagged())
    assert seen == [
        ("start", None, None), ("end", None, 40),
        ("start", 25, 25), ("end", 25, 40),
        ("start", 25, 25), ("end", 25, 40),
    ]  # fmt: skip
    kept = pipe.state["sources"]["lag"]["resources"]["lagged"]["incremental"]["t"]
    assert (kept["last_value"], kept["start_value"]) == (40, 40)


def test_an_end_value_without_an_initial_value_is_refused_when_the_cursor_binds() -> None:
    """dlt 1.31 raises ConfigurationValueError (a ValueError) when such a cursor binds, at
    ``list(resource)`` or extract; the cursor itself is made (differential program p1032)."""
    cursor = loadstone.sources.incremental("n", end_value=30)
    assert cursor.end_value == 30

    @loadstone.resource
    def frames(c: Any = cursor) -> Any:
        yield [{"n": 5}]

    with pytest.raises(ValueError, match="initial_value") as raised:
        list(frames())
    assert isinstance(raised.value, loadstone.exceptions.ConfigValueError)


def test_pendulum_cursor_values_are_kept_as_the_state_reads_them_back(tmp_path: Path) -> None:
    """dlt 1.31's ``pipeline.state`` holds a pendulum cursor value as the standard type its
    stored state reads back: a zone as a fixed offset, a pendulum date as a date
    (differential program p1008: the state printed pendulum's DateTime with its zone)."""
    import pendulum

    @loadstone.resource
    def berlin(c: Any = loadstone.sources.incremental("c")) -> Any:
        yield [
            {"c": pendulum.datetime(2024, 3, 1)},
            {"c": pendulum.datetime(2024, 3, 2, tz="Europe/Berlin")},
        ]

    @loadstone.resource
    def days(c: Any = loadstone.sources.incremental("c")) -> Any:
        yield [{"c": pendulum.date(2024, 3, 1)}]

    pipe = loadstone.pipeline("pz", destination="duckdb", pipelines_dir=str(tmp_path / "p"))
    pipe.extract([berlin(), days()])
    kept = pipe.state["sources"]["pz"]["resources"]
    hour = dt.timezone(dt.timedelta(hours=1))
    assert repr(kept["berlin"]["incremental"]["c"]["last_value"]) == repr(
        dt.datetime(2024, 3, 2, tzinfo=hour)
    )
    assert repr(kept["days"]["incremental"]["c"]["last_value"]) == repr(dt.date(2024, 3, 1))
