"""A line that is not JSON: fail with file and line, or skip, or quarantine, as configured."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from normalizer_support import StandInPackage, read_table, schema_tables, snake_case
from schema_documents import schema_of

from loadstone.exceptions import BadRecordError
from loadstone.normalizers.contract import BAD_RECORDS_TABLE, NormalizeContext
from loadstone.plugins.normalizers.relational import RelationalNormalizer

GOOD = '{"a": 1}\n'
BROKEN = '{"a": 2, oops}\n'


def _package(tmp_path: Path, text: str) -> StandInPackage:
    package = StandInPackage(tmp_path / "package")
    package.add_raw("t", text, name="items.jsonl")
    return package


def _normalize(
    package: StandInPackage,
    on_bad_record: str = "fail",
    spark: Any = None,
    chunk_bytes: int = 1 << 25,
) -> Any:
    context = NormalizeContext(spark=spark, naming=snake_case(), on_bad_record=on_bad_record)
    return RelationalNormalizer(chunk_bytes=chunk_bytes).normalize(package, schema_of(), context)


def test_a_malformed_line_fails_naming_file_and_line(tmp_path: Path) -> None:
    package = _package(tmp_path, GOOD + GOOD + BROKEN + GOOD)
    with pytest.raises(BadRecordError) as info:
        _normalize(package)
    assert info.value.line == 3
    assert info.value.file.endswith("items.jsonl")
    assert "items.jsonl line 3" in str(info.value)


def test_a_failed_normalize_leaves_no_data_in_the_package(tmp_path: Path) -> None:
    package = _package(tmp_path, GOOD * 5 + BROKEN)
    with pytest.raises(BadRecordError):
        _normalize(package)
    assert list(package.normalized_dir.iterdir()) == []


def test_normalize_works_again_after_the_file_is_fixed(tmp_path: Path) -> None:
    package = _package(tmp_path, GOOD + BROKEN)
    with pytest.raises(BadRecordError):
        _normalize(package)
    package.files[0].path.write_text(GOOD + GOOD, encoding="utf-8")
    result = _normalize(package)
    assert result.tables["t"].row_count == 2
    assert result.bad_records == 0


def test_the_first_malformed_line_stops_normalizing_at_its_chunk(tmp_path: Path) -> None:
    package = _package(tmp_path, GOOD * 3 + BROKEN + GOOD * 40 + BROKEN + GOOD * 40)
    seen: list[tuple[int, int]] = []
    context = NormalizeContext(
        spark=None, naming=snake_case(), progress=lambda done, total: seen.append((done, total))
    )
    with pytest.raises(BadRecordError) as info:
        RelationalNormalizer(chunk_bytes=40).normalize(package, schema_of(), context)
    assert info.value.line == 4
    chunks_run, total = seen[-1]
    assert chunks_run < total / 4  # the chunks after the bad one were never normalized


def test_line_numbers_count_lines_of_earlier_chunks(spark: Any, tmp_path: Path) -> None:
    """Each chunk is a Spark task of its own: the bad line, in the last of three or four
    chunks, is numbered from the file's start, not from its chunk's."""
    package = _package(tmp_path, GOOD * 30 + BROKEN + GOOD * 3)
    with pytest.raises(BadRecordError) as info:
        _normalize(package, spark=spark, chunk_bytes=100)
    assert info.value.line == 31


def test_skip_drops_and_counts_bad_lines(tmp_path: Path) -> None:
    result = _normalize(_package(tmp_path, GOOD + BROKEN + GOOD + BROKEN), on_bad_record="skip")
    assert result.bad_records == 2
    assert result.tables["t"].row_count == 2
    assert BAD_RECORDS_TABLE not in result.tables


def test_quarantine_keeps_raw_lines_in_a_bad_records_table(tmp_path: Path) -> None:
    result = _normalize(_package(tmp_path, GOOD + BROKEN + GOOD), on_bad_record="quarantine")
    assert result.bad_records == 1
    rows = read_table(result, BAD_RECORDS_TABLE)
    assert len(rows) == 1
    assert rows[0]["line"] == 2
    assert rows[0]["raw"] == BROKEN.strip()
    assert rows[0]["file"].endswith("items.jsonl")
    assert rows[0]["error"]
    assert list(schema_tables(result)[BAD_RECORDS_TABLE]["columns"]) == [
        "file",
        "line",
        "error",
        "raw",
    ]


def test_blank_lines_are_not_bad_records(tmp_path: Path) -> None:
    result = _normalize(_package(tmp_path, GOOD + "\n   \n" + GOOD))
    assert result.bad_records == 0
    assert result.tables["t"].row_count == 2


def test_integers_beyond_64_bits_are_not_bad_records(tmp_path: Path) -> None:
    result = _normalize(_package(tmp_path, '{"big": 123456789012345678901234567890}\n'))
    assert result.bad_records == 0
    assert [r["big"] for r in read_table(result, "t")] == [123456789012345678901234567890]


def test_windows_line_ends_read_as_unix_ones(tmp_path: Path) -> None:
    """CRLF lines (and a blank ``\\r`` line) parse as LF ones; a bad line is kept without
    its ``\\r`` and counted on its own line number."""
    text = (GOOD + "\n" + BROKEN + GOOD).replace("\n", "\r\n")
    result = _normalize(_package(tmp_path, text), on_bad_record="quarantine")
    assert result.tables["t"].row_count == 2
    assert result.bad_records == 1
    bad = read_table(result, BAD_RECORDS_TABLE)
    assert [(r["line"], r["raw"]) for r in bad] == [(3, BROKEN.strip())]
