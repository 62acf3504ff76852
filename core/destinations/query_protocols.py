"""What ``pipeline.dataset()`` and ``sql_client()`` may ask of a destination client beyond
:class:`~loadstone.destinations.contract.DestinationClient`: each is optional, a client that
lacks it is read the plain way."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import attrs

from loadstone.destinations.contract import Row


@runtime_checkable
class QueryErrors(Protocol):
    """A client that tells its driver's query errors apart, as dlt's exceptions do."""

    def query_error_kind(self, error: Exception) -> str:
        """``"undefined_relation"``, ``"terminal"`` or ``"transient"`` for a failed query."""


@attrs.frozen
class ColumnsAnswer:
    """What a :class:`ColumnsQuery` client answers: the result's column names (None for a
    statement without a result: an UPDATE, a DDL; dlt's ``execute_sql`` answers None
    there), all its rows, and, where the driver describes them, each column's DB-API type
    code and the Arrow type (a ``pyarrow.DataType``, None: the values decide) dlt 1.31 reads
    the column as."""

    names: list[str] | None
    rows: list[Row]
    type_codes: list[object] | None = None
    arrow_types: list[Any] | None = None


@runtime_checkable
class ColumnsQuery(Protocol):
    """A client whose query results carry their column names (``pipeline.dataset()`` and
    ``sql_client()`` read them from here when the client has no DuckDB-style connection)."""

    def query_columns(self, sql: str, *params: object) -> ColumnsAnswer:
        """Run SQL and answer with its result (:class:`ColumnsAnswer`)."""
