"""Reading a schema's tables as dlt's ``Schema`` offers them: by name, by kind, by hint.

The answers are dlt's shapes: tables and columns read like dlt's dicts (stored-form views),
``get_table_columns`` / ``get_new_table_columns`` / ``references`` are plain dicts and
lists, so code ported from dlt reads the same values.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from loadstone.exceptions import InvalidSchemaError, TableNotFoundError
from loadstone.schema.model import Table
from loadstone.schema.state import SchemaState
from loadstone.schema.stored import TColumnSchema, TTableReference, TTableSchema
from loadstone.schema.system_tables import version_references

if TYPE_CHECKING:
    from loadstone.typing import TSchemaContract

__all__ = ["TableLookups", "is_complete"]

#: dlt's names of the columns the references point from and to
_LOAD_ID = "_dlt_load_id"


def is_complete(table: Table) -> bool:
    """A table with at least one typed column (dlt's "complete" table)."""
    return any(column.is_complete for column in table.columns.values())


def _first_with(table: Table, hint: str) -> str | None:
    return next(iter(table.columns_with_hint(hint)), None)


class TableLookups(SchemaState):
    """Table and column lookups (dlt's ``get_table``, ``data_tables``, ``references`` ...)."""

    def get_table(self, table_name: str) -> Table:
        try:
            return self._tables[table_name]
        except KeyError:
            raise TableNotFoundError(self._name, table_name, self._tables) from None

    def has_table(self, table_name: str) -> bool:
        return table_name in self._tables

    def is_system_table(self, table_name: str) -> bool:
        return table_name.startswith("_dlt") or table_name in (
            self.version_table_name,
            self.loads_table_name,
            self.state_table_name,
        )

    def get_table_columns(
        self, table_name: str, include_incomplete: bool = False
    ) -> dict[str, TColumnSchema]:
        """The columns of ``table_name`` as dlt's dicts; columns with no data type only with
        ``include_incomplete`` (dlt creates no column it could not type)."""
        return {
            name: column.to_dict()
            for name, column in self.get_table(table_name).columns.items()
            if include_incomplete or column.is_complete
        }

    def get_new_table_columns(
        self,
        table_name: str,
        existing_columns: Mapping[str, object],
        case_sensitive: bool,
        include_incomplete: bool = False,
    ) -> list[TColumnSchema]:
        """Columns of ``table_name`` missing from ``existing_columns`` (a destination's
        columns by name), compared case-insensitively unless ``case_sensitive``: what a
        migration adds, as dlt lists it."""

        def fold(name: str) -> str:
            return name if case_sensitive else name.casefold()

        existing = {fold(name) for name in existing_columns}
        return [
            column.to_dict()
            for name, column in self.get_table(table_name).columns.items()
            if fold(name) not in existing and (include_incomplete or column.is_complete)
        ]

    def filter_row_with_hint(
        self, table_name: str, hint_type: str, row: Mapping[str, object]
    ) -> dict[str, object]:
        """The values of ``row`` whose columns carry ``hint_type`` (``not_null`` means
        ``nullable: false``), as dlt's: e.g. the primary key of a row."""
        columns = self.get_table(table_name).columns
        return {
            name: value
            for name, value in row.items()
            if name in columns and columns[name].hint(hint_type)
        }

    def is_new_table(self, table_name: str) -> bool:
        """True for a table the schema lacks or that has no typed column yet (as dlt)."""
        table = self._tables.get(table_name)
        return table is None or not is_complete(table)

    def data_tables(
        self, seen_data_only: bool = False, include_incomplete: bool = False
    ) -> list[Table]:
        """Tables holding user data (not ``_dlt_*``), as dlt lists them: only those with a
        typed column unless ``include_incomplete``; with ``seen_data_only`` only those the
        normalizer wrote rows to."""
        return [
            table
            for name, table in self._tables.items()
            if not self.is_system_table(name)
            and (table.seen_data or not seen_data_only)
            and (include_incomplete or is_complete(table))
        ]

    def data_table_names(
        self, seen_data_only: bool = False, include_incomplete: bool = False
    ) -> list[str]:
        return [table.name for table in self.data_tables(seen_data_only, include_incomplete)]

    def dlt_tables(self) -> list[Table]:
        return [table for name, table in self._tables.items() if self.is_system_table(name)]

    def dlt_table_names(self) -> list[str]:
        return [table.name for table in self.dlt_tables()]

    def nested_tables(self, table_name: str) -> list[Table]:
        """Every table nested (at any depth) under ``table_name``, parents before children."""
        found: list[Table] = []
        frontier = [table_name]
        while frontier:
            parent = frontier.pop(0)
            for table in self._tables.values():
                if table.parent == parent:
                    found.append(table)
                    frontier.append(table.name)
        return found

    def root_table(self, table_name: str) -> Table:
        """The root (top-level) table of ``table_name``."""
        table = self.get_table(table_name)
        seen = {table.name}
        while table.parent is not None:
            table = self.get_table(table.parent)
            if table.name in seen:
                raise InvalidSchemaError("parent cycle", table=table.name)
            seen.add(table.name)
        return table

    # ------------------------------------------------------------------ contracts
    @staticmethod
    def expand_schema_contract_settings(
        settings: TSchemaContract | None, default: Mapping[str, str] | None = None
    ) -> dict[str, str]:
        """A contract as dlt's dict of all three entities: a mode applies to each, a dict
        fills the entities it leaves out from ``default`` (``evolve`` without one)."""
        from loadstone.schema.contracts import CONTRACT_ENTITIES, SchemaContract

        base = dict(default) if default is not None else dict.fromkeys(CONTRACT_ENTITIES, "evolve")
        given = SchemaContract.parse(settings)
        return {**base, **{e: given.mode(e) for e in CONTRACT_ENTITIES if getattr(given, e)}}

    def resolve_contract_settings_for_table(
        self, table_name: str, new_table_schema: TTableSchema | Table | None = None
    ) -> dict[str, str]:
        """The contract that applies to ``table_name`` (its root table's over the schema's),
        as dlt's dict; ``new_table_schema`` stands for a table not in the schema yet."""
        from loadstone.schema.contracts import CONTRACT_ENTITIES, SchemaContract, resolve_contract

        if table_name in self._tables or new_table_schema is None:
            contract = resolve_contract(self, table_name)
        else:
            parent = new_table_schema.get("parent")
            if parent is not None and str(parent) in self._tables:
                contract = resolve_contract(self, str(parent))
            else:
                declared = SchemaContract.parse(new_table_schema.get("schema_contract"))
                schema_level = SchemaContract.parse(self._settings.schema_contract)
                contract = declared.over(schema_level).resolved()
        return {e: contract.mode(e) for e in CONTRACT_ENTITIES}

    # ------------------------------------------------------------------ references
    @property
    def references(self) -> list[TTableReference]:
        """How tables point at each other, as dlt lists them: per table its own
        ``references`` hint, its parent, its load and its root; then ``_dlt_version`` to
        ``_dlt_loads``. Diagrams and dataset joins read these."""
        found: list[TTableReference] = []
        for table in self._tables.values():
            found.extend(self._table_references(table))
        found.extend(version_references(self.version_table_name, self.loads_table_name))
        return found

    def _table_references(self, table: Table) -> list[TTableReference]:
        declared = table.extra.get("references")
        found: list[TTableReference] = [
            {**reference, "table": table.name}
            for reference in (declared if isinstance(declared, list) else [])
            if isinstance(reference, Mapping)
        ]
        if table.parent is not None and table.parent in self._tables:
            parent = self._tables[table.parent]
            found.append(_reference("_dlt_parent", table, _first_with(table, "parent_key"), parent))
        if _LOAD_ID in table.columns:
            found.append(
                {
                    "label": "_dlt_load",
                    "cardinality": "many_to_one",
                    "table": table.name,
                    "columns": [_LOAD_ID],
                    "referenced_table": self.loads_table_name,
                    "referenced_columns": ["load_id"],
                }
            )
        root_key = _first_with(table, "root_key")
        if table.parent is not None and root_key is not None:
            found.append(_reference("_dlt_root", table, root_key, self.root_table(table.name)))
        return found


def _reference(label: str, table: Table, column: str | None, target: Table) -> TTableReference:
    """A nested table's row pointing at the row of ``target`` (its parent or root)."""
    return {
        "label": label,
        "cardinality": "many_to_one",
        "table": table.name,
        "columns": [column],
        "referenced_table": target.name,
        "referenced_columns": [_first_with(target, "row_key")],
    }
