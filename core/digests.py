"""dlt's two digests, in one place: base64 of a SHAKE-128 digest (unpadded) and of a SHA3-256
digest. Schema version hashes, the default pipeline salt, identifier tags, incremental
deduplication hashes and ``loadstone.common.utils`` all give dlt 1.31's values through them.
"""

from __future__ import annotations

import base64
import hashlib

__all__ = ["digest128", "digest256"]


def digest128(value: str | bytes, length: int = 15) -> str:
    """A ``length``-byte SHAKE-128 digest of ``value`` (text as UTF-8), base64 unpadded."""
    data = value.encode("utf-8") if isinstance(value, str) else value
    return base64.b64encode(hashlib.shake_128(data).digest(length)).decode("ascii").rstrip("=")


def digest256(value: str | bytes) -> str:
    """The SHA3-256 digest of ``value`` (text as UTF-8), base64."""
    data = value.encode("utf-8") if isinstance(value, str) else value
    return base64.b64encode(hashlib.sha3_256(data).digest()).decode("ascii")
