"""The relational normalizer plugin: nested JSON -> root and nested tables, on Spark.

Registered through the entry point ``relational`` in group ``loadstone.normalizers``; the
hook returns a :class:`RelationalNormalizer` (see ``loadstone.normalize.contract`` for the contract).
"""

from __future__ import annotations

from loadstone.hookspecs import hookimpl
from loadstone.plugins.normalizers.relational.normalizer import RelationalNormalizer

__all__ = ["RelationalNormalizer", "loadstone_normalizer"]


@hookimpl
def loadstone_normalizer() -> RelationalNormalizer:
    """The relational normalizer with default chunking."""
    return RelationalNormalizer()
