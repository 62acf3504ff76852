"""The cursor of ``sql_client().execute_query(...)``: dlt's DB-API cursor over one result.

dlt users read a query's result as rows (``fetchone``/``fetchmany``/``fetchall``), as a
pandas frame (``df()``), as Arrow (``arrow()``) or in chunks (``iter_fetch``, ``iter_df``,
``iter_arrow``); each read continues where the last one stopped, as a DB-API cursor's.
On DuckDB a frame is DuckDB's own (decimals as float64, dates as datetime64, integers with
nulls as Int64), as dlt's is, made from the result already fetched: the query never runs
twice (an ``INSERT ... RETURNING`` must not insert again).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from loadstone.destinations.contract import Row
from loadstone.destinations.query_results import QueryResult

if TYPE_CHECKING:
    import pandas as pd  # type: ignore[import-untyped,unused-ignore]  # pandas ships no stubs
    import pyarrow as pa

__all__ = ["QueryCursor"]

#: an Arrow result as the destination's own pandas frame (None: pyarrow's ``to_pandas``)
FrameMaker = Callable[["pa.Table"], "pd.DataFrame | None"]


class QueryCursor:
    """A DB-API style cursor over one result: every fetch continues where the last stopped."""

    def __init__(
        self, result: QueryResult, frame: FrameMaker | None = None, frame_rows: int | None = None
    ) -> None:
        self._result = result
        self._frame = frame
        #: the rows of a frame's chunk whatever its size says (a DuckDB vector, as dlt's)
        self._frame_rows = frame_rows
        self._at = 0  # the next row to hand out
        types = result.types or [None] * len(result.columns)
        #: DB-API's seven items per column: name, type code, then five unknowns; None for a
        #: statement without a result, as the driver says
        self.description = [(c, t, None, None, None, None, None) for c, t in zip(result.columns, types, strict=True)] if result.has_result else None  # fmt: skip

    def _take(self, size: int | None) -> list[Row]:
        rows = self._result.rows
        end = len(rows) if size is None else min(len(rows), self._at + max(size, 0))
        taken = rows[self._at : end]
        self._at = end
        return taken

    def _take_arrow(self, size: int | None) -> pa.Table:
        table = self._result.to_arrow()
        end = table.num_rows if size is None else min(table.num_rows, self._at + max(size, 0))
        taken = table.slice(self._at, end - self._at)
        self._at = end
        return taken

    def fetchall(self) -> list[Row]:
        return self._take(None)

    def fetchone(self) -> Row | None:
        taken = self._take(1)
        return taken[0] if taken else None

    def fetchmany(self, size: int = 1) -> list[Row]:
        return self._take(size)

    def arrow(self, chunk_size: int | None = None) -> pa.Table:
        """The rows not read yet (or the next ``chunk_size`` of them) as Arrow."""
        return self._take_arrow(chunk_size)

    def df(self, chunk_size: int | None = None) -> pd.DataFrame | None:
        """The rows not read yet (or the next ``chunk_size`` of them; on DuckDB the next
        vector) as a pandas frame."""
        rows = None if chunk_size is None else (self._frame_rows or chunk_size)
        taken = self._take_arrow(rows)
        if chunk_size is not None and not taken.num_rows:
            return None  # a chunk past the end, as dlt's cursor answers it
        return self._to_frame(taken)

    def _to_frame(self, table: pa.Table) -> pd.DataFrame:
        frame = self._frame(table) if self._frame is not None else None
        return frame if frame is not None else table.to_pandas()

    def iter_fetch(self, chunk_size: int) -> Iterator[list[Row]]:
        while chunk := self._take(chunk_size):
            yield chunk

    def iter_arrow(self, chunk_size: int) -> Iterator[pa.Table]:
        while (chunk := self._take_arrow(chunk_size)).num_rows:
            yield chunk

    def iter_df(self, chunk_size: int) -> Iterator[pd.DataFrame]:
        for chunk in self.iter_arrow(self._frame_rows or chunk_size):
            yield self._to_frame(chunk)
