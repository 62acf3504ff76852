"""What the schema says about each table, as the filesystem loader needs it.

Nested tables inherit their root's write disposition, file format and table format, as in
dlt, so a package's tables are always written one way per root. The rules (root, disposition,
keys, typed columns) are the ones every loader reads (``destinations/tables.py``); this
module adds what only files have: a file format and a table format per root.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from loadstone.destinations.contract import SYSTEM_TABLES
from loadstone.plugins.destinations.tables import TableModel
from loadstone.schema import Column, Schema

#: upsert is the filesystem destination's one merge strategy in the spec's profile
DEFAULT_STRATEGY = "upsert"
#: the merge strategies of Delta and Iceberg tables: dlt 1.31's (it refuses scd2 there) and
#: loadstone's own delete-insert (docs/migrating.md)
TABLE_FORMAT_STRATEGIES = ("upsert", "insert-only", "delete-insert")


@attrs.frozen
class TablePlan:
    """How one table of a package is written."""

    name: str
    root: str
    write_disposition: str
    merge_strategy: str
    primary_key: tuple[str, ...]
    file_format: str
    table_format: str | None
    columns: tuple[Column, ...]
    #: the root's ``hard_delete`` column and whether it is a bool (else non-NULL deletes)
    hard_delete: tuple[str, bool] | None = None

    @property
    def is_root(self) -> bool:
        return self.name == self.root


class _AsGiven:
    """Names as the schema has them: a bucket's files get no identifiers of the loader's
    own (system tables are told apart by :func:`is_system_table`)."""

    def ident(self, name: str) -> str:
        return name

    def table_ident(self, name: str) -> str:
        return name


def table_model(schema: Schema | None) -> TableModel:
    """The schema's tables seen by the filesystem loader (its default merge strategy)."""
    return TableModel(schema, _AsGiven(), default_strategy=DEFAULT_STRATEGY)


def plan_table(
    model: TableModel, name: str, default_file_format: str, default_table_format: str | None
) -> TablePlan:
    """The plan of ``name`` from the schema, with the destination's defaults filled in."""
    root = model.root(name)
    file_format = model.root_hint(name, "file_format")
    if file_format in (None, "preferred"):
        file_format = default_file_format
    return TablePlan(
        name=name,
        root=root,
        write_disposition=model.disposition(name),
        merge_strategy=model.strategy(name),
        primary_key=tuple(model.primary_key(root)),
        file_format=str(file_format),
        table_format=_table_format(model.root_hint(name, "table_format"), default_table_format),
        columns=tuple(model.typed_columns(name)),
        hard_delete=model.hard_delete(root),
    )


def plan_refusal(plan: TablePlan, nested: Sequence[str]) -> str | None:
    """Why a plan is refused, as dlt 1.31 refuses it: a merge strategy a table format does
    not run (``scd2``), an upsert or insert-only without primary key, ``hard_delete`` on an
    upsert into a Delta root with nested tables (their rows could not follow a deleted
    parent)."""
    merge = plan.write_disposition == "merge"
    if merge and plan.table_format and plan.merge_strategy not in TABLE_FORMAT_STRATEGIES:
        return (
            f"merge strategy {plan.merge_strategy!r} is not supported for {plan.table_format} "
            f"table {plan.name!r} (supported: {', '.join(TABLE_FORMAT_STRATEGIES)})"
        )
    keyed = plan.merge_strategy in ("upsert", "insert-only")
    if merge and plan.table_format and keyed and plan.is_root and not plan.primary_key:
        return (
            f"no primary key defined for table {plan.name!r}: primary_key needs to be set "
            f"when using the {plan.merge_strategy!r} merge strategy (as in dlt)"
        )
    upsert = plan.merge_strategy == "upsert" and merge
    if plan.table_format != "delta" or not (plan.hard_delete and plan.is_root and upsert):
        return None
    if not nested:
        return None
    return (
        f"the hard_delete hint with the upsert merge strategy on Delta table {plan.name!r}, "
        "which has nested tables, is not supported (as in dlt): remove the hint or the "
        "nested data"
    )


def _table_format(hinted: object, default: str | None) -> str | None:
    """The ``table_format`` hint of a root, else the destination's."""
    return str(hinted) if hinted else default


def is_system_table(name: str) -> bool:
    """``_dlt_loads`` and friends (also as ``s3_tables`` names them, without the ``_``)."""
    return name in SYSTEM_TABLES or f"_{name}" in SYSTEM_TABLES
