"""Specification of schema contracts (loadstone.schema.contracts).

Unit rules first; then a small sequential normalizer written with the pure contract
functions replays dlt 1.31's observed runs (tests/fixtures/schemas/contracts_dlt.json) and
must end with the same tables, columns and rows.
"""

from __future__ import annotations

import json
import pickle
from typing import Any

import locations
import pytest

from loadstone.exceptions import CoercionError, ContractViolation
from loadstone.plugin_manager import naming_convention
from loadstone.schema import Column, InvalidSchemaError, Schema, Table
from loadstone.schema.contracts import (
    ContractDecision,
    SchemaContract,
    check_new_column,
    check_new_table,
    check_variant,
    decide,
    is_new_table,
    resolve_contract,
)
from loadstone.schema.data_types import coerce_value
from loadstone.schema.hints import table_from_hints

FIXTURE = locations.FIXTURES / "schemas" / "contracts_dlt.json"


def schema_with_table(contract: Any = None, *, schema_contract: Any = None) -> Schema:
    schema = Schema("s")
    schema.update_table(
        Table("t", columns=[Column("a", data_type="bigint")], schema_contract=contract)
    )
    if schema_contract is not None:
        schema.set_schema_contract(schema_contract)
    return schema


# ------------------------------------------------------------------------ parsing & resolution


def test_default_contract_evolves_everything() -> None:
    assert resolve_contract(Schema("s"), "t") == SchemaContract("evolve", "evolve", "evolve")


def test_mode_string_sets_all_entities() -> None:
    assert SchemaContract.parse("freeze") == SchemaContract("freeze", "freeze", "freeze")


def test_dict_sets_given_entities_rest_evolve() -> None:
    contract = resolve_contract(schema_with_table({"columns": "freeze"}), "t")
    assert contract == SchemaContract("evolve", "freeze", "evolve")


def test_unknown_mode_is_rejected() -> None:
    with pytest.raises(InvalidSchemaError, match="frozen"):
        SchemaContract.parse({"columns": "frozen"})


def test_unknown_entity_is_rejected() -> None:
    with pytest.raises(InvalidSchemaError, match="rows"):
        SchemaContract.parse({"rows": "freeze"})


def test_table_contract_overrides_schema_setting_per_entity() -> None:
    schema = schema_with_table({"columns": "evolve"}, schema_contract="freeze")
    assert resolve_contract(schema, "t") == SchemaContract("freeze", "evolve", "freeze")


def test_nested_tables_inherit_the_root_contract() -> None:
    schema = schema_with_table("discard_row")
    schema.update_table(Table("t__x", parent="t", columns=[Column("v", data_type="text")]))
    assert resolve_contract(schema, "t__x").columns == "discard_row"
    assert resolve_contract(schema, "t__new", parent_name="t").tables == "discard_row"


def test_compact_stored_form() -> None:
    assert SchemaContract("freeze", "freeze", "freeze").to_stored() == "freeze"
    assert SchemaContract(columns="freeze").to_stored() == {"columns": "freeze"}


# ------------------------------------------------------------------------ decisions per mode


def test_evolve_keeps_the_change() -> None:
    assert check_new_column(schema_with_table(), "t", "b", 1).keep


def test_freeze_on_columns_raises_naming_table_column_and_value() -> None:
    with pytest.raises(ContractViolation) as info:
        check_new_column(schema_with_table({"columns": "freeze"}), "t", "b", "secret-value")
    error = info.value
    assert (error.table, error.column, error.entity, error.mode) == ("t", "b", "columns", "freeze")
    assert "'t'" in str(error) and "'b'" in str(error) and "secret-value" in str(error)


def test_discard_row_on_columns_drops_the_row() -> None:
    decision = check_new_column(schema_with_table({"columns": "discard_row"}), "t", "b", 1)
    assert decision == ContractDecision("drop_row", "columns", "discard_row")


def test_discard_value_on_columns_drops_the_value() -> None:
    decision = check_new_column(schema_with_table({"columns": "discard_value"}), "t", "b", 1)
    assert decision.action == "drop_value"


def test_freeze_on_data_type_raises_for_a_variant() -> None:
    with pytest.raises(ContractViolation, match="a__v_text"):
        check_variant(schema_with_table({"data_type": "freeze"}), "t", "a__v_text", "x")


def test_discard_row_and_value_on_data_type() -> None:
    assert check_variant(schema_with_table({"data_type": "discard_row"}), "t", "v", "x").action == (
        "drop_row"
    )
    assert (
        check_variant(schema_with_table({"data_type": "discard_value"}), "t", "v", "x").action
        == "drop_value"
    )


def test_freeze_on_tables_raises_for_a_new_table() -> None:
    with pytest.raises(ContractViolation, match="cannot create table 't2'"):
        check_new_table(schema_with_table(schema_contract={"tables": "freeze"}), "t2")


@pytest.mark.parametrize("mode", ["discard_row", "discard_value"])
def test_discarding_on_tables_drops_the_rows_of_the_new_table(mode: str) -> None:
    schema = schema_with_table(schema_contract={"tables": mode})
    assert check_new_table(schema, "t2").action == "drop_row"


def test_a_new_table_accepts_columns_and_variants_whatever_the_contract() -> None:
    schema = Schema("s")
    schema.update_table(table_from_hints("t", schema_contract="freeze"))
    assert is_new_table(schema, "t")
    assert check_new_column(schema, "t", "b", 1).keep
    assert check_variant(schema, "t", "b__v_text", "x").keep


def test_new_table_state_can_be_fixed_at_load_start() -> None:
    schema = schema_with_table({"columns": "freeze"})
    assert check_new_column(schema, "t", "b", 1, table_is_new=True).keep


def test_null_values_never_trigger_contracts() -> None:
    schema = schema_with_table("freeze")
    assert check_new_column(schema, "t", "n", None).keep
    assert check_variant(schema, "t", "a__v_text", None).keep


def test_decide_is_pure_and_picklable() -> None:
    contract = SchemaContract("freeze", "discard_value", "evolve")
    decided = pickle.loads(pickle.dumps(decide))(contract, "columns", table="t", column="c")
    assert decided.action == "drop_value"
    error = ContractViolation(
        schema_name="s", table="t", column="c", entity="columns", mode="freeze"
    )
    assert str(pickle.loads(pickle.dumps(error))) == str(error)


# ------------------------------------------------------------------------ replay of dlt runs


def _load(
    schema: Schema,
    data: dict[str, list[dict[str, Any]]],
    rows: list[dict[str, Any]],
    table_name: str,
    contract: Any,
) -> Schema:
    """A sequential mini-normalizer: returns the new schema; rows go to ``data`` only when the
    whole load succeeds (a load package is atomic)."""
    naming = naming_convention()
    if contract is not None:
        schema.update_table(table_from_hints(table_name, schema_contract=contract))
    work = schema.clone()
    new_at_start: dict[str, bool] = {}

    def table_is_new(name: str) -> bool:
        return new_at_start.setdefault(name, is_new_table(schema, name))

    staged: list[tuple[str, dict[str, Any]]] = []

    def emit(name: str, parent: str | None, row: dict[str, Any]) -> None:
        if table_is_new(name) and not check_new_table(work, name, parent_name=parent).keep:
            return
        if name not in work.tables:
            work.update_table(Table(name, parent=parent))
        out: dict[str, Any] = {}
        nested: list[tuple[str, list[Any]]] = []
        for key, value in row.items():
            if isinstance(value, list):
                nested.append((naming.shorten_fragments(name, key), value))
                continue
            column = work.tables[name].columns.get(key)
            if column is None or column.data_type is None:
                if value is None:
                    continue
                decision = check_new_column(work, name, key, value, table_is_new=table_is_new(name))
                if decision.action == "drop_row":
                    return
                if decision.action == "drop_value":
                    continue
                column = work.infer_column(name, key, value)
                work.update_table(Table(name, columns=[column]))
            try:
                out[key] = coerce_value(column.data_type, None, value)
            except CoercionError:
                variant = work.infer_variant_column(name, key, value, naming)
                decision = check_variant(
                    work, name, variant.name, value, table_is_new=table_is_new(name)
                )
                if decision.action == "drop_row":
                    return
                if decision.action == "drop_value":
                    continue
                work.update_table(Table(name, columns=[variant]))
                out[variant.name] = value
        staged.append((name, out))
        for child, items in nested:
            for item in items:
                emit(child, name, {"value": item})

    for row in rows:
        emit(table_name, None, row)
    for name, out in staged:
        data.setdefault(name, []).append(out)
    return work


def _replay(
    case: dict[str, Any],
) -> tuple[Schema, dict[str, list[dict[str, Any]]], Exception | None]:
    schema = Schema("cp")
    data: dict[str, list[dict[str, Any]]] = {}
    if case["first_run"] is not None:
        schema = _load(schema, data, case["first_run"], "t", None)
    try:
        schema = _load(
            schema, data, case["second_run"], case["second_table"], case["schema_contract"]
        )
    except ContractViolation as error:
        return schema, data, error
    return schema, data, None


CASES = json.loads(FIXTURE.read_text())["cases"]


@pytest.mark.oracle
@pytest.mark.parametrize("case", CASES, ids=[c["label"] for c in CASES])
def test_contract_replay_matches_dlt(case: dict[str, Any]) -> None:
    schema, data, error = _replay(case)
    assert ("error" if error else "ok") == case["outcome"]
    if error is not None:
        assert f"`{error.table}`" in case["error_names"]
        if error.column is not None:
            assert f"`{error.column}`" in case["error_names"]
    columns = {
        name: {c.name: c.data_type for c in schema.tables[name].columns.values() if c.data_type}
        for name in data
    }
    assert columns == case["columns"]
    rows = {
        name: [[repr(row.get(col)) for col in columns[name]] for row in table_rows]
        for name, table_rows in data.items()
    }
    assert rows == case["rows"]
