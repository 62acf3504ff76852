"""The pipeline's JSON files (state, schemas, package metadata, trace) keep every value
exactly: written through orjson (or the standard library for what orjson cannot write),
read back by the standard library."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pytest

from loadstone.exceptions import CorruptFileError
from loadstone.storage.json_files import read_json, write_json_atomic


@pytest.mark.parametrize(
    "value",
    [
        2**70,  # a wei cursor: orjson cannot write it, and would read it as a float
        -(2**63) - 1,
        2**64 - 1,
        {"nested": [1, {"deep": 2**100}], "text": "ü"},
        1.5,
        None,
    ],
)
def test_a_value_reads_back_exactly(tmp_path: Path, value: object) -> None:
    path = tmp_path / "state.json"
    write_json_atomic(path, {"last_value": value})
    assert read_json(path, repair="-") == {"last_value": value}
    assert type(read_json(path, repair="-")["last_value"]) is type(value)


def test_values_json_lacks_are_their_text(tmp_path: Path) -> None:
    path = tmp_path / "meta.json"
    when = dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
    write_json_atomic(path, {"at": when, "day": dt.date(2024, 1, 2), "n": Decimal("1.50"), 1: "k"})
    assert read_json(path, repair="-") == {
        "at": "2024-01-02 03:04:05+00:00",
        "day": "2024-01-02",
        "n": "1.50",
        "1": "k",
    }


def test_a_damaged_file_names_itself_and_the_repair(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text('{"cut": ', encoding="utf-8")
    with pytest.raises(CorruptFileError, match="delete it"):
        read_json(path, repair="delete it")
