"""What ``pipeline.dataset()`` and ``sql_client()`` may ask of a destination client beyond
:class:`~loadstone.destinations.contract.DestinationClient`: each is optional, a client that
lacks it is read the plain way."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from loadstone.destinations.contract import Row


@runtime_checkable
class QueryErrors(Protocol):
    """A client that tells its driver's query errors apart, as dlt's exceptions do."""

    def query_error_kind(self, error: Exception) -> str:
        """``"undefined_relation"``, ``"terminal"`` or ``"transient"`` for a failed query."""


@runtime_checkable
class ColumnsQuery(Protocol):
    """A client whose query results carry their column names (``pipeline.dataset()`` and
    ``sql_client()`` read them from here when the client has no DuckDB-style connection)."""

    def query_columns(self, sql: str, *params: object) -> tuple[list[str] | None, list[Row]]:
        """Run SQL and return the result's column names and all its rows; the names are
        None for a statement without a result (an UPDATE, a DDL: dlt's ``execute_sql``
        answers None there)."""
