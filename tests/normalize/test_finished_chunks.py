"""Which chunks' files a load may take while later chunks run (``finished_chunks.py``): the
unbroken first-round prefix whose column guesses hold; settle never rewrites those files."""

from __future__ import annotations

import attrs

from loadstone.destinations.overlap import FinishedFiles
from loadstone.plugins.normalizers.relational.facts import (
    ChunkFacts,
    ColumnFact,
    TableFact,
    TaskError,
)
from loadstone.plugins.normalizers.relational.finished_chunks import FinishedChunks
from loadstone.schema import Schema


def chunk(index: int, id_type: str = "bigint", error: TaskError | None = None) -> ChunkFacts:
    """Chunk ``index``: the table ``t`` with its column ``id`` typed by its own first value."""
    return ChunkFacts(
        chunk=index,
        attempt=0,
        tables={"t": TableFact((index, 0, 0), None, 10)},
        table_sources={"t": "t"},
        columns={("t", "id"): ColumnFact((index, 0, 1), id_type, False, True, "id")},
        files={"t": (f"/out/t/c{index}.parquet",)},
        bad=(),
        bad_count=0,
        discarded_rows=0,
        error=error,
    )


def reported(*facts: ChunkFacts) -> list[str]:
    heard: list[FinishedFiles] = []
    finished = FinishedChunks(Schema("s"), {}, heard.append)
    for fact in facts:
        finished.chunk_done(fact)
    return [path.name for files in heard for paths in files.tables.values() for path in paths]


def test_chunks_are_reported_in_order_as_they_finish() -> None:
    assert reported(chunk(0), chunk(1), chunk(2)) == ["c0.parquet", "c1.parquet", "c2.parquet"]


def test_a_chunk_that_typed_a_column_otherwise_ends_the_reports() -> None:
    # chunk 1 met ``id`` first as text, chunk 0 had typed it bigint: settle re-runs chunk 1
    assert reported(chunk(0), chunk(1, "text"), chunk(2)) == ["c0.parquet"]


def test_a_failed_chunk_ends_the_reports() -> None:
    failed = chunk(1, error=TaskError("contract", line=3))
    assert reported(chunk(0), failed, chunk(2)) == ["c0.parquet"]


def test_a_rerun_is_never_reported() -> None:
    rerun = attrs.evolve(chunk(0), attempt=1)
    assert reported(rerun) == []
