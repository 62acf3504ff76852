"""The engine's C hot path (``_speedups``), when it is built, and the shape it has.

Each function of ``_speedups.c`` is the fast path of a Python loop of the engine, which stays
the reference (``normalize.native = false`` runs it). :class:`NativeLoops` names what the
engine calls, so the modules that use the C loops are typed by it, not by ``ModuleType``.
"""

from __future__ import annotations

from collections.abc import Callable
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

    def scatter(self, rows: list[int], values: list[TDataItem], n: int, /) -> list[TDataItem]: ...

    def text_buffers(
        self, rows: list[int] | None, values: list[TDataItem], n: int, /
    ) -> tuple[bytes | None, bytes, bytearray] | None: ...

    def fixed_buffers(
        self, rows: list[int] | None, values: list[TDataItem], n: int, kind: int, /
    ) -> tuple[bytes | None, bytes] | None: ...

    def scan_line(self, raw: bytes | memoryview, /) -> tuple[int, int, bool, bool]: ...

    def keep_arenas(self, limit_bytes: int, /) -> None: ...

    def release_cells(self, columns: dict[str, Cell], /) -> None: ...

    def new_row(self, width: int, /) -> dict[str, TDataItem]: ...


def native_loops(enabled: bool) -> NativeLoops | None:
    """The C loops when ``enabled`` and built; None runs the Python reference loops."""
    return _speedups if enabled else None
