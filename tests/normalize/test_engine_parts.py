"""The chunk engine's parts, each on its own: names, buffers, bad lines, line parsing, settling.

The whole engine is tested end to end (against dlt and between its C and Python loops);
these pin what each small class owns, so a change inside one shows up where it is made.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from normalizer_support import snake_case

from loadstone.plugins.normalizers.relational.bad_records import BadRecords
from loadstone.plugins.normalizers.relational.chunk_plan import (
    SPLIT_BYTES,
    balanced_chunk_bytes,
    plan_chunks,
    stays_whole,
)
from loadstone.plugins.normalizers.relational.facts import ChunkFacts, ColumnFact, TaskError
from loadstone.plugins.normalizers.relational.json_lines import MAX_DEPTH, BadLine, parse_line
from loadstone.plugins.normalizers.relational.names import ColumnNames
from loadstone.plugins.normalizers.relational.native import Cell
from loadstone.plugins.normalizers.relational.settle import to_rerun
from loadstone.plugins.normalizers.relational.table_buffers import discard, put
from loadstone.plugins.normalizers.relational.task import TaskFailure


def test_names_remember_the_source_spelling_of_columns_and_tables() -> None:
    names = ColumnNames(snake_case(), use_break_path=True)
    parts = (names.norm_key("User Name"), names.norm_key("firstName"))
    assert names.col_name(parts) == "user_name__first_name"
    assert names.source_of("user_name__first_name") == "User Name.firstName"
    assert names.table_name(("items", names.norm_key("Tags"))) == "items__tags"
    assert names.table_source["items__tags"] == "items__Tags"
    assert names.norm_key("  ") == "_empty"


def test_a_later_value_for_the_same_row_wins_and_a_discarded_row_leaves_nothing() -> None:
    columns: dict[str, Cell] = {}
    put(columns, 0, "a", 1)
    put(columns, 0, "a", 2)
    put(columns, 1, "a", 3)
    put(columns, 1, "b", "x")
    assert columns == {"a": ([0, 1], [2, 3]), "b": ([1], ["x"])}
    assert discard(columns, 1) is False
    assert columns == {"a": ([0], [2])}


@pytest.mark.parametrize(
    ("policy", "kept", "fails"),
    [("skip", 0, False), ("quarantine", 1, False), ("fail", 0, True)],
)
def test_bad_lines_are_counted_kept_or_fail_the_task_by_policy(
    policy: str, kept: int, fails: bool
) -> None:
    bad = BadRecords(policy)
    if fails:
        with pytest.raises(TaskFailure) as failure:
            bad.record(7, BadLine("not JSON"), b"{x\r")
        assert failure.value.error == TaskError("bad_record", line=7, message="not JSON")
    else:
        bad.record(7, BadLine("not JSON"), b"{x\r")
    assert bad.count == 1
    assert bad.lines == [(7, "not JSON", "{x")] * kept


def test_lines_json_cannot_hold_or_nested_too_deep_are_bad() -> None:
    assert parse_line(b'{"n": 12345678901234567890}') == {"n": 12345678901234567890}
    with pytest.raises(BadLine, match="NaN is not valid JSON"):
        parse_line(b'{"n": NaN}')
    with pytest.raises(BadLine, match=f"nested deeper than {MAX_DEPTH} levels"):
        parse_line(b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1))


def test_chunks_split_a_file_at_line_ends_in_a_multiple_of_the_workers(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    path.write_bytes(b'{"a": 1}\n' * 1000)

    class Extracted:
        table_name = "items"
        source = None
        first_line = 1

        def __init__(self, path: Path) -> None:
            self.path = path

    assert balanced_chunk_bytes(269, 32, 2) == 27  # 10 chunks, not 8 full ones and a bit
    chunks = plan_chunks([Extracted(path)], 2000, workers=2)
    assert len(chunks) % 2 == 0
    assert [c.start for c in chunks[1:]] == [c.end for c in chunks[:-1]]
    assert all(c.end % 9 == 0 for c in chunks)  # every chunk ends after a newline


MiB = 1024 * 1024


@pytest.mark.parametrize(
    ("size", "workers", "whole"),
    [
        (SPLIT_BYTES, 2, True),  # small: one chunk, normalized in the driver
        (SPLIT_BYTES + 1, 2, False),  # fits a 64 MiB chunk, but two workers beat one
        (SPLIT_BYTES + 1, 1, True),  # one worker: one chunk up to the chunk size
        (64 * MiB + 1, 1, False),
    ],
)
def test_a_file_is_one_chunk_only_when_one_worker_would_do_it_anyway(
    size: int, workers: int, whole: bool
) -> None:
    assert stays_whole("events.jsonl", size, 64 * MiB, workers) is whole
    assert stays_whole("events.jsonl.gz", size, 64 * MiB, workers)  # never entered mid-way


def test_a_split_file_gives_every_worker_the_same_number_of_chunks() -> None:
    assert balanced_chunk_bytes(40 * MiB, 64 * MiB, 2) == 20 * MiB  # 2 chunks, not 1
    assert balanced_chunk_bytes(1347 * MiB, 64 * MiB, 2) * 22 >= 1347 * MiB  # 22, not 21


def _facts(chunk: int, data_type: str, position: int, error: TaskError | None = None) -> ChunkFacts:
    column = ColumnFact((chunk, position, 1), data_type, False, True, "v")
    return ChunkFacts(chunk, 0, {}, {}, {("items", "v"): column}, {}, (), 0, 0, error)


def test_a_chunk_whose_guess_an_earlier_chunk_overturns_is_rerun_with_that_type() -> None:
    assert to_rerun([_facts(0, "bigint", 1), _facts(1, "bigint", 1)]) == {}
    assert to_rerun([_facts(0, "bigint", 1), _facts(1, "text", 1)]) == {
        1: {"items": {"v": "bigint"}}
    }
    # after the first malformed line, no chunk is re-run: the package fails there
    bad = TaskError("bad_record", line=1)
    assert to_rerun([_facts(0, "bigint", 1, bad), _facts(1, "text", 1)]) == {}


def test_random_row_keys_are_dlt_shaped_and_never_repeat_across_a_fork() -> None:
    """Root keys come from a block of random bytes; a forked worker must not reuse its
    parent's block (two workers would then write the same ``_dlt_id``)."""
    import base64
    import os

    from loadstone.plugins.normalizers.relational.row_keys import new_random_id

    parent_first = new_random_id()
    assert len(parent_first) == 14 and len(base64.b64decode(parent_first + "==")) == 10
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its keys, then exit without pytest's teardown
        os.write(write, " ".join(new_random_id() for _ in range(100)).encode())
        os._exit(0)
    os.waitpid(pid, 0)
    os.close(write)
    child = set(os.read(read, 1 << 16).decode().split())
    os.close(read)
    parent = {new_random_id() for _ in range(100)}
    assert len(child) == 100 and len(parent) == 100
    assert not child & parent


@pytest.mark.parametrize(
    "number",
    [
        2488492511346206687,  # a 19-digit id: orjson keeps it
        2**63 - 1,
        2**64 - 1,  # orjson's largest exact int: the json module reads it all the same
        2**64,  # beyond: orjson would make it a float
        10**25,
        -(2**63),
        -(2**63) - 1,
        -(10**19),
    ],
)
@pytest.mark.parametrize("native", [False, True])
def test_a_long_integer_is_read_exactly(number: int, native: bool) -> None:
    from loadstone.plugins.normalizers.relational import _speedups, json_lines

    scan = _speedups.scan_line if native else json_lines.scan_line
    line = f'{{"id": {number}, "n": [{number}], "f": {number}.5}}'.encode()
    item = json_lines.parse_line(memoryview(line), scan)
    assert item["id"] == number and type(item["id"]) is int
    assert item["n"] == [number]
