"""Spark destination rules that need no JVM: types, quoting, the profile, dispositions."""

from __future__ import annotations

import pytest

from loadstone.exceptions import UnsupportedType, UnsupportedWriteDisposition
from loadstone.plugin_manager import get_destination
from loadstone.plugins.destinations.spark.dispositions import refuse_unsupported
from loadstone.plugins.destinations.spark.types import (
    qualified,
    quote,
    spark_type,
    types_compatible,
)
from loadstone.plugins.destinations.tables import TableModel
from loadstone.schema import Column
from tests.destinations.schema_support import stored_schema as as_schema


@pytest.mark.parametrize(
    ("column", "expected"),
    [
        ({"data_type": "text"}, "STRING"),
        ({"data_type": "json"}, "STRING"),
        ({"data_type": "time"}, "STRING"),
        ({"data_type": "double"}, "DOUBLE"),
        ({"data_type": "bool"}, "BOOLEAN"),
        ({"data_type": "date"}, "DATE"),
        ({"data_type": "binary"}, "BINARY"),
        ({"data_type": "bigint"}, "BIGINT"),
        ({"data_type": "bigint", "precision": 8}, "TINYINT"),
        ({"data_type": "bigint", "precision": 16}, "SMALLINT"),
        ({"data_type": "bigint", "precision": 32}, "INT"),
        ({"data_type": "bigint", "precision": 128}, "DECIMAL(38,0)"),
        ({"data_type": "timestamp"}, "TIMESTAMP"),
        ({"data_type": "timestamp", "timezone": False}, "TIMESTAMP_NTZ"),
        ({"data_type": "decimal"}, "DECIMAL(38,9)"),
        ({"data_type": "decimal", "precision": 10, "scale": 2}, "DECIMAL(10,2)"),
        ({"data_type": "wei"}, "DECIMAL(38,0)"),
    ],
)
def test_schema_types_map_to_spark_sql_types(column: dict, expected: str) -> None:
    assert spark_type(Column.from_dict(column, "c")) == expected


def test_a_decimal_wider_than_38_digits_is_refused_naming_table_and_column() -> None:
    with pytest.raises(UnsupportedType, match=r"table 'prices' column 'amount'.*38 digits"):
        spark_type(Column("amount", data_type="decimal", precision=50), "prices")


def test_identifiers_are_backtick_quoted_with_backticks_doubled() -> None:
    assert quote("a`b") == "`a``b`"
    assert qualified(None, "shop", "users") == "`shop`.`users`"
    assert qualified("cat", "shop", "users") == "`cat`.`shop`.`users`"


def test_catalog_type_names_compare_as_spark_spells_them() -> None:
    assert types_compatible("decimal(38,0)", "DECIMAL(38,0)")
    assert types_compatible("int", "INT")
    assert not types_compatible("string", "BIGINT")


def test_the_profile_is_case_insensitive_lower_case_and_has_a_loader() -> None:
    spark = get_destination("spark")
    assert spark.has_loader
    caps = spark.capabilities
    assert (caps.casefold, caps.has_case_sensitive_identifiers) == ("lower", False)
    assert caps.max_identifier_length == 128
    assert caps.supported_merge_strategies == ("delete-insert",)
    assert caps.supports_transactions is False


def _model(**tables: dict) -> TableModel:
    class Names:
        def ident(self, name: str) -> str:
            return name

        def table_ident(self, name: str) -> str:
            return name

    return TableModel(as_schema({"name": "shop", "tables": tables}), Names())


def _table(**hints: object) -> dict:
    return {"columns": {"id": {"data_type": "bigint"}}, **hints}


@pytest.mark.parametrize("disposition", ["append", "replace", "merge"])
def test_append_replace_and_delete_insert_merge_are_accepted(disposition: str) -> None:
    refuse_unsupported(_model(users=_table(write_disposition=disposition)))


@pytest.mark.parametrize(
    ("hints", "shown"),
    [
        ({"write_disposition": "merge", "x-merge-strategy": "scd2"}, "merge (strategy 'scd2')"),
        ({"write_disposition": {"disposition": "merge", "strategy": "upsert"}}, "'upsert'"),
        (
            {
                "write_disposition": "merge",
                "columns": {
                    "id": {"data_type": "bigint"},
                    "gone": {"data_type": "bool", "hard_delete": True},
                },
            },
            "hard_delete column 'gone'",
        ),
    ],
)
def test_merge_is_refused_naming_table_and_strategy(hints: dict, shown: str) -> None:
    model = _model(users=_table(**hints), users__pets=_table(parent="users"))
    with pytest.raises(UnsupportedWriteDisposition) as raised:
        refuse_unsupported(model)
    assert "table 'users'" in str(raised.value)
    assert shown in str(raised.value)
    assert "supports append, replace and merge with strategy 'delete-insert'" in str(raised.value)
