"""Specification of type detections (loadstone.schema.detections), checked against dlt 1.31's
observed choices (tests/fixtures/schemas/detections_dlt.json)."""

from __future__ import annotations

import datetime as dt
import json
import pickle
import time
from typing import Any

import locations
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loadstone.exceptions import UnknownDetectionError
from loadstone.schema.detections import (
    DEFAULT_DETECTIONS,
    DETECTIONS,
    TIMESTAMP_WINDOW_SECONDS,
    convert_detected,
    detect,
    detect_type,
    parse_iso_timestamp,
)

UTC = dt.timezone.utc
FIXTURE = locations.FIXTURES / "schemas" / "detections_dlt.json"
DLT_CASES = json.loads(FIXTURE.read_text())["cases"]


class HexBytes(bytes):
    """Stands in for the ``hexbytes`` package's class (detected by class name)."""


@pytest.mark.oracle
@pytest.mark.parametrize(
    "case", DLT_CASES, ids=[f"{c['detection']}:{c['value']!r}" for c in DLT_CASES]
)
def test_detection_matches_dlt(case: dict[str, Any]) -> None:
    value = case["value"]
    detected = detect_type(value, [case["detection"]])
    if detected is None:
        from loadstone.schema.data_types import py_type_to_data_type

        detected = py_type_to_data_type(value)
    if type(value) is int and value > 2**63 - 1 and case["detection"] != "large_integer":
        # deliberate difference: dlt types unsigned 64-bit ints ``bigint`` (they overflow a
        # BIGINT column); loadstone keeps them lossless as ``wei``
        assert (case["data_type"], detected) == ("bigint", "wei")
        return
    assert detected == case["data_type"]


def test_iso_timestamp_is_the_only_default_detection() -> None:
    assert DEFAULT_DETECTIONS == ("iso_timestamp",)
    assert set(DEFAULT_DETECTIONS) <= set(DETECTIONS)


def test_iso_timestamp_converts_to_utc_datetime() -> None:
    assert detect("2023-07-26T14:45:00.123+0200", ["iso_timestamp"]) == (
        "timestamp",
        dt.datetime(2023, 7, 26, 12, 45, 0, 123000, tzinfo=UTC),
    )


def test_iso_timestamp_needs_a_time_part() -> None:
    assert detect_type("2023-07-26", ["iso_timestamp"]) is None


def test_iso_date_converts_week_and_ordinal_dates() -> None:
    assert detect("2023-W30", ["iso_date"]) == ("date", dt.date(2023, 7, 24))
    assert detect("2023-207", ["iso_date"]) == ("date", dt.date(2023, 7, 26))


def test_fractions_beyond_microseconds_are_truncated() -> None:
    parsed = parse_iso_timestamp("2023-07-26T14:45:00.1234567Z")
    assert parsed is not None and parsed.microsecond == 123456


def test_timestamp_detects_unix_times_near_now() -> None:
    now = time.time()
    assert detect_type(now, ["timestamp"]) == "timestamp"
    assert detect_type(int(now) - 365 * 86400, ["timestamp"]) == "timestamp"


def test_timestamp_ignores_numbers_far_from_now() -> None:
    now = time.time()
    assert detect_type(now - TIMESTAMP_WINDOW_SECONDS - 86400, ["timestamp"]) is None
    assert detect_type(now + TIMESTAMP_WINDOW_SECONDS + 86400, ["timestamp"]) is None
    assert detect_type(1.5, ["timestamp"]) is None


def test_timestamp_ignores_booleans() -> None:
    assert detect_type(True, ["timestamp"]) is None


def test_timestamp_converts_epoch_seconds() -> None:
    assert convert_detected("timestamp", 1700000000) == dt.datetime(
        2023, 11, 14, 22, 13, 20, tzinfo=UTC
    )


def test_large_integer_makes_wei() -> None:
    assert detect_type(2**64, ["large_integer"]) == "wei"
    assert detect_type(2**63 - 1, ["large_integer"]) is None


def test_wei_to_double_converts_big_integers_to_float() -> None:
    assert detect(2**70, ["wei_to_double"]) == ("double", float(2**70))


def test_hexbytes_to_text_makes_0x_text() -> None:
    assert detect(HexBytes(b"\x12\x34"), ["hexbytes_to_text"]) == ("text", "0x1234")


def test_plain_bytes_are_not_hexbytes() -> None:
    assert detect_type(b"\x12\x34", ["hexbytes_to_text"]) is None


def test_first_answering_detection_wins() -> None:
    assert detect_type(2**64, ["wei_to_double", "large_integer"]) == "double"
    assert detect_type(2**64, ["large_integer", "wei_to_double"]) == "wei"


def test_no_detection_answers_for_plain_values() -> None:
    assert detect_type("hello", DETECTIONS) is None
    assert detect_type(None, DETECTIONS) is None


def test_unknown_detection_is_an_error() -> None:
    with pytest.raises(UnknownDetectionError, match="iso_timestmap"):
        detect_type("x", ["iso_timestmap"])


def test_detections_are_picklable() -> None:
    assert pickle.loads(pickle.dumps(detect_type))("2023-01-01T00:00:00", ["iso_timestamp"])
    assert isinstance(pickle.loads(pickle.dumps(UnknownDetectionError("x"))), UnknownDetectionError)


@settings(deadline=None)
@given(st.datetimes(timezones=st.just(UTC)))
def test_any_isoformat_timestamp_is_detected_and_round_trips(value: dt.datetime) -> None:
    text = value.isoformat()
    assert detect(text, ["iso_timestamp"]) == ("timestamp", value)


@settings(deadline=None)
@given(st.dates())
def test_any_iso_date_is_detected_and_round_trips(value: dt.date) -> None:
    assert detect(value.isoformat(), ["iso_date"]) == ("date", value)


@settings(deadline=None)
@given(st.text(alphabet="abcxyz -_.:", max_size=30))
def test_words_are_never_timestamps(value: str) -> None:
    assert detect_type(value, ["iso_timestamp", "iso_date"]) is None
