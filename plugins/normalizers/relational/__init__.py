"""The relational normalizer plugin: nested JSON -> root and nested tables, on Spark.

Registered through the entry point ``relational`` in group ``loadstone.normalizers``; the
hook returns a :class:`RelationalNormalizer` (see ``loadstone.normalizers.contract`` for the contract).
"""

from __future__ import annotations

from loadstone import config
from loadstone.hookspecs import hookimpl
from loadstone.plugins.normalizers.relational.normalizer import (
    DEFAULT_CHUNK_BYTES,
    RelationalNormalizer,
)

__all__ = ["RelationalNormalizer", "loadstone_normalizer"]


@hookimpl
def loadstone_normalizer() -> RelationalNormalizer:
    """The relational normalizer; ``normalize.chunk_bytes`` sizes its chunks (64 MiB)."""
    return RelationalNormalizer(
        chunk_bytes=config.get_size("normalize.chunk_bytes", DEFAULT_CHUNK_BYTES)
    )
