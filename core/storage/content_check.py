"""A cheap check that a file read in place still holds what extract saw.

Size and modification time catch almost every change; a file rewritten with the same size
within the same mtime tick (a copy tool that keeps times, a fast rewrite on a coarse clock)
does not change them. Hashing the whole input would cost a read of every byte, the very copy
reading in place avoids, so the check hashes the first and last 64 KiB with the size: a
changed header, a cut or an append shows there. What it cannot see (the middle of an equal-size
file edited in place) is documented beside the promise.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

#: bytes hashed at each end of the file
EDGE = 64 * 1024
#: prefix of the recorded value, so a check from another rule is never mistaken for this one
PREFIX = "headtail:"


def head_tail_digest(path: Path | str) -> str:
    """``headtail:<sha1>`` of the size, the first and the last :data:`EDGE` bytes."""
    digest = hashlib.sha1()
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        digest.update(str(size).encode("ascii"))
        digest.update(handle.read(EDGE))
        if size > EDGE:
            handle.seek(max(EDGE, size - EDGE))
            digest.update(handle.read(EDGE))
    return PREFIX + digest.hexdigest()


def is_head_tail(value: str | None) -> bool:
    return bool(value) and str(value).startswith(PREFIX)
