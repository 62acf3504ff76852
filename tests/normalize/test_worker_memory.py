"""What a pool worker keeps between chunks (the read buffer, freed arenas) never shows in
the lines or rows of the next chunk."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from loadstone.plugins.normalizers.relational import json_lines
from loadstone.plugins.normalizers.relational.task import Chunk
from loadstone.plugins.normalizers.relational.worker_memory import ReadBuffers


def _chunk(path: Path, start: int, end: int) -> Chunk:
    return Chunk(0, 0, str(path), "t", start, end, path.name)


def _lines(chunk: Chunk) -> list[bytes]:
    return [bytes(line) for _, line in json_lines.iter_lines(chunk)]


@settings(max_examples=settings.default.max_examples * 3 // 5, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 300), min_size=2, max_size=6),
    fill=st.sampled_from([b"a", b"\n", b'{"k": 1}\n']),
)
def test_a_reused_read_buffer_gives_each_chunk_only_its_own_bytes(
    tmp_path_factory: object, sizes: list[int], fill: bytes
) -> None:
    folder = tmp_path_factory.mktemp("chunks")  # type: ignore[attr-defined]  # pytest's factory
    buffers = ReadBuffers()
    buffers.keep = True
    original = json_lines.READ_BUFFERS
    json_lines.READ_BUFFERS = buffers
    try:
        for index, size in enumerate(sizes):  # each chunk smaller or larger than the last
            path = folder / f"f{index}.jsonl"
            body = (fill * (size // len(fill) + 1))[:size]
            path.write_bytes(b"x" * 7 + body + b"tail")
            assert _lines(_chunk(path, 7, 7 + size)) == body.split(b"\n")
    finally:
        json_lines.READ_BUFFERS = original


def test_a_buffer_is_kept_only_where_keeping_is_on(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(b'{"a": 1}\n{"a": 2}\n')
    buffers = ReadBuffers()
    with path.open("rb") as handle:
        data, size = buffers.read(handle, 9)
    assert (bytes(data), size) == (b'{"a": 1}\n', 9) and isinstance(data, bytes)
    buffers.keep = True
    with path.open("rb") as handle:
        first, _ = buffers.read(handle, 18)
    buffers.give_back(first)
    with path.open("rb") as handle:
        second, size = buffers.read(handle, 9)
    assert second is first and bytes(second[:size]) == b'{"a": 1}\n'


def test_a_file_shorter_than_its_chunk_gives_the_lines_it_has(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(b'{"a": 1}\n{"a": 2}')
    buffers = ReadBuffers()
    buffers.keep = True
    with path.open("rb") as handle:
        data, size = buffers.read(handle, 100)
    assert bytes(data[:size]) == b'{"a": 1}\n{"a": 2}'


def _churn_with_kept_arenas(queue: multiprocessing.Queue[object]) -> None:
    from loadstone.plugins.normalizers.relational import _speedups

    _speedups.keep_arenas(64 << 20)
    results = []
    for round_ in range(4):  # each round frees its objects for the next to reuse
        texts = [str(i) * 3 for i in range(200_000)]
        pairs = [[i, round_] for i in range(200_000)]
        results.append(sum(int(text[: len(text) // 3]) for text in texts) + pairs[-1][1])
        del texts, pairs
    queue.put(results)


def test_objects_built_in_kept_arenas_are_whole() -> None:
    """The C arena cache changes this process's allocator: run it in a child of its own."""
    context = multiprocessing.get_context("fork")
    queue: multiprocessing.Queue[object] = context.Queue()
    child = context.Process(target=_churn_with_kept_arenas, args=(queue,))
    child.start()
    results = queue.get(timeout=60)
    child.join(timeout=60)
    assert child.exitcode == 0
    assert results == [sum(range(200_000)) + round_ for round_ in range(4)]
