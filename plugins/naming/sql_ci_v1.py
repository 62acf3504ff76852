"""sql_ci_v1: sql_cs_v1 lower-cased, hence case-insensitive.

Lower-casing happens after shortening (the tag is lower case already), as in dlt.
"""

from __future__ import annotations

from loadstone.hookspecs import hookimpl
from loadstone.naming import NamingConvention as BaseNamingConvention
from loadstone.plugins.naming.sql_cs_v1 import NamingConvention as SqlCsNamingConvention

__all__ = ["NamingConvention", "loadstone_naming_convention"]


class NamingConvention(SqlCsNamingConvention):
    """Lower-case SQL-safe identifiers."""

    @property
    def is_case_sensitive(self) -> bool:
        return False

    def normalize_identifier(self, identifier: str) -> str:
        return super().normalize_identifier(identifier).lower()


@hookimpl
def loadstone_naming_convention() -> type[BaseNamingConvention]:
    return NamingConvention
