"""What ``nested_hints=`` says about each nested table of a root, read once per package.

dlt 1.31's rules, observed by running the same programs (``tests/compat/refused_scenarios.py``
``nested_hints_*``):

* ``columns`` and ``schema_contract`` apply to the nested table as they are;
* a ``primary_key`` or ``merge_key`` breaks the table's link to its parent: it becomes a
  table of its own (no ``parent``, no ``_dlt_parent_id`` / ``_dlt_list_idx``; its rows get
  ``_dlt_load_id``), records the root's resource and its own write disposition (``append``
  unless given), and is loaded as a root (a merge by its keys); it keeps ``_dlt_root_id``
  when its root propagates one, and gives its own ``_dlt_id`` as the root key of its nested
  rows when it merges (the schema's propagation config records it, as dlt's);
* a ``write_disposition`` or ``references`` of a linked nested table is kept in the table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from loadstone.extract.resource_hints import nested_table_keys
from loadstone.naming import NamingConvention
from loadstone.plugins.normalizers.relational.row_keys import ROOT_ID, ROW_ID
from loadstone.schema import Column, Schema, Table
from loadstone.schema.contracts import SchemaContract
from loadstone.schema.hints import disposition_of, normalize_hints, table_from_hints
from loadstone.typing import TSchemaContract


@attrs.frozen
class NestedTablePlan:
    """One nested table's hints from ``make_nested_hints``."""

    columns: Mapping[str, Column]
    contract: TSchemaContract | None = None
    #: a primary or merge key was given: a table of its own, not linked to its parent
    unlinked: bool = False
    #: the write disposition and merge strategy given (None: not given)
    disposition: tuple[str, str | None] | None = None
    references: Sequence[Mapping[str, Any]] | None = None
    #: table keys taken as they are: table / file format, additional hints (dlt's)
    table_keys: Mapping[str, Any] = attrs.field(factory=dict)


def plan_nested(
    root: str, hints: Mapping[str, Any], naming: NamingConvention, use_break_path: bool
) -> dict[str, NestedTablePlan]:
    """Each hinted nested table of ``root`` (name in destination form) and its plan."""
    plans: dict[str, NestedTablePlan] = {}
    for entry in hints.get("x-nested-hints") or ():
        parts = (naming.normalize_path(part) for part in entry["path"])
        table = naming.shorten_fragments(root, *parts)
        assert table is not None
        partial = table_from_hints(
            table,
            columns=[{**column, "name": name} for name, column in entry["columns"].items()],
            primary_key=entry.get("primary_key"),
            merge_key=entry.get("merge_key"),
        )
        columns = {
            # a merge key holds no null either (as dlt's resource hints make it)
            name: attrs.evolve(column, nullable=False)
            if column.merge_key and column.nullable is None
            else column
            for name, column in normalize_hints(
                partial, naming, use_break_path=use_break_path
            ).columns.items()
        }
        disposition, strategy = disposition_of(entry)
        plans[table] = NestedTablePlan(
            columns=dict(columns),
            contract=entry.get("schema_contract"),
            unlinked=bool(entry.get("primary_key") or entry.get("merge_key")),
            disposition=None if disposition is None else (disposition, strategy),
            references=entry.get("references"),
            table_keys=nested_table_keys(entry),
        )
    return plans


def _merges(plan: NestedTablePlan) -> bool:
    return plan.disposition is not None and plan.disposition[0] == "merge"


def _remembered(schema: Schema, root: str, resource: str) -> frozenset[str]:
    """Nested tables of ``root`` an earlier run unlinked: they stay tables of their own when
    a later run gives no key (as dlt's, whose schema no longer names their parent)."""
    return frozenset(
        name
        for name, table in schema.tables.items()
        if table.parent is None
        and name.startswith(root + "__")
        and table.resource == resource
        and table.name != root
    )


def own_root_keys(
    schema: Schema,
    unlinked: frozenset[str],
    plans: Mapping[str, NestedTablePlan],
    root_propagates: bool,
) -> frozenset[str]:
    """The unlinked tables whose rows give their ``_dlt_id`` as the root key of their nested
    rows: the ones that merge, or that an earlier run recorded in the propagation config.
    The config records the merging ones and, when the root propagates, every unlinked one
    (from the next run on, as dlt's)."""
    config = schema.json_normalizer_config
    recorded = (config.get("propagation") or {}).get("tables") or {}
    merging = {name for name in unlinked if name in plans and _merges(plans[name])}
    own = frozenset(name for name in unlinked if name in recorded or name in merging)
    record = [name for name in sorted(unlinked) if name in merging or root_propagates]
    if record:
        tables = config.setdefault("propagation", {}).setdefault("tables", {})
        for name in record:
            tables[name] = {ROW_ID: ROOT_ID}
        schema.set_json_normalizer_config(config)
    return own


def nested_spec(
    schema: Schema,
    root: str,
    resource: str,
    plans: Mapping[str, NestedTablePlan],
    root_propagates: bool,
) -> dict[str, Any]:
    """The :class:`~.task.RootSpec` fields of a root's nested hints: the nested tables'
    contracts, the unlinked tables (hinted now or by an earlier run), and those whose rows
    are their nested rows' root."""
    unlinked = frozenset(t for t, plan in plans.items() if plan.unlinked)
    unlinked |= _remembered(schema, root, resource)
    return {
        "table_contracts": {
            table: SchemaContract.parse(plan.contract)
            for table, plan in plans.items()
            if plan.contract is not None
        },
        "unlinked": unlinked,
        "own_root_key": own_root_keys(schema, unlinked, plans, root_propagates),
    }


def nested_keys(planned: tuple[NestedTablePlan, str] | None) -> tuple[str, ...]:
    """The key order of a new hinted nested table, as dlt writes it: an unlinked one as a
    root made from hints, a linked one with its given keys before its name and parent."""
    if planned is None:
        return ()
    if planned[0].unlinked and planned[0].disposition is not None:
        return ("columns", "write_disposition", "name", "resource")
    if planned[0].unlinked:
        return ("columns", "name", "resource", "write_disposition")
    return ("columns", "write_disposition", "references", "name", "parent")


def with_nested_hints(table: Table, plan: NestedTablePlan, resource: str) -> Table:
    """The nested table with what its hints say: an unlinked one records the resource and
    its write disposition (``append`` unless given); the given disposition and references."""
    extra = dict(table.extra)
    write_disposition = table.write_disposition
    if plan.disposition is not None:
        write_disposition, strategy = plan.disposition
        extra.pop("x-merge-strategy", None)
        if strategy is not None:
            extra["x-merge-strategy"] = strategy
    if plan.references is not None:
        extra["references"] = [dict(ref) for ref in plan.references]
    extra.update(plan.table_keys)
    if plan.contract is not None:
        table = table.evolve(schema_contract=plan.contract)
    if not plan.unlinked:
        return attrs.evolve(table, extra=extra, write_disposition=write_disposition)
    return attrs.evolve(
        table,
        extra=extra,
        write_disposition=write_disposition or "append",
        resource=table.resource or resource,
    )
