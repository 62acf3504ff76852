"""Types of the C extension ``_speedups`` (``_speedups.c``): the engine's per-value hot path.

Each function is the fast path of a Python loop of the engine (``rows.py``, ``row_typing.py``,
``table_buffers.py``, ``json_lines.py``), which stays the reference; :mod:`.native` types
what the engine calls.
"""

from typing import Any

#: marker in ``exact[column]`` for a timestamp column: ISO text of the common UTC shapes
#: goes straight in, anything else back to Python's coercion
ISO_TIMESTAMP_TEXT: object

def flatten(
    prefix_names: dict[tuple[str, ...], dict[str, tuple[tuple[str, ...], str]]],
    name_of: Any,
    data: dict[str, Any],
    prefix: tuple[str, ...],
    depth: int,
    max_nesting: int,
    out: dict[str, Any],
    table_types: dict[str, str] | None,
    pending: list[tuple[tuple[str, ...], list[Any], int]],
    /,
) -> None:
    """``rows.RowFlattener.flatten``: one item's keys as columns, lists set aside."""

def fill(
    raw: dict[str, Any],
    exact: dict[str, Any],
    columns: dict[str, tuple[list[int], list[Any]]],
    n: int,
    pos: int,
    seq: int,
    /,
) -> int | tuple[int, str, Any, int]:
    """Place the values whose type is the column's; returns the visit count, or
    ``(position, column, value, visit count)`` of a value Python must place."""

def scatter(rows: list[int], values: list[Any], n: int, /) -> list[Any]:
    """A sparse column as a list ``n`` rows long (None where unset)."""

def text_buffers(
    rows: list[int] | None, values: list[Any], n: int, /
) -> tuple[bytes | None, bytes, bytearray] | None:
    """Arrow string buffers (validity, offsets, data) of a text column, or None when a value
    is not a str."""

def fixed_buffers(
    rows: list[int] | None, values: list[Any], n: int, kind: int, /
) -> tuple[bytes | None, bytes] | None:
    """Arrow buffers (validity, data) of an int64 (0), float64 (1), bool (2) or UTC
    timestamp[us] (3) column; None when a value is not of that kind."""

def scan_line(raw: bytes | memoryview, /) -> tuple[int, int, bool, bool]:
    """``json_lines.scan_line`` in one pass: brackets, ``":`` pairs, long integer, type mark."""

def keep_arenas(limit_bytes: int, /) -> None:
    """From now on keep up to ``limit_bytes`` of the arenas pymalloc frees, for its next
    ones (``worker_memory``: a pool worker's next chunk reuses resident pages)."""

def release_cells(columns: dict[str, Any], /) -> None:
    """Empty the lists of each ``(rows, values)`` cell, freeing the values (a flushed table's
    buffer), as ``list.clear()`` would but fetching the objects a few values ahead."""

def new_row(width: int, /) -> dict[str, Any]:
    """An empty dict with room for ``width`` keys (``rows.RowFlattener._new_row``)."""
