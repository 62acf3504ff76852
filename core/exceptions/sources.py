"""Errors of the built-in sources: filesystem, sql_database, rest_api and the REST client."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loadstone.exceptions.base import LoadstoneError

if TYPE_CHECKING:
    pass


class FileReadError(LoadstoneError):
    """A file listed by the filesystem source cannot be read (deleted, denied, damaged).

    The message is one line naming the file's URL (never credentials) and the cause.
    """

    def __init__(self, file_url: str, cause: BaseException) -> None:
        self.file_url = file_url
        reason = "file not found" if isinstance(cause, FileNotFoundError) else str(cause)
        reason = (reason.splitlines() or [type(cause).__name__])[0]
        super().__init__(f"filesystem: cannot read {file_url}: {reason}")


class AuthError(LoadstoneError):
    """Credentials are missing, or the token endpoint refused them."""


class IgnoreResponseException(LoadstoneError):
    """Raised by a response hook: this answer has no records, and paging stops here."""


class JSONPathError(LoadstoneError, ValueError):
    """A JSON path that cannot be read (a path dlt 1.31's parser refuses too), or a path to
    write a value at that is more than dotted names."""


class PaginatorError(LoadstoneError, ValueError):
    """A paginator is configured wrongly, or a response lacks what it needs (a total)."""


class RESTClientError(LoadstoneError):
    """A request failed for good (retries used up, or a final 4xx)."""


class SqlDatabaseError(LoadstoneError):
    """Reading a table failed (connection lost, table dropped, bad query), or a table or
    cursor column named by the caller does not exist. The message names the table."""


class ParentFieldMissing(LoadstoneError, KeyError, ValueError):
    """A parent record lacks the field a child request needs (a ``ValueError`` too: what
    dlt 1.31 raises for it, inside its ``ResourceExtractionError``)."""

    def __str__(self) -> str:
        return str(self.args[0])
