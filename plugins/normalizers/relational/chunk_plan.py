"""The chunks of a package: byte ranges of its extracted files, aligned to line ends.

A plain file larger than the chunk size is split so that the workers finish together; a
``.gz`` file is one chunk (it cannot be entered in the middle). Line numbers of a chunk
are relative to its start; :func:`chunk_first_lines` turns them into the file's own when an
error or a quarantined line must be named.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from loadstone.normalizers.contract import ExtractedInput
from loadstone.plugins.normalizers.relational.task import Chunk

if TYPE_CHECKING:
    from loadstone.storage.package_storage import RemoteData

#: Plain files are cut into chunks of at most this size. Fewer, larger chunks mean fewer and
#: larger Parquet files for the load: DuckDB inserted 100k GitHub events 0.2 s faster from
#: 22 files of about 4,700 rows than from 42 of 2,400 (a row group's last, partial vector
#: costs DuckDB nearly a full one), with the same normalize time and peak memory.
DEFAULT_CHUNK_BYTES = 64 * 1024 * 1024
#: A plain file larger than this is split across the workers even when it fits one chunk:
#: two workers beat one chunk normalized in the driver.
SPLIT_BYTES = 32 * 1024 * 1024


def balanced_chunk_bytes(size: int, chunk_bytes: int, workers: int) -> int:
    """At most ``chunk_bytes`` per chunk, in a number of chunks that ``workers`` divides.

    Chunks are handed out in order and cost about the same per byte, so with a multiple of
    the workers they all finish together: 269 MB in 32 MiB chunks is 8 full chunks and a
    small one, which leaves one core idle for most of a chunk at the end; 10 chunks of
    27 MB do not. With one worker the chunks are ``chunk_bytes``.
    """
    if workers < 2:
        return chunk_bytes
    count = -(-size // chunk_bytes)
    count = -(-count // workers) * workers
    return -(-size // count)


def stays_whole(path: str, size: int, chunk_bytes: int, workers: int) -> bool:
    """Whether a file is one chunk: gzipped (it cannot be entered in the middle), or small
    enough for one chunk and, with several workers, for one worker (:data:`SPLIT_BYTES`)."""
    if path.endswith(".gz") or size <= min(chunk_bytes, SPLIT_BYTES):
        return True
    return workers < 2 and size <= chunk_bytes


def plan_chunks(
    files: Sequence[ExtractedInput],
    chunk_bytes: int,
    workers: int = 1,
    remote: RemoteData | None = None,
) -> list[Chunk]:
    """Chunks of the extracted files, in source order (file, then byte offset).

    A file that is not one chunk (:func:`stays_whole`) is split evenly for ``workers`` (see
    :func:`balanced_chunk_bytes`): the local worker processes, or on a cluster the
    executors loadstone waits for (:func:`.settings.cluster_slots`).
    ``remote``: the files are objects of that storage.
    """
    chunks: list[Chunk] = []
    for file_index, extracted in enumerate(files):
        path = str(extracted.path)
        display = extracted.source or path
        first_line = extracted.first_line
        size = file_size(path, remote)
        if stays_whole(path, size, chunk_bytes, workers):
            chunks.append(
                Chunk(
                    len(chunks), file_index, path, extracted.table_name, 0, -1, display, first_line
                )
            )
            continue
        step = balanced_chunk_bytes(size, chunk_bytes, workers)
        for start, end in _line_aligned_ranges(path, size, step, remote):
            chunk = Chunk(
                len(chunks), file_index, path, extracted.table_name, start, end, display, first_line
            )
            chunks.append(chunk)
    return chunks


def _line_aligned_ranges(
    path: str, size: int, step: int, remote: RemoteData | None
) -> list[tuple[int, int]]:
    """(start, end) byte ranges of about ``step`` bytes, each ending after a newline."""
    ranges: list[tuple[int, int]] = []
    start = 0
    with open(path, "rb") if remote is None else remote.open_read(path) as handle:
        while start < size:
            target = start + step
            if target >= size:
                end = size
            else:
                handle.seek(target)
                handle.readline()
                end = min(handle.tell(), size)
            ranges.append((start, end))
            start = end
    return ranges


def file_size(path: str, remote: RemoteData | None = None) -> int:
    """The size of an extracted file, here or on the object store (failures as OSError)."""
    try:
        return os.path.getsize(path) if remote is None else int(remote.size(path))
    except OSError:
        raise
    except Exception as exc:  # botocore / aiohttp: the storage, named
        if remote is None:
            raise
        raise OSError(remote.storage_error("read", path, exc)) from exc


def chunk_size(chunk: Chunk, remote: RemoteData | None = None) -> int:
    """About the bytes of JSON a chunk holds (a ``.gz`` counts five times its size)."""
    if chunk.end >= 0:
        return chunk.end - chunk.start
    size = file_size(chunk.path, remote)
    return size * 5 if chunk.path.endswith(".gz") else size


def chunk_first_lines(chunks: Sequence[Chunk]) -> dict[int, int]:
    """Absolute line number of each chunk's first line (only computed when needed)."""
    result: dict[int, int] = {}
    by_file: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        by_file.setdefault(chunk.path, []).append(chunk)
    for path, parts in by_file.items():
        line = parts[0].first_line
        if len(parts) == 1:
            result[parts[0].index] = line
            continue
        with open(path, "rb") as handle:
            for chunk in parts:
                result[chunk.index] = line
                if chunk.end < 0:
                    break
                handle.seek(chunk.start)
                line += handle.read(chunk.end - chunk.start).count(b"\n")
    return result
