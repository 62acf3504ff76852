"""Schema contracts: what happens when data would change the schema.

A contract sets one mode per *entity*:

* ``tables``: a new table (root or nested) would be created;
* ``columns``: a new column would be added to an existing table;
* ``data_type``: a value does not coerce into its column, so a variant column would be added.

Modes: ``evolve`` (change the schema, the default), ``freeze`` (stop with
:class:`DataValidationError`), ``discard_row`` (drop the whole row), ``discard_value`` (drop the
value, keep the row; for ``tables`` the rows of the new table are dropped, since a table
has no "value" to drop).

Rules observed from dlt 1.31 (black-box runs, ``tests/fixtures/schemas/contracts_dlt.json``):

* a mode string sets all three entities; a dict sets the given ones, the rest ``evolve``;
* a table's contract (``schema_contract`` table hint) is looked up on its **root** table:
  nested tables inherit it; entities the table leaves unset come from the schema's
  ``settings.schema_contract``, then ``evolve``;
* a table that is *new* (not in the schema yet, or declared by hints but without any column
  that has a data type) accepts new columns and variants whatever its ``columns`` and
  ``data_type`` modes say, for the whole load that creates it; only ``tables`` applies;
* a column that only ever saw nulls is not a new column (nothing is created), so no
  contract applies to it; a null never creates a variant.

Pure functions over values (picklable, no Spark), so the normalizer can resolve a
:class:`SchemaContract` per table once on the driver and call :func:`decide` in workers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final, Literal, Protocol

import attrs

from loadstone.exceptions import DataValidationError, InvalidSchemaError
from loadstone.typing import TDataItem

if TYPE_CHECKING:
    from loadstone.schema.model import Table
    from loadstone.schema.settings import SchemaSettings

__all__ = [
    "CONTRACT_ENTITIES",
    "CONTRACT_MODES",
    "ContractDecision",
    "SchemaContract",
    "check_new_column",
    "check_new_table",
    "check_variant",
    "decide",
    "is_new_table",
    "resolve_contract",
]

CONTRACT_MODES: Final[tuple[str, ...]] = ("evolve", "freeze", "discard_row", "discard_value")
CONTRACT_ENTITIES: Final[tuple[str, ...]] = ("tables", "columns", "data_type")

Entity = Literal["tables", "columns", "data_type"]
Action = Literal["keep", "drop_row", "drop_value"]


def _mode_of(value: object) -> str | None:
    """A mode as given (checked by the field's validator); a non-string shows as written."""
    return value if value is None or isinstance(value, str) else repr(value)


def _check_mode(
    instance: object, attribute: attrs.Attribute[str | None], value: str | None
) -> None:
    if value is not None and value not in CONTRACT_MODES:
        raise InvalidSchemaError(
            f"schema_contract {attribute.name}={value!r} is not one of {', '.join(CONTRACT_MODES)}"
        )


@attrs.frozen
class SchemaContract:
    """Modes per entity; ``None`` means "not set here" (inherit), resolved to ``evolve``."""

    tables: str | None = attrs.field(default=None, validator=_check_mode)
    columns: str | None = attrs.field(default=None, validator=_check_mode)
    data_type: str | None = attrs.field(default=None, validator=_check_mode)

    @classmethod
    def parse(cls, value: object) -> SchemaContract:
        """From the stored/hint form: ``None``, a mode string, a dict, or a SchemaContract."""
        if value is None:
            return cls()
        if isinstance(value, SchemaContract):
            return value
        if isinstance(value, str):
            return cls(value, value, value)
        if isinstance(value, Mapping):
            unknown = set(value) - set(CONTRACT_ENTITIES)
            if unknown:
                raise InvalidSchemaError(
                    f"schema_contract has unknown entities {sorted(unknown)}; use "
                    f"{', '.join(CONTRACT_ENTITIES)}"
                )
            return cls(
                _mode_of(value.get("tables")),
                _mode_of(value.get("columns")),
                _mode_of(value.get("data_type")),
            )
        raise InvalidSchemaError(f"schema_contract must be a mode or a dict, got {value!r}")

    def over(self, fallback: SchemaContract) -> SchemaContract:
        """This contract with unset entities taken from ``fallback``."""
        return SchemaContract(
            self.tables if self.tables is not None else fallback.tables,
            self.columns if self.columns is not None else fallback.columns,
            self.data_type if self.data_type is not None else fallback.data_type,
        )

    def resolved(self) -> SchemaContract:
        """Every entity set (unset ones ``evolve``)."""
        return self.over(SchemaContract("evolve", "evolve", "evolve"))

    def mode(self, entity: str) -> str:
        value: str | None = getattr(self, entity)
        return "evolve" if value is None else value

    def to_stored(self) -> str | dict[str, str] | None:
        """The compact stored form: a string when all three agree, else a dict of set ones."""
        values: dict[str, str] = {
            e: getattr(self, e) for e in CONTRACT_ENTITIES if getattr(self, e) is not None
        }
        if not values:
            return None
        if len(values) == 3 and len(set(values.values())) == 1:
            return next(iter(values.values()))
        return values


@attrs.frozen
class ContractDecision:
    """What to do with a change: keep it, drop the row, or drop the value."""

    action: Action
    entity: str
    mode: str

    @property
    def keep(self) -> bool:
        return self.action == "keep"


_KEEP: Final = {e: ContractDecision("keep", e, "evolve") for e in CONTRACT_ENTITIES}


def decide(
    contract: SchemaContract,
    entity: Entity,
    *,
    table: str,
    column: str | None = None,
    value: TDataItem = None,
    table_is_new: bool = False,
    schema_name: str | None = None,
) -> ContractDecision:
    """The decision for one change; raises :class:`DataValidationError` under ``freeze``.

    ``table_is_new``: the table is created by this load, so ``columns`` and ``data_type`` do
    not apply to it (dlt's behaviour).
    """
    if entity not in CONTRACT_ENTITIES:
        raise ValueError(f"unknown contract entity {entity!r}")
    if table_is_new and entity != "tables":
        return _KEEP[entity]
    mode = contract.mode(entity)
    if mode == "evolve":
        return _KEEP[entity]
    if mode == "freeze":
        raise DataValidationError(
            schema_name=schema_name,
            table=table,
            column=column,
            entity=entity,
            mode=mode,
            value=value,
        )
    if mode == "discard_row" or entity == "tables":
        return ContractDecision("drop_row", entity, mode)
    return ContractDecision("drop_value", entity, mode)


# --------------------------------------------------------------------------- schema-level helpers


class SchemaView(Protocol):
    """What the schema-level helpers read of a schema (:class:`loadstone.schema.Schema` is
    the one): named by protocol, because the schema's own lookups use this module."""

    @property
    def name(self) -> str: ...

    @property
    def settings(self) -> SchemaSettings: ...

    @property
    def tables(self) -> Mapping[str, Table]: ...

    def root_table(self, table_name: str) -> Table: ...


def is_new_table(schema: SchemaView, table_name: str) -> bool:
    """True when ``table_name`` has no column with a data type yet (not created anywhere)."""
    table = schema.tables.get(table_name)
    if table is None:
        return True
    return not any(column.data_type is not None for column in table.columns.values())


def resolve_contract(
    schema: SchemaView, table_name: str, *, parent_name: str | None = None
) -> SchemaContract:
    """The effective contract of a table: its root table's hint over the schema's setting.

    For a table not in the schema yet, pass ``parent_name`` (a nested table being created)
    so the contract of its root is used.
    """
    schema_level = SchemaContract.parse(schema.settings.schema_contract)
    root_name: str | None = None
    if table_name in schema.tables:
        root_name = schema.root_table(table_name).name
    elif parent_name is not None and parent_name in schema.tables:
        root_name = schema.root_table(parent_name).name
    table_level = SchemaContract()
    if root_name is not None:
        table_level = SchemaContract.parse(schema.tables[root_name].schema_contract)
    return table_level.over(schema_level).resolved()


def check_new_table(
    schema: SchemaView, table_name: str, *, parent_name: str | None = None, value: TDataItem = None
) -> ContractDecision:
    """Decision for rows of a table the data would create (``tables`` entity)."""
    contract = resolve_contract(schema, table_name, parent_name=parent_name)
    return decide(contract, "tables", table=table_name, value=value, schema_name=schema.name)


def check_new_column(
    schema: SchemaView,
    table_name: str,
    column_name: str,
    value: TDataItem,
    *,
    table_is_new: bool | None = None,
) -> ContractDecision:
    """Decision for a new column (``columns`` entity). A null value creates nothing: keep.

    ``table_is_new``: whether the table was new when the *load* started (a table created by
    this load accepts columns for all its rows); defaults to :func:`is_new_table` now, which
    is right only before the load adds anything.
    """
    return _check_value(schema, "columns", table_name, column_name, value, table_is_new)


def check_variant(
    schema: SchemaView,
    table_name: str,
    variant_column: str,
    value: TDataItem,
    *,
    table_is_new: bool | None = None,
) -> ContractDecision:
    """Decision for a value that needs the variant column ``variant_column`` (``data_type``)."""
    return _check_value(schema, "data_type", table_name, variant_column, value, table_is_new)


def _check_value(
    schema: SchemaView,
    entity: Entity,
    table_name: str,
    column_name: str,
    value: TDataItem,
    table_is_new: bool | None,
) -> ContractDecision:
    """A value that would add a column or a variant: nulls create nothing, so they keep."""
    if value is None:
        return _KEEP[entity]
    return decide(
        resolve_contract(schema, table_name),
        entity,
        table=table_name,
        column=column_name,
        value=value,
        table_is_new=is_new_table(schema, table_name) if table_is_new is None else table_is_new,
        schema_name=schema.name,
    )
