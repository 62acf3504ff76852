"""The schema an extract saves: the run's root tables, as dlt's extract saves them.

dlt's extract writes each resource's table (``compute_table_schema``: the declared columns,
keys, write disposition, resource) and the pipeline state table into the schema and saves
it; normalize then adds the columns the rows bring and the nested tables, and saves again.
The two saves are two versions: ``schema.previous_hashes`` after a run holds both hashes,
and ``pipeline.default_schema`` after ``extract()`` shows the root tables. loadstone saves
the same two versions: this module makes the first. The package records the tables it
declared (``declared_tables``): normalize makes them again from the package's hints, so the
normalized tables are exactly those of a schema that never had them (new tables, in dlt's
order, under the same contracts).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any

from loadstone.exceptions import DataValidationError
from loadstone.extract.resource_hints import disposition_config
from loadstone.naming import NamingConvention
from loadstone.runtime.working_folder import add_state_table
from loadstone.schema import Schema, Table
from loadstone.schema.hints import normalize_hints, table_from_hints

__all__ = ["add_root_tables", "check_frozen_tables", "new_table_discards"]


def add_root_tables(
    schema: Schema,
    table_hints: Mapping[str, Mapping[str, Any]],
    with_rows: Collection[str],
    naming: NamingConvention,
    with_state: bool = True,
) -> list[str]:
    """Add each table of ``table_hints`` (a package's, in the order the extract met them)
    that got rows (``with_rows``) and that ``schema`` lacks, as its resource declares it,
    then the state table; returns the names added.

    A table whose contract does not let ``tables`` evolve is left out (a frozen one was
    refused by :func:`check_frozen_tables`; a discarded one's rows are dropped at normalize);
    ``columns`` and ``data_type`` modes do not keep a new table out, as in dlt. A schema never saved before keeps its first
    content's hash in ``previous_hashes`` and its version (dlt's extract links the schema it
    replaces: observed in dlt 1.31, ``tests/fixtures/schema_object/``).
    """
    target = schema.copy() if schema.is_new else schema
    use_break_path = target.use_break_path_on_normalize
    added: list[str] = []
    for name, hints in table_hints.items():
        table = normalize_hints(_declared(name, hints), naming, use_break_path=use_break_path)
        if name not in with_rows or table.parent is not None or target.has_table(table.name):
            continue
        if target.resolve_contract_settings_for_table(table.name, table)["tables"] == "evolve":
            target.update_table(table)
            added.append(table.name)
    if added and with_state and not target.has_table(target.state_table_name):
        add_state_table(target, normalized=False)
        added.append(target.state_table_name)
    if target is not schema and added:
        schema.replace_schema_content(target, link_to_replaced_schema=True)
    return added


def check_frozen_tables(
    schema: Schema,
    table_hints: Mapping[str, Mapping[str, Any]],
    with_rows: Collection[str],
    naming: NamingConvention,
) -> None:
    """Refuse the extract when a root table that got rows is new to ``schema`` and its
    contract freezes ``tables``: dlt 1.31 raises ``DataValidationError`` at extract, before
    any package is kept (nested tables are left to normalize, as in dlt)."""
    use_break_path = schema.use_break_path_on_normalize
    for name, hints in table_hints.items():
        table = normalize_hints(_declared(name, hints), naming, use_break_path=use_break_path)
        if name not in with_rows or table.parent is not None or schema.has_table(table.name):
            continue
        if schema.resolve_contract_settings_for_table(table.name, table)["tables"] == "freeze":
            raise DataValidationError(
                schema_name=schema.name, table=table.name, column=None, entity="tables",
                mode="freeze",
            )  # fmt: skip


def new_table_discards(schema: Schema, naming: NamingConvention) -> Callable[..., bool]:
    """Whether a table's rows are dropped at extract, as dlt 1.31 drops them: a root table
    new to ``schema`` whose contract discards new ``tables`` (``discard_row`` or
    ``discard_value``). A package left with no rows is then dropped like an empty one."""
    use_break_path = schema.use_break_path_on_normalize

    def discards(name: str, hints: Mapping[str, Any]) -> bool:
        table = normalize_hints(_declared(name, hints), naming, use_break_path=use_break_path)
        if table.parent is not None or schema.has_table(table.name):
            return False
        mode = schema.resolve_contract_settings_for_table(table.name, table)["tables"]
        return mode in ("discard_row", "discard_value")

    return discards


def _declared(name: str, hints: Mapping[str, Any]) -> Table:
    """The table a package's hints declare before any row (dlt's ``compute_table_schema``:
    declared columns, keys, write disposition, resource), through the schema's one reading
    of hints."""
    disposition = disposition_config({"write_disposition": "append", **hints})
    return table_from_hints(
        name,
        columns=hints.get("columns"),
        primary_key=hints.get("primary_key"),
        merge_key=hints.get("merge_key"),
        write_disposition=disposition,
        schema_contract=hints.get("schema_contract"),
        resource=str(hints.get("resource") or name),
    )
