"""What a pool worker keeps from one chunk to the next: the memory the last chunk freed.

A chunk of JSON lines becomes several times its bytes in Python objects (a dict per object,
a str per value, the column lists), all freed when its Parquet files are written. Given back
to the system, that memory comes back for the next chunk as fresh pages, each faulted in and
zeroed by the kernel, and the chunk's own bytes are read into a new 64 MiB buffer the same
way. On 100k GitHub events (22 chunks of 64 MiB on 2 workers) that was 1.6-1.7 of the
workers' 9.8-9.9 CPU seconds in the kernel; keeping both cut it to 0.7 s (workers' CPU
9.0 s, normalize 5.1 -> 4.7 s).

Only pool workers keep memory (:func:`keep_between_chunks`, called as a worker starts):
they exit with their pool, so what they keep is given back when the normalize step ends. A
worker keeps only memory it has used, so its peak is the same (1.13-1.16 GB for the run at
100k events, as before). A driver that runs chunks itself frees as before: it is the user's
process.
"""

from __future__ import annotations

from typing import IO

from loadstone.plugins.normalizers.relational.native import native_loops

#: freed pymalloc arenas a worker keeps for its next chunk, at most: above what a 64 MiB
#: chunk of API data frees (measured: 512 MiB kept left part of the kernel's work in place)
KEPT_ARENA_BYTES = 1 << 30


class ReadBuffers:
    """Buffers chunks are read into: reused where :attr:`keep` is set, else one per read."""

    def __init__(self) -> None:
        self.keep = False
        self._spare: bytearray | None = None  # the last chunk's buffer, free again

    def read(self, handle: IO[bytes], size: int | None) -> tuple[bytes | bytearray, int]:
        """``size`` bytes (None: to the end) of ``handle``: (a buffer, how many it holds).

        Give a reused buffer back with :meth:`give_back` once no line of it is in use.
        """
        readinto = getattr(handle, "readinto", None)  # a file object of a store may lack it
        if not self.keep or size is None or readinto is None:
            data = handle.read() if size is None else handle.read(size)
            return data, len(data)
        buffer, self._spare = self._spare, None
        if buffer is None or len(buffer) < size:
            buffer = bytearray(size)
        view = memoryview(buffer)
        got = 0
        while got < size:
            count = readinto(view[got:size])
            if not count:
                break  # the file ends early: the caller sees the lines it has
            got += count
        return buffer, got

    def give_back(self, buffer: bytes | bytearray) -> None:
        """A reused buffer is free for the next chunk (one is kept)."""
        if self.keep and isinstance(buffer, bytearray):
            self._spare = buffer


#: this process's read buffers (see :class:`ReadBuffers`)
READ_BUFFERS = ReadBuffers()


def keep_between_chunks() -> None:
    """From now on this process keeps freed arenas and its read buffer for the next chunk."""
    READ_BUFFERS.keep = True
    native = native_loops(True)
    if native is not None:
        native.keep_arenas(KEPT_ARENA_BYTES)
