"""Types of the native engine core ``_native_core`` (``_native_core.cpp``): a chunk's JSON
lines parsed by simdjson into per-table Arrow buffers; :mod:`.native_core` drives it."""

from typing import Any

class NativeFallback(ValueError):
    """The core gives the chunk back; the message is the one-line reason."""

def run_chunk(
    data: bytes | bytearray,
    size: int,
    hooks: Any,
    load_id: str,
    root: str,
    chunk_index: int,
    max_nesting: int,
    flush_rows: int,
    propagate_root_key: bool,
    /,
) -> list[tuple[str, int, list[Any]]]:
    """The first ``size`` bytes of ``data`` (JSON lines) as the flushes of their tables, in
    order: (table, rows, [(column, validity or None, *buffers)]); ``hooks`` is a
    :class:`~.native_core.NativeHooks`. Raises :class:`NativeFallback` naming what it does
    not do exactly."""

def parse_lines(data: bytes | bytearray, /) -> int:
    """simdjson over every line of ``data``, nothing built: the documents parsed."""

def shake_key(text: str, /) -> str:
    """``row_keys.digest_id(text)``, computed in C++ (the core's nested row keys)."""
