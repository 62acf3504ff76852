"""Specification of hints from code (loadstone.schema.hints)."""

from __future__ import annotations

import pytest

from loadstone.exceptions import InvalidPrecisionError
from loadstone.plugin_manager import naming_convention
from loadstone.schema import Column, InvalidSchemaError, Schema, Table
from loadstone.schema.hints import normalize_hints, parse_write_disposition, table_from_hints


def test_columns_as_dict() -> None:
    table = table_from_hints("t", columns={"a": {"data_type": "bool", "nullable": True}})
    assert table.columns["a"] == Column("a", data_type="bool", nullable=True)


def test_columns_as_list_of_dicts() -> None:
    table = table_from_hints("t", columns=[{"name": "v", "data_type": "double", "precision": 10}])
    assert table.columns["v"].precision == 10


def test_invalid_precision_in_column_hint_is_rejected() -> None:
    with pytest.raises(InvalidPrecisionError):
        table_from_hints("t", columns={"a": {"data_type": "timestamp", "precision": 12}})


def test_primary_key_marks_columns_not_null() -> None:
    table = table_from_hints("t", primary_key=["id", "sub"])
    assert table.columns_with_hint("primary_key") == ["id", "sub"]
    assert table.columns["id"].nullable is False


def test_merge_key_as_string() -> None:
    assert table_from_hints("t", merge_key="k").columns["k"].merge_key is True


def test_write_disposition_string() -> None:
    assert table_from_hints("t", write_disposition="replace").write_disposition == "replace"


def test_write_disposition_dict_stores_merge_strategy_as_dlt_does() -> None:
    table = table_from_hints("t", write_disposition={"disposition": "merge", "strategy": "scd2"})
    assert table.write_disposition == "merge" and table.merge_strategy == "scd2"
    assert table.to_dict(with_names=False)["x-merge-strategy"] == "scd2"
    assert table.columns["_dlt_valid_from"].extra == {"x-valid-from": True}
    assert table.columns["_dlt_valid_to"].data_type == "timestamp"


@pytest.mark.parametrize(
    "value",
    [
        "upsert_all",
        {"disposition": "merge", "strategy": "magic"},
        {"disposition": "merge", "strategy": "truncate-and-insert"},
    ],
)
def test_invalid_write_dispositions_are_rejected(value: object) -> None:
    with pytest.raises(InvalidSchemaError):
        parse_write_disposition(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "value",
    [
        {"disposition": "replace", "strategy": "staging-optimized"},
        {"disposition": "replace", "strategy": "truncate-and-insert"},
        {"disposition": "append", "strategy": "upsert"},
        {"disposition": "replace", "strategy": "bogus", "validity_column_names": ["a", "b"]},
    ],
)
def test_the_strategy_of_a_disposition_other_than_merge_is_ignored_as_in_dlt(
    value: dict[str, object],
) -> None:
    assert parse_write_disposition(value) == (value["disposition"], {})


def test_schema_contract_is_validated_and_kept() -> None:
    assert table_from_hints("t", schema_contract={"columns": "freeze"}).schema_contract == {
        "columns": "freeze"
    }
    with pytest.raises(InvalidSchemaError):
        table_from_hints("t", schema_contract="melt")


def test_max_nesting_is_a_normalizer_hint() -> None:
    assert table_from_hints("t", max_nesting=2).max_nesting == 2


def test_identifiers_in_source_form_are_normalized() -> None:
    table = table_from_hints(
        "MyTable", columns={"createdAt": {"data_type": "timestamp"}}, primary_key="ItemId"
    )
    normalized = normalize_hints(table, naming_convention("snake_case"))
    assert normalized.name == "my_table"
    assert normalized.column_names() == ["created_at", "item_id"]
    assert normalized.columns["item_id"].primary_key is True


def test_identifiers_in_destination_form_pass_unchanged() -> None:
    table = table_from_hints("my_table", columns={"payload__id": {"data_type": "bigint"}})
    assert normalize_hints(table, naming_convention("snake_case")) == table


def test_legacy_whole_identifier_normalization() -> None:
    table = table_from_hints("t", columns={"a__b": {"data_type": "bigint"}})
    legacy = normalize_hints(table, naming_convention("snake_case"), use_break_path=False)
    assert legacy.column_names() == ["a_b"]


def test_source_and_destination_spellings_merge_into_one_column() -> None:
    table = table_from_hints(
        "t", columns={"createdAt": {"data_type": "timestamp"}}, merge_key="created_at"
    )
    normalized = normalize_hints(table, naming_convention("snake_case"))
    assert normalized.columns == {
        "created_at": Column("created_at", data_type="timestamp", merge_key=True, nullable=False)
    }


def test_update_table_merges_partial_hints_into_schema() -> None:
    schema = Schema("s")
    schema.update_table(Table("t", columns=[Column("id", data_type="bigint")]))
    schema.update_table(
        normalize_hints(
            table_from_hints("t", primary_key="id", write_disposition="merge"),
            naming_convention("snake_case"),
        )
    )
    table = schema.get_table("t")
    assert table.columns["id"] == Column("id", data_type="bigint", primary_key=True, nullable=False)
    assert table.write_disposition == "merge"
