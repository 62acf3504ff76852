"""s3_tables: snake_case within the S3 Tables naming rules.

Identifiers are at most 255 characters (the default ``max_length``; a larger one is an
error), and table names may not start with ``_``, so leading underscores are removed from
them: the system tables become ``dlt_loads``, ``dlt_version``, ...
"""

from __future__ import annotations

from loadstone.exceptions import InvalidMaxLengthError
from loadstone.hookspecs import hookimpl
from loadstone.naming import NamingConvention as BaseNamingConvention
from loadstone.plugins.naming.snake_case import NamingConvention as SnakeCaseNamingConvention

__all__ = ["MAX_IDENTIFIER_LENGTH", "NamingConvention", "loadstone_naming_convention"]

#: S3 Tables accept names of at most this many characters.
MAX_IDENTIFIER_LENGTH = 255


class NamingConvention(SnakeCaseNamingConvention):
    """snake_case, at most 255 characters, table names without leading underscores."""

    def __init__(self, max_length: int | None = None) -> None:
        if max_length is None:
            max_length = MAX_IDENTIFIER_LENGTH
        elif isinstance(max_length, int) and max_length > MAX_IDENTIFIER_LENGTH:
            raise InvalidMaxLengthError(
                max_length,
                f"S3 Tables allow identifiers of at most {MAX_IDENTIFIER_LENGTH} characters",
                self.name(),
            )
        super().__init__(max_length)

    def normalize_table_identifier(self, identifier: str) -> str:
        # shortened first, then stripped: the result may be shorter than max_length
        return super().normalize_table_identifier(identifier).lstrip("_")


@hookimpl
def loadstone_naming_convention() -> type[BaseNamingConvention]:
    return NamingConvention
