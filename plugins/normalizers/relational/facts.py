"""What a chunk task reports to the driver, and what the driver decides from it.

dlt's worker/orchestrator shape: a task (:func:`.engine.run_chunk`, in this process or a Spark
worker) normalizes its lines and reports *facts* (where each table and column first appeared
and with which type, rows, files, bad lines, the failure that stopped it); the driver
(:mod:`.normalizer`) decides each column's type from the globally first value and applies the
decisions to the :class:`~loadstone.schema.Schema` through its API. Rows never travel.

All values are small frozen attrs classes, picklable, keyed by ``(table, column)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import attrs

#: Where a value was met: (chunk index, line in the chunk, visit order within the line).
Position = tuple[int, int, int]
#: A normalized (table, column) pair.
ColumnKey = tuple[str, str]
#: Why a task stopped: a line that is not JSON, a frozen contract, a key without a value, a
#: value its column's type cannot hold exactly (``does_not_fit``), or a bug.
FailureKind = Literal["bad_record", "contract", "not_null", "does_not_fit", "internal"]


@attrs.frozen
class ColumnFact:
    """A column a chunk met: its first position there and the type the chunk gave it.

    ``local`` is True when the chunk typed the column by its own first value (not forced by
    the driver); ``source`` is the source key path the name came from (collision messages).
    """

    first: Position
    data_type: str
    variant: bool
    local: bool
    source: str


@attrs.frozen
class TableFact:
    """A table a chunk wrote to: first position, parent table, rows written."""

    first: Position
    parent: str | None
    rows: int


@attrs.frozen
class TaskError:
    """The failure that stopped a task, carried as data (never as a Spark exception).

    ``line`` is relative to the chunk; contract failures name table, column, entity, mode and
    the value's repr; internal failures carry the traceback text.
    """

    kind: FailureKind
    line: int | None = None
    message: str = ""
    table: str | None = None
    column: str | None = None
    entity: str | None = None
    mode: str = "freeze"
    value: str | None = None
    #: the type a value did not fit (``decimal(38,9)``), for ``does_not_fit``
    column_type: str | None = None
    traceback: str = ""
    #: the row a contract refused, as dlt's ``DataValidationError.data_item`` holds it
    row: Mapping[str, Any] | None = None


@attrs.frozen
class ChunkFacts:
    """Everything one run of one chunk reports."""

    chunk: int
    attempt: int
    tables: Mapping[str, TableFact]
    table_sources: Mapping[str, str]
    columns: Mapping[ColumnKey, ColumnFact]
    files: Mapping[str, tuple[str, ...]]
    #: quarantined lines: (line in the chunk, error, raw text)
    bad: tuple[tuple[int, str, str], ...]
    bad_count: int
    discarded_rows: int
    error: TaskError | None = None
    #: which engine core wrote the chunk: ``python``, ``native``, or ``python`` after the
    #: native core handed it back (``native fallback: <why>``) or never took it
    #: (``native skipped: <why>``)
    core: str = "python"

    @property
    def is_bad_record(self) -> bool:
        return self.error is not None and self.error.kind == "bad_record"


@attrs.frozen
class ColumnDecision:
    """The type of a column, from its globally first value (as a sequential run decides)."""

    first: Position
    data_type: str
    variant: bool
    source: str


#: The driver's decisions, per (table, column).
Decisions = Mapping[ColumnKey, ColumnDecision]
#: Types a re-run must use: table -> column -> data type.
Forced = Mapping[str, Mapping[str, str]]


def decide(facts: list[ChunkFacts] | tuple[ChunkFacts, ...]) -> dict[ColumnKey, ColumnDecision]:
    """(table, column) -> the decision of the globally first value among ``facts``."""
    decisions: dict[ColumnKey, ColumnDecision] = {}
    for fact in facts:
        for key, column in fact.columns.items():
            current = decisions.get(key)
            if current is None or column.first < current.first:
                decisions[key] = ColumnDecision(
                    column.first, column.data_type, column.variant, column.source
                )
    return decisions


def forced_types(decisions: Decisions) -> dict[str, dict[str, str]]:
    """The decided types of non-variant columns, as a re-run is forced to use them."""
    forced: dict[str, dict[str, str]] = {}
    for (table, column), decision in decisions.items():
        if not decision.variant:
            forced.setdefault(table, {})[column] = decision.data_type
    return forced


def misguessed(fact: ChunkFacts, decisions: Decisions) -> bool:
    """Whether the chunk typed a column itself otherwise than ``decisions`` do."""
    for key, column in fact.columns.items():
        if column.local and not column.variant:
            decision = decisions.get(key)
            if decision is not None and decision.data_type != column.data_type:
                return True
    return False
