"""``loadstone.common.utils``: the helpers of dlt's ``dlt.common.utils`` that pipelines use.

``digest128`` and ``digest256`` give dlt 1.31's values for the same text (base64 of SHAKE-128
and SHA3-256 digests), so keys a pipeline derives with them match the ones dlt made.
"""

from __future__ import annotations

import base64
import secrets

from loadstone import digests

__all__ = ["digest128", "digest256", "uniq_id", "uniq_id_base64"]


def uniq_id(len_: int = 16) -> str:
    """A random id: ``len_`` random bytes as hex."""
    return secrets.token_hex(len_)


def uniq_id_base64(len_: int = 16) -> str:
    """A random id: ``len_`` random bytes as base64, without padding."""
    return base64.b64encode(secrets.token_bytes(len_)).decode("ascii").rstrip("=")


def digest128(v: str, len_: int = 15) -> str:
    """A ``len_``-byte SHAKE-128 digest of ``v``, base64 without padding (dlt's)."""
    return digests.digest128(v, len_)


def digest256(v: str) -> str:
    """The SHA3-256 digest of ``v``, base64 (dlt's)."""
    return digests.digest256(v)
