"""duck_case: case-sensitive, keeps all Unicode (emoji too), as DuckDB allows.

Only newline, carriage return and ``"`` are replaced; runs of ``_`` are collapsed.
"""

from __future__ import annotations

import re
from functools import lru_cache

from loadstone.hookspecs import hookimpl
from loadstone.naming import NamingConvention as BaseNamingConvention

__all__ = ["NamingConvention", "loadstone_naming_convention", "normalize_duck_case"]

_REPLACE = str.maketrans({"\n": "_", "\r": "_", '"': "_"})
_UNDERSCORE_RUN = re.compile(r"__+")


@lru_cache(maxsize=16384)
def normalize_duck_case(identifier: str) -> str:
    """The duck_case rule on one stripped, non-empty identifier (without shortening)."""
    return _UNDERSCORE_RUN.sub("_", identifier.translate(_REPLACE))


class NamingConvention(BaseNamingConvention):
    """Case-sensitive identifiers with any Unicode; separator ``__``."""

    @property
    def is_case_sensitive(self) -> bool:
        return True

    def normalize_identifier(self, identifier: str) -> str:
        identifier = super().normalize_identifier(identifier)
        return self.shorten_identifier(normalize_duck_case(identifier), identifier, self.max_length)


@hookimpl
def loadstone_naming_convention() -> type[BaseNamingConvention]:
    return NamingConvention
