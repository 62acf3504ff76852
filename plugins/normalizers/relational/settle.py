"""Settling a package's chunks: re-run the ones that guessed a type wrong, then judge failures.

Chunks run in parallel, each typing a new column by its own first value; the package's
output must equal a sequential run's, where the globally first value types it. So the
driver compares the chunks' facts (:mod:`.facts`), re-runs the chunks whose guesses were
overturned with the decided types, and only then lets the first failure that remains speak
as the user's exception.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from loadstone.exceptions import (
    BadRecordError,
    CannotCoerceNullException,
    ContractViolation,
    NormalizeError,
    ValueDoesNotFit,
)
from loadstone.plugins.normalizers.relational.chunk_plan import chunk_first_lines
from loadstone.plugins.normalizers.relational.facts import (
    ChunkFacts,
    Decisions,
    Forced,
    TaskError,
    decide,
    forced_types,
    misguessed,
)
from loadstone.plugins.normalizers.relational.task import Chunk

#: runs chunks with the types each must use (chunk index -> forced types) in a round
RunChunks = Callable[[list[Chunk], Mapping[int, Forced], int], list[ChunkFacts]]


def settle(
    run: RunChunks, chunks: list[Chunk], facts: list[ChunkFacts]
) -> tuple[list[ChunkFacts], int]:
    """Re-run chunks until their output is the sequential one; returns facts and re-runs.

    A chunk types a column it meets first by its own first value. Where an earlier chunk
    met the column first, that guess is overturned, and everything the chunk did with it
    may differ: its values' columns, and its contract failures (a ``freeze`` judged by
    the wrong type fails where a sequential run passes, or passes where it fails). So:

    * the earliest failure counts only when every chunk before it guessed right; the
      chunks before it finished, so their facts give the global types of all they saw;
    * the failed chunk itself stopped early: it is judged, and re-run, only with the
      types of columns that chunks before it met first (it meets its own first);
    * with no failure, every chunk that guessed wrong runs again with the global types.

    A re-run is forced to exact types, so each round makes the chunks it re-runs exact;
    the loop ends when a round finds nothing to re-run.
    """
    by_chunk = {fact.chunk: fact for fact in facts}
    rerun: set[int] = set()
    for _round in range(len(chunks) + 1):
        ordered = [by_chunk[i] for i in sorted(by_chunk)]
        todo = to_rerun(ordered)
        if not todo:
            return ordered, len(rerun)
        for index in todo:
            for paths in by_chunk[index].files.values():
                for path in paths:
                    Path(path).unlink(missing_ok=True)
        for fact in run([chunks[i] for i in sorted(todo)], todo, 1):
            by_chunk[fact.chunk] = fact
        rerun.update(todo)
    # each round makes the chunks it re-runs exact, so this is never reached
    raise NormalizeError("normalizing did not settle on one type per column")


def to_rerun(ordered: list[ChunkFacts]) -> dict[int, Forced]:
    """Chunk index -> the types its re-run must use (see :func:`settle`)."""
    failed = [f.chunk for f in ordered if f.error is not None]
    first_failed = failed[0] if failed else None
    decisions = decide(ordered)
    todo: dict[int, Forced] = {}
    for fact in ordered:
        known: Decisions = decisions
        if fact.chunk == first_failed:
            assert fact.error is not None
            if fact.error.kind != "contract":
                break  # a malformed line is no matter of types
            known = {k: d for k, d in decisions.items() if d.first[0] < fact.chunk}
        if misguessed(fact, known):
            todo[fact.chunk] = forced_types(known)
        if fact.chunk == first_failed:
            break
    return todo


def raise_failures(
    facts: Sequence[ChunkFacts], chunks: Sequence[Chunk], schema_name: str | None = None
) -> None:
    """The first settled chunk's failure, as the exception users catch for it."""
    failures = sorted((f for f in facts if f.error is not None), key=lambda f: f.chunk)
    if not failures:
        return
    fact = failures[0]
    error = fact.error
    assert error is not None
    if error.kind == "contract":
        assert error.table is not None and error.entity is not None  # set by the engine
        raise ContractViolation(
            schema_name=schema_name,
            table=error.table,
            column=error.column,
            entity=error.entity,
            mode=error.mode,
            value=error.value,
            data_item=None if error.row is None else dict(error.row),
        )
    if error.kind == "not_null":
        assert error.table is not None and error.column is not None  # set by the engine
        raise CannotCoerceNullException(schema_name, error.table, error.column)
    raise _line_failure(error, chunks[fact.chunk], chunks)


def _line_failure(error: TaskError, chunk: Chunk, chunks: Sequence[Chunk]) -> Exception:
    """A bad line, a value that does not fit or a bug, named by file and line (the file's own
    line number)."""
    first = chunk_first_lines([c for c in chunks if c.path == chunk.path])[chunk.index]
    line = first + (error.line or 1) - 1
    if error.kind == "bad_record":
        return BadRecordError(chunk.display, line, error.message)
    if error.kind == "does_not_fit":
        assert error.table and error.column and error.column_type  # set by the engine
        assert error.value is not None
        where = f"{chunk.display} line {line}"
        return ValueDoesNotFit(
            error.table, error.column, error.value, error.column_type, error.message, where
        )
    cause = _first_line(error.message)
    near = "" if "disk full" in cause else f" near line {line}"
    failure = NormalizeError(f"normalizing {chunk.display} failed{near}: {cause}")
    failure.details = error.traceback  # for a bug report; not shown to users
    return failure


def _first_line(message: str) -> str:
    """An error's one-line cause (a disk full while writing Parquet says so in plain words)."""
    if "No space left on device" in message:
        return "no space left on the device (disk full) while writing normalized files"
    lines = message.strip().splitlines()
    return lines[0] if lines else message
