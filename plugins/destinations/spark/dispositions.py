"""Which write dispositions the Spark destination does, checked before any work.

``append`` and ``replace`` are renames of files (``table_files.py``); ``merge`` would need a
rewrite of the whole table per load on plain Parquet tables, so it is refused with an error
naming the table and the strategy before the dataset is even created.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loadstone.destinations.contract import DestinationError

if TYPE_CHECKING:
    from loadstone.plugins.destinations.duckdb.tables import TableModel

SUPPORTED_DISPOSITIONS = ("append", "replace")


class UnsupportedWriteDisposition(DestinationError):
    """A table asks for a write disposition the Spark destination does not do."""

    def __init__(self, table: str, disposition: str, strategy: str | None) -> None:
        self.table = table
        self.disposition = disposition
        shown = f"{disposition} (strategy {strategy!r})" if strategy else disposition
        super().__init__(
            f"destination 'spark' cannot load table {table!r} with write disposition {shown}; "
            f"it supports {', '.join(SUPPORTED_DISPOSITIONS)}"
        )


def refuse_unsupported(model: TableModel) -> None:
    """Raise :class:`UnsupportedWriteDisposition` for the first root table that needs one."""
    for table in model.data_tables():
        disposition = model.disposition(table)
        if model.parent(table) is None and disposition not in SUPPORTED_DISPOSITIONS:
            strategy = model.strategy(table) if disposition == "merge" else None
            raise UnsupportedWriteDisposition(table, disposition, strategy)
