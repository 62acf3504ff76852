"""The engine's C hot path (``_speedups``), when it is built, and the shape it has.

Each function of ``_speedups.c`` is the fast path of a Python loop of the engine, which stays
the reference (``normalize.native = false`` runs it). :class:`NativeLoops` names what the
engine calls, so the modules that use the C loops are typed by it, not by ``ModuleType``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from loadstone.typing import TDataItem

try:
    import loadstone.plugins.normalizers.relational._speedups as _speedups
except ImportError:  # built without a C compiler: the pure-Python reference runs instead
    _speedups = None  # type: ignore[assignment]  # no C compiler: Python loops run

#: whether the C hot path is importable here (the test suite requires it)
NATIVE_AVAILABLE = _speedups is not None
#: the C path's marker of a timestamp column (ISO text of the common shapes goes straight in)
ISO_TIMESTAMP_TEXT: object | None = None if _speedups is None else _speedups.ISO_TIMESTAMP_TEXT

#: source key -> (normalized key path, column name), per flatten prefix
PrefixNames = dict[tuple[str, ...], dict[str, tuple[tuple[str, ...], str]]]
#: lists an item holds, set aside for their nested tables: (key path, list, nesting depth)
Pending = list[tuple[tuple[str, ...], list[TDataItem], int]]
#: a column of a table buffer: the row numbers that have a value, and those values. Columns
#: are sparse (a wide table's rows fill few of its columns), so nulls are not stored
Cell = tuple[list[int], list[TDataItem]]
#: what ``fill`` returns: the visit counter when the row is placed, or the value it hands
#: back to Python: (dict position to resume from, column, value, visit counter)
FillStep = int | tuple[int, str, TDataItem, int]
#: what ``nested_rows`` needs of one nested list (``rows.RowFlattener._context`` builds it):
#: column types by table, the table, the table buffers, the table's fast-path types, the
#: flatten names and naming callback, the list's depth and max nesting, the root and parent
#: keys, the row-key text prefix, the row-key digest, the flush size, and the names of
#: ``_dlt_root_id``, ``_dlt_parent_id``, ``_dlt_list_idx``, ``_dlt_id`` and a scalar's ``value``
NestedContext = tuple[
    dict[str, dict[str, str]],
    str,
    Mapping[str, object],
    dict[str, object],
    PrefixNames,
    Callable[[dict[str, tuple[tuple[str, ...], str]], tuple[str, ...], str], object],
    int,
    int,
    str | None,
    str,
    str,
    Callable[[str], str],
    int,
    tuple[str, str, str, str, str],
]
#: where ``nested_rows`` hands back: (kind, element index, visit counter, row, its nested
#: lists, its key, fill's hand-back); kind 0 the element (a list) is Python's, 1 a value of its row
#: is, 2 the row is placed and its nested lists or a flush are Python's
NestedStep = int | tuple[int, int, int, dict[str, TDataItem], Pending, str, FillStep]


class NativeLoops(Protocol):
    """What the engine calls of ``_speedups`` (see ``_speedups.pyi`` for each one's job)."""

    ISO_TIMESTAMP_TEXT: object

    def flatten(
        self,
        prefix_names: PrefixNames,
        name_of: Callable[[dict[str, tuple[tuple[str, ...], str]], tuple[str, ...], str], object],
        data: dict[str, TDataItem],
        prefix: tuple[str, ...],
        depth: int,
        max_nesting: int,
        out: dict[str, TDataItem],
        table_types: dict[str, str] | None,
        pending: Pending,
        /,
    ) -> None: ...

    def fill(
        self,
        raw: dict[str, TDataItem],
        exact: dict[str, object],
        columns: dict[str, Cell],
        n: int,
        pos: int,
        seq: int,
        /,
    ) -> int | tuple[int, str, TDataItem, int]: ...

    def nested_rows(
        self, seq: list[TDataItem], start: int, context: NestedContext, visit: int, /
    ) -> NestedStep: ...

    def scatter(self, rows: list[int], values: list[TDataItem], n: int, /) -> list[TDataItem]: ...

    def text_buffers(
        self, rows: list[int] | None, values: list[TDataItem], n: int, /
    ) -> tuple[bytes | None, bytes, bytes] | None: ...

    def fixed_buffers(
        self, rows: list[int] | None, values: list[TDataItem], n: int, kind: int, /
    ) -> tuple[bytes | None, bytes] | None: ...

    def scan_line(self, raw: bytes | memoryview, /) -> tuple[int, int, bool, bool]: ...


def native_loops(enabled: bool) -> NativeLoops | None:
    """The C loops when ``enabled`` and built; None runs the Python reference loops."""
    return _speedups if enabled else None
