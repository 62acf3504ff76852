"""A schema built by loadstone with every feature is the file verified to load in dlt 1.31.

``rich_schema()`` builds it; ``tests/fixtures/schemas/rich.loadstone.schema.yaml`` is its
saved form, which /work/oracle/check_roundtrip.py loaded with dlt's ``Schema.from_dict`` and
through a pipeline's ``import_schema_path`` (see the helper report). This test keeps our
output identical to that verified file, so a format drift shows up here.
"""

from __future__ import annotations

import locations
import yaml

from loadstone.plugin_manager import naming_convention
from loadstone.schema import Schema, Table, load_schema_file
from loadstone.schema.hints import normalize_hints, table_from_hints

RICH = locations.FIXTURES / "schemas" / "rich.loadstone.schema.yaml"


def rich_schema() -> Schema:
    naming = naming_convention("snake_case")
    schema = Schema("rich")
    schema.add_type_detection("iso_date")
    schema.merge_hints({"partition": ["re:_timestamp$"]})
    schema.update_preferred_types({"re:_at$": "timestamp", "amount": "decimal"})
    schema.set_schema_contract({"tables": "evolve", "columns": "evolve"})
    schema.update_json_normalizer_config(max_nesting=5)
    schema.update_table(
        normalize_hints(
            table_from_hints(
                "Orders",
                columns={"orderId": {"data_type": "bigint"}, "Notes": {"data_type": "json"}},
                primary_key="orderId",
                write_disposition={"disposition": "merge", "strategy": "scd2"},
                schema_contract={"data_type": "freeze"},
                description="orders from the shop",
                resource="orders",
            ),
            naming,
        )
    )
    row = {
        "order_id": 1,
        "created_at": "2024-01-01T00:00:00Z",
        "event_timestamp": 5,
        "amount": "12.50",
        "day": "2024-01-01",
        "_dlt_id": "x",
        "_dlt_load_id": "1.2",
    }
    for name, value in row.items():
        schema.update_table(Table("orders", columns=[schema.infer_column("orders", name, value)]))
    schema.update_table(
        Table("orders", columns=[schema.infer_variant_column("orders", "order_id", "A-1", naming)])
    )
    schema.update_table(
        Table("orders__items", parent="orders").with_normalizer_hint("seen-data", True)
    )
    for name, value in {
        "sku": "x",
        "_dlt_parent_id": "p",
        "_dlt_list_idx": 0,
        "_dlt_id": "i",
        "_dlt_root_id": "r",
    }.items():
        schema.update_table(
            Table("orders__items", columns=[schema.infer_column("orders__items", name, value)])
        )
    return schema


def test_rich_schema_is_the_file_verified_in_dlt() -> None:
    built = rich_schema()
    stored = yaml.safe_load(RICH.read_text())
    assert built.to_dict(remove_names=True) == stored


def test_rich_schema_file_round_trips() -> None:
    loaded = load_schema_file(RICH)
    assert loaded == rich_schema() and not loaded.was_modified_on_load
    orders = loaded.get_table("orders")
    assert orders.columns["order_id__v_text"].variant is True
    assert orders.columns["event_timestamp"].partition is True
    assert orders.columns["amount"].data_type == "decimal"
    assert orders.columns["day"].data_type == "date"
    assert loaded.get_table("orders__items").columns["_dlt_root_id"].root_key is True


def test_recorded_dlt_run_read_our_files_unchanged() -> None:
    """Evidence recorded by the dlt oracle scripts (see the fixture's ``about``)."""
    import json

    record = json.loads((RICH.parent / "dlt_reads_loadstone.json").read_text())
    github = record["github_events.loadstone.schema.yaml"]
    rich = record["rich.loadstone.schema.yaml"]
    assert github["same_content"] and github["same_column_order"] and github["same_settings"]
    assert github["import_schema_path_run"] == "ok" and github["events_columns_equal"]
    assert rich["same_tables"] and rich["same_settings"] and rich["same_normalizers"]
    assert rich["contract_for_orders"]["data_type"] == "freeze"
    assert rich["pipeline_run_with_imported_schema"] == "ok"
