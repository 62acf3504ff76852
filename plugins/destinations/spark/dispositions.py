"""Which write dispositions the Spark destination does, checked before any work.

``append`` and ``replace`` are renames of files (``table_files.py``); ``merge`` is
``delete-insert`` only (``merge.py``): ``upsert``, ``scd2`` and ``hard_delete`` columns are
refused with an error naming the table before the dataset is even created.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loadstone.exceptions import UnsupportedWriteDisposition

if TYPE_CHECKING:
    from loadstone.plugins.destinations.tables import TableModel


def refuse_unsupported(model: TableModel) -> None:
    """Raise :class:`UnsupportedWriteDisposition` for the first root table that needs one."""
    for table in model.data_tables():
        disposition = model.disposition(table)
        if model.parent(table) is not None or disposition in ("append", "replace"):
            continue
        if disposition != "merge":
            raise UnsupportedWriteDisposition(table, disposition, None)
        strategy = model.strategy(table)
        if strategy != "delete-insert":
            raise UnsupportedWriteDisposition(table, disposition, strategy)
        hard_delete = model.hard_delete(table)
        if hard_delete is not None:
            raise UnsupportedWriteDisposition(
                table, disposition, strategy, f" and hard_delete column {hard_delete[0]!r}"
            )
