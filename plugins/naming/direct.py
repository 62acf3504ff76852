"""direct: keeps identifiers almost as given (case-sensitive, any Unicode).

Only characters that break quoting or paths are replaced: newline, carriage return, both
quotes and ``▶``, which is this convention's path separator (``__`` is an ordinary part of a
name here, so underscores are never collapsed).
"""

from __future__ import annotations

from functools import lru_cache

from loadstone.hookspecs import hookimpl
from loadstone.naming import NamingConvention as BaseNamingConvention

__all__ = ["NamingConvention", "loadstone_naming_convention", "normalize_direct"]

_REPLACE = str.maketrans({"\n": "_", "\r": "_", "'": "_", '"': "_", "▶": "_"})


@lru_cache(maxsize=16384)
def normalize_direct(identifier: str) -> str:
    """The direct rule on one stripped, non-empty identifier (without shortening)."""
    return identifier.translate(_REPLACE)


class NamingConvention(BaseNamingConvention):
    """Identifiers as given, minus characters that break quoting; separator ``▶``."""

    PATH_SEPARATOR = "▶"

    @property
    def is_case_sensitive(self) -> bool:
        return True

    def normalize_identifier(self, identifier: str) -> str:
        identifier = super().normalize_identifier(identifier)
        return self.shorten_identifier(normalize_direct(identifier), identifier, self.max_length)


@hookimpl
def loadstone_naming_convention() -> type[BaseNamingConvention]:
    return NamingConvention
