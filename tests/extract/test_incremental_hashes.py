"""An incremental cursor's ``unique_hashes`` are dlt 1.31's, value for value.

A pipeline moving from dlt to loadstone (or back) keeps its state: the hashes of the rows at
the last value decide which rows a rerun skips, so a hash of another recipe would load those
rows twice. ``tests/fixtures/incremental/dlt_unique_hashes.json`` is what dlt 1.31 stored for
the same rows (recorded as a black box).
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest

import loadstone
from loadstone.typing import TDataItem

FIXTURE = Path(__file__).parents[1] / "fixtures" / "incremental" / "dlt_unique_hashes.json"
RECORDED: dict[str, list[str]] = json.loads(FIXTURE.read_text())
UTC = dt.timezone.utc

CASES: dict[str, tuple[TDataItem, object]] = {
    "flat": ([{"ts": 5, "b": "x", "a": 1}], None),
    "nested": ([{"ts": 5, "n": {"z": 1, "a": [1, 2, {"q": None}]}, "s": "ünï"}], None),
    "floats": ([{"ts": 5, "f": 1.5, "g": 1e20, "h": True}], None),
    "dt": (
        [
            {
                "ts": dt.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=UTC),
                "d": dt.date(2024, 1, 2),
                "dec": Decimal("1.10"),
            }
        ],
        None,
    ),
    "dtonly": ([{"ts": dt.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=UTC)}], None),
    "dtnaive": ([{"ts": 1, "x": dt.datetime(2024, 1, 2, 3, 4, 5)}], None),
    "date": ([{"ts": 1, "d": dt.date(2024, 1, 2)}], None),
    "dec": ([{"ts": 1, "dec": Decimal("1.10")}], None),
    "bytes": ([{"ts": 1, "b": b"ab"}], None),
    "time": ([{"ts": 5, "t": dt.time(1, 2, 3)}], None),
    "uuid": ([{"ts": 5, "u": uuid.UUID(int=5)}], None),
    "pk2": ([{"ts": 5, "id": 7, "k": "a", "x": 1}], ["id", "k"]),
    "pklist1": ([{"ts": 5, "id": 7, "x": 1}], ["id"]),
    "pk1": ([{"ts": 5, "id": 7, "x": 1}], "id"),
    "pkstr": ([{"ts": 5, "id": "abc", "x": 1}], "id"),
    "arrowpk": (pa.Table.from_pylist([{"ts": 5, "id": 3, "b": "x"}]), "id"),
    "arrow": (pa.Table.from_pylist([{"ts": 5, "a": 1, "b": "x"}]), None),
}


def _stored_hashes(tmp_path: Path, name: str, rows: TDataItem, key: object) -> list[str]:
    @loadstone.resource(name=name, primary_key=key)  # type: ignore[arg-type]
    def resource(cursor: object = loadstone.sources.incremental("ts")) -> TDataItem:
        yield rows

    pipeline = loadstone.pipeline(
        f"hashes_{name}", destination="duckdb", pipelines_dir=str(tmp_path)
    )
    pipeline.extract(resource())
    state = pipeline.state["sources"][f"hashes_{name}"]["resources"][name]
    return list(state["incremental"]["ts"]["unique_hashes"])


def test_a_key_given_by_apply_hints_hashes_as_given(tmp_path: Path) -> None:
    @loadstone.resource(name="pk1")
    def resource(cursor: object = loadstone.sources.incremental("ts")) -> TDataItem:
        yield [{"ts": 5, "id": 7, "x": 1}]

    pipeline = loadstone.pipeline(
        "hashes_applied", destination="duckdb", pipelines_dir=str(tmp_path)
    )
    pipeline.extract(resource().apply_hints(primary_key="id"))
    state = pipeline.state["sources"]["hashes_applied"]["resources"]["pk1"]
    assert state["incremental"]["ts"]["unique_hashes"] == RECORDED["pk1"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_hashes_of_the_rows_at_the_last_value_are_dlts(tmp_path: Path, name: str) -> None:
    rows, key = CASES[name]
    assert _stored_hashes(tmp_path, name, rows, key) == RECORDED[name]


def test_an_open_range_start_keeps_no_hashes(tmp_path: Path) -> None:
    """Rows at the start value are excluded by the open range, so nothing is deduplicated
    and, as in dlt 1.31, no hashes are stored (the last value is)."""

    @loadstone.resource(name="open_start")
    def resource(
        cursor: object = loadstone.sources.incremental("ts", initial_value=1, range_start="open"),
    ) -> TDataItem:
        yield [{"ts": 1, "a": 0}, {"ts": 5, "a": 1}, {"ts": 5, "a": 2}]

    pipeline = loadstone.pipeline("hashes_open", destination="duckdb", pipelines_dir=str(tmp_path))
    pipeline.extract(resource())
    stored = pipeline.state["sources"]["hashes_open"]["resources"]["open_start"]["incremental"]
    assert (stored["ts"]["last_value"], stored["ts"]["unique_hashes"]) == (5, [])
