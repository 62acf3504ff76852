"""sql_cs_v1: case-sensitive, SQL-safe identifiers (``[a-zA-Z0-9_]``, casing kept)."""

from __future__ import annotations

import re
from functools import lru_cache

from loadstone.hookspecs import hookimpl
from loadstone.naming import NamingConvention as BaseNamingConvention

__all__ = ["NamingConvention", "loadstone_naming_convention", "normalize_sql_cs"]

# \d: Unicode decimal digits (``٣``, ``１``) are kept, as dlt does; other non-ASCII goes
_NOT_ALLOWED = re.compile(r"[^a-zA-Z\d_]+")
_LEADING_DIGIT = re.compile(r"^\d")
_TRAILING_UNDERSCORES = re.compile(r"_+$")
_UNDERSCORE_RUN = re.compile(r"__+")


@lru_cache(maxsize=16384)
def normalize_sql_cs(identifier: str) -> str:
    """The sql_cs_v1 rule on one stripped, non-empty identifier (without shortening).

    Note that an identifier made only of two or more underscores normalizes to ``""``.
    """
    text = _NOT_ALLOWED.sub("_", identifier)
    if _LEADING_DIGIT.match(text):
        text = "_" + text
    if text != "_":
        text = _TRAILING_UNDERSCORES.sub("", text)
    return _UNDERSCORE_RUN.sub("_", text)


class NamingConvention(BaseNamingConvention):
    """Case-sensitive SQL-safe identifiers: other characters become ``_``."""

    @property
    def is_case_sensitive(self) -> bool:
        return True

    def normalize_identifier(self, identifier: str) -> str:
        identifier = super().normalize_identifier(identifier)
        return self.shorten_identifier(normalize_sql_cs(identifier), identifier, self.max_length)


@hookimpl
def loadstone_naming_convention() -> type[BaseNamingConvention]:
    return NamingConvention
