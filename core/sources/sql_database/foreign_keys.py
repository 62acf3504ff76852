"""``resolve_foreign_keys=True``: a reflected table's foreign keys as dlt's ``references``.

dlt 1.31 gives a table one reference per table it points at: the foreign keys to the same
table are joined into one, their columns and the columns they reference in the same order
(observed: two keys to ``parent``, ``(pid) -> (id)`` and ``(a, b) -> (id, k2)``, give
``columns: [pid, a, b]``, ``referenced_columns: [id, id, k2]``). SQLAlchemy holds a table's
foreign keys in a set; they are taken by constraint name here, then (unnamed, as SQLite's)
in the order they were reflected (two keys declared ``parent_id`` then ``other_id`` give
``columns: [other_id, parent_id]``, SQLite's listing order), so the order is stable. dlt
1.31 follows the set's order there, which varies from run to run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loadstone.typing import TDataItem

if TYPE_CHECKING:
    import sqlalchemy as sa

__all__ = ["table_references"]


def table_references(table: sa.Table) -> list[dict[str, TDataItem]]:
    """The references of ``table``: one per table its foreign keys point at."""
    by_table: dict[str, dict[str, list[str]]] = {}
    constraints = sorted(
        table.foreign_key_constraints,
        key=lambda c: (str(c.name or ""), getattr(c, "_creation_order", 0)),
    )
    for constraint in constraints:
        referred = constraint.referred_table.name
        joined = by_table.setdefault(referred, {"columns": [], "referenced_columns": []})
        for element in constraint.elements:
            joined["columns"].append(element.parent.name)
            joined["referenced_columns"].append(element.column.name)
    return [
        {
            "referenced_table": referred,
            "referenced_columns": joined["referenced_columns"],
            "columns": joined["columns"],
        }
        for referred, joined in by_table.items()
    ]
