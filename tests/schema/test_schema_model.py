"""Specification of the schema model: tables, columns, inference, stored form."""

from __future__ import annotations

import pickle

import pytest

from loadstone.schema import Column, InvalidSchemaError, Schema, Table, TableNotFoundError


def test_new_schema_has_dlt_system_tables_and_relational_hints() -> None:
    schema = Schema("s")
    assert list(schema.tables) == ["_dlt_version", "_dlt_loads"]
    assert schema.settings.detections == ("iso_timestamp",)
    assert schema.settings.default_hints["row_key"] == ("_dlt_id",)
    assert schema.settings.default_hints["parent_key"] == ("_dlt_parent_id",)
    assert schema.settings.default_hints["root_key"] == ("_dlt_root_id",)
    assert schema.settings.default_hints["unique"] == ("_dlt_id",)
    assert set(schema.settings.default_hints["not_null"]) == {
        "_dlt_id",
        "_dlt_root_id",
        "_dlt_parent_id",
        "_dlt_list_idx",
        "_dlt_load_id",
    }


def test_new_schema_records_naming_and_dlt_json_normalizer() -> None:
    stored = Schema("s", naming="sql_cs_v1").to_dict()
    assert stored["normalizers"] == {
        "names": "sql_cs_v1",
        "json": {"module": "dlt.common.normalizers.json.relational"},
    }


def test_dlt_json_module_means_the_relational_plugin() -> None:
    assert Schema("s").json_normalizer == "relational"


def test_use_break_path_on_normalize_defaults_true_and_is_stored() -> None:
    schema = Schema("s")
    assert schema.use_break_path_on_normalize is True
    schema.use_break_path_on_normalize = False
    assert Schema.from_dict(schema.to_dict()).use_break_path_on_normalize is False


def test_max_nesting_lives_in_json_normalizer_config() -> None:
    schema = Schema("s")
    schema.update_json_normalizer_config(max_nesting=2)
    assert schema.to_dict()["normalizers"]["json"]["config"] == {"max_nesting": 2}
    assert Schema.from_dict(schema.to_dict()).max_nesting == 2


def test_infer_column_uses_the_python_type() -> None:
    column = Schema("s").infer_column("t", "n", 5)
    assert (column.data_type, column.nullable) == ("bigint", True)


def test_infer_column_applies_iso_timestamp_detection_by_default() -> None:
    assert Schema("s").infer_column("t", "at", "2023-01-01T00:00:00Z").data_type == "timestamp"


def test_removed_detection_no_longer_applies() -> None:
    schema = Schema("s")
    schema.remove_type_detection("iso_timestamp")
    assert schema.infer_column("t", "at", "2023-01-01T00:00:00Z").data_type == "text"


@pytest.mark.parametrize(
    ("detection", "value", "expected"),
    [
        ("iso_date", "2023-01-01", "date"),
        ("wei_to_double", 2**64, "double"),
    ],
)
def test_added_detection_applies(detection: str, value: object, expected: str) -> None:
    schema = Schema("s")
    without = schema.infer_column("t", "c", value).data_type
    schema.add_type_detection(detection)
    assert schema.infer_column("t", "c", value).data_type == expected != without


def test_large_integer_detection_agrees_with_the_lossless_default() -> None:
    # dlt needs large_integer to make 2**64 a wei column; loadstone already does so without it
    schema = Schema("s")
    schema.add_type_detection("large_integer")
    assert schema.settings.detections == ("iso_timestamp", "large_integer")
    assert schema.infer_column("t", "c", 2**64).data_type == "wei"


def test_timestamp_detection_is_opt_in() -> None:
    import time

    schema = Schema("s")
    assert schema.infer_column("t", "c", time.time()).data_type == "double"
    schema.add_type_detection("timestamp")
    assert schema.infer_column("t", "c", time.time()).data_type == "timestamp"


def test_detections_apply_only_to_new_columns() -> None:
    schema = Schema("s")
    schema.update_table(Table("t", columns=[Column("at", data_type="text")]))
    assert schema.infer_column("t", "at", "2023-01-01T00:00:00Z").data_type == "text"


def test_preferred_types_by_exact_name_win_over_detection() -> None:
    schema = Schema("s")
    schema.update_preferred_types({"at": "text"})
    assert schema.infer_column("t", "at", "2023-01-01T00:00:00Z").data_type == "text"


def test_preferred_types_by_regex() -> None:
    schema = Schema("s")
    schema.update_preferred_types({"re:_at$": "timestamp"})
    assert schema.infer_column("t", "created_at", 5).data_type == "timestamp"
    assert schema.infer_column("t", "at_home", 5).data_type == "bigint"


def test_default_hints_mark_dlt_columns() -> None:
    column = Schema("s").infer_column("t", "_dlt_id", "abc")
    assert (column.nullable, column.unique, column.row_key) == (False, True, True)
    assert Schema("s").infer_column("t", "_dlt_parent_id", "x").parent_key is True
    assert Schema("s").infer_column("t", "_dlt_root_id", "x").root_key is True


def test_merge_hints_by_regex_on_normalized_names() -> None:
    schema = Schema("s")
    schema.merge_hints({"partition": ["re:_timestamp$"]})
    assert schema.infer_column("t", "event_timestamp", "x").partition is True
    assert schema.infer_column("t", "timestamp_x", "x").partition is None


def test_merge_hints_adds_without_duplicates() -> None:
    schema = Schema("s")
    schema.merge_hints({"unique": ["_dlt_id", "id"]})
    assert schema.settings.default_hints["unique"] == ("_dlt_id", "id")


def test_unknown_hint_in_settings_is_rejected() -> None:
    with pytest.raises(InvalidSchemaError, match="primary"):
        Schema("s").merge_hints({"primary": ["id"]})


def test_unknown_detection_is_rejected_by_settings() -> None:
    from loadstone.exceptions import UnknownDetectionError

    with pytest.raises(UnknownDetectionError):
        Schema("s").add_type_detection("iso_stamp")


def test_infer_column_keeps_hints_declared_before_data() -> None:
    schema = Schema("s")
    schema.update_table(Table("t", columns=[Column("id", merge_key=True, nullable=False)]))
    column = schema.infer_column("t", "id", "x")
    assert (column.data_type, column.merge_key, column.nullable) == ("text", True, False)


def test_null_first_value_makes_a_column_without_type() -> None:
    column = Schema("s").infer_column("t", "n", None)
    assert column.data_type is None and not column.is_complete


def test_variant_column_is_named_by_python_type_and_detected() -> None:
    from loadstone.plugin_manager import naming_convention

    schema = Schema("s")
    schema.update_table(Table("t", columns=[Column("c", data_type="bigint")]))
    variant = schema.infer_variant_column("t", "c", "2023-07-26T14:45:00Z", naming_convention())
    assert (variant.name, variant.data_type, variant.variant) == ("c__v_text", "timestamp", True)
    assert variant.to_dict(with_name=False) == {
        "data_type": "timestamp",
        "nullable": True,
        "variant": True,
        "description": "Variant of column c__v_text generated by dlt",
    }


def test_update_table_appends_new_columns_in_order() -> None:
    schema = Schema("s")
    schema.update_table(Table("t", columns=[Column("a", data_type="text")]))
    schema.update_table(
        Table("t", columns=[Column("b", data_type="bigint")], write_disposition="merge")
    )
    table = schema.get_table("t")
    assert table.column_names() == ["a", "b"]
    assert table.write_disposition == "merge"


def test_update_table_merges_hints_into_existing_column() -> None:
    schema = Schema("s")
    schema.update_table(Table("t", columns=[Column("a", data_type="text")]))
    schema.update_table(Table("t", columns=[Column("a", primary_key=True)]))
    assert schema.get_table("t").columns["a"] == Column("a", data_type="text", primary_key=True)


def test_nested_table_needs_its_parent() -> None:
    with pytest.raises(InvalidSchemaError, match="parent"):
        Schema("s").update_table(Table("t__x", parent="t"))


def test_root_and_nested_tables() -> None:
    schema = Schema("s")
    schema.update_table(Table("t"))
    schema.update_table(Table("t__a", parent="t"))
    schema.update_table(Table("t__a__b", parent="t__a"))
    assert schema.root_table("t__a__b").name == "t"
    assert [t.name for t in schema.nested_tables("t")] == ["t__a", "t__a__b"]
    assert schema.data_table_names(include_incomplete=True) == ["t", "t__a", "t__a__b"]
    assert schema.data_table_names() == []  # no typed column yet: dlt lists none


def test_missing_table_error_lists_tables() -> None:
    with pytest.raises(TableNotFoundError, match="_dlt_loads"):
        Schema("s").get_table("nope")


def test_unknown_data_type_is_rejected() -> None:
    with pytest.raises(InvalidSchemaError, match="varchar"):
        Column("a", data_type="varchar")


def test_unknown_write_disposition_is_rejected_on_read() -> None:
    with pytest.raises(InvalidSchemaError, match="upsert_all"):
        Table.from_dict({"columns": {}, "write_disposition": "upsert_all"}, "t")


def test_unknown_keys_round_trip() -> None:
    stored = {
        "columns": {"a": {"data_type": "text", "x-custom": {"k": 1}}},
        "x-normalizer": {"seen-data": True},
        "x-merge-strategy": "scd2",
        "table_format": "iceberg",
    }
    table = Table.from_dict(stored, "t")
    assert table.to_dict(with_names=False) == stored
    assert table.seen_data and table.merge_strategy == "scd2"


def test_column_key_order_is_kept_for_files() -> None:
    stored = {"nullable": False, "merge_key": True, "data_type": "text"}
    assert list(Column.from_dict(stored, "a").to_dict(with_name=False)) == list(stored)


def test_schema_is_picklable_for_spark_workers() -> None:
    schema = Schema("s")
    schema.update_table(Table("t", columns=[Column("a", data_type="text")]))
    clone = pickle.loads(pickle.dumps(schema))
    assert clone == schema and clone.version_hash == schema.version_hash
    assert clone.infer_column("t", "b", 1).data_type == "bigint"


def test_settings_are_frozen_values() -> None:
    settings = Schema("s").settings
    with pytest.raises(AttributeError):
        settings.detections = ()  # type: ignore[misc]


def test_clone_is_independent() -> None:
    schema = Schema("s")
    clone = schema.clone()
    clone.update_table(Table("t"))
    assert "t" not in schema.tables


def test_tables_and_columns_read_like_dlts_stored_dicts() -> None:
    schema = Schema("shop")
    schema.update_table(
        Table("users", columns={"id": Column("id", data_type="bigint", primary_key=True)})
    )
    table = schema.get_table("users")
    assert table["columns"]["id"]["data_type"] == "bigint"
    assert table.columns["id"]["primary_key"] is True
    assert table.get("write_disposition", "append") == "append"
    assert "columns" in table.keys()
