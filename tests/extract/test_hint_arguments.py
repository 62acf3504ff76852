"""The hint arguments dlt 1.31 takes that loadstone once refused: table variants from
``apply_hints`` / ``merge_hints``, ``make_hints(incremental=, nested_hints=)``,
``make_nested_hints``'s other arguments and the cursor's column hint.

What dlt loads for the same programs is compared in ``tests/compat/hint_argument_scenarios.py``
(recorded fixtures); these pin the resource's answers and the refusals, one each.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import loadstone as dlt

VARIANT_NAME_REQUIRED = "Please provide `str` table name"


def _events() -> Any:
    return dlt.resource(
        [{"id": 1}], name="ev", primary_key="id", write_disposition="merge", columns={"k": {}}
    )


def test_a_variant_of_apply_hints_leaves_the_resource_table_as_it_was() -> None:
    res = _events()
    before = res.compute_table_schema()
    res.apply_hints(table_name="ev_b", write_disposition="append", create_table_variant=True)
    assert (res.table_name, res.compute_table_schema()) == ("ev", before)


def test_a_marked_table_with_a_variant_gets_the_resource_hints_and_the_variant_ones() -> None:
    res = _events().apply_hints(
        table_name="ev_b",
        columns={"x": {"data_type": "double"}},
        primary_key="x",
        create_table_variant=True,
    )
    table = res.compute_table_schema(meta=dlt.mark.with_table_name(None, "ev_b").meta)
    assert table == {
        "columns": {
            "k": {"name": "k"},
            "x": {"name": "x", "data_type": "double", "primary_key": True, "nullable": False},
        },
        "write_disposition": "merge",
        "name": "ev_b",
        "resource": "ev",
        "variant_name": "ev_b",
    }


def test_a_dynamic_table_name_that_names_a_variant_gets_its_hints() -> None:
    res = dlt.resource([{"t": "b"}], name="dyn", table_name=lambda item: item["t"])
    res.apply_hints(table_name="b", write_disposition="replace", create_table_variant=True)
    assert res.compute_table_schema({"t": "b"})["write_disposition"] == "replace"
    assert res.compute_table_schema({"t": "a"})["write_disposition"] == "append"


def test_two_variants_of_one_table_merge() -> None:
    res = _events()
    res.apply_hints(table_name="v", columns={"a": {"data_type": "text"}}, create_table_variant=True)
    res.merge_hints(
        dlt.mark.make_hints(table_name="v", columns={"b": {"data_type": "text"}}),
        create_table_variant=True,
    )
    assert set(res.table_variants["v"]["columns"]) == {"a", "b"}


@pytest.mark.parametrize("table_name", [None, lambda item: "t"])
def test_a_variant_of_apply_hints_needs_a_table_name_as_text(table_name: Any) -> None:
    with pytest.raises(ValueError, match=VARIANT_NAME_REQUIRED):
        _events().apply_hints(table_name=table_name, create_table_variant=True)


def test_a_variant_of_merge_hints_needs_a_table_name() -> None:
    with pytest.raises(ValueError, match=VARIANT_NAME_REQUIRED):
        _events().merge_hints(dlt.mark.make_hints(columns={"x": {}}), create_table_variant=True)


def test_a_variant_in_a_yield_needs_a_table_name(tmp_path: Path) -> None:
    @dlt.resource(name="r")
    def marked() -> Any:
        yield dlt.mark.with_hints({"a": 1}, dlt.mark.make_hints(), create_table_variant=True)

    pipe = dlt.pipeline("no_variant_name", destination="duckdb", pipelines_dir=str(tmp_path))
    with pytest.raises(dlt.PipelineStepFailed) as failed:
        pipe.extract(marked())
    assert VARIANT_NAME_REQUIRED in str(failed.value)


def test_an_incremental_in_merge_hints_is_the_resource_cursor() -> None:
    cursor = dlt.sources.incremental("id", initial_value=2)
    res = dlt.resource([{"id": 1}], name="r")
    res.merge_hints(dlt.mark.make_hints(incremental=cursor))
    assert res.incremental is cursor


def test_make_hints_refuses_bad_nested_hints_where_they_are_given() -> None:
    with pytest.raises(TypeError, match="no_such"):
        dlt.mark.make_hints(nested_hints={"lines": {"no_such": 1}})


def test_nested_hints_in_merge_hints_are_the_resource_nested_hints() -> None:
    res = dlt.resource([{"id": 1}], name="r")
    lines = dlt.mark.make_nested_hints(columns={"q": {"data_type": "text"}})
    res.merge_hints(dlt.mark.make_hints(nested_hints={"lines": lines}))
    assert res.nested_hints == {"lines": {"columns": {"q": {"name": "q", "data_type": "text"}}}}


def test_make_nested_hints_keeps_the_make_hints_arguments_it_does_not_use() -> None:
    hints = dlt.mark.make_nested_hints(table_name="x", file_format="parquet", table_format="delta")
    assert hints == {
        "columns": {},
        "table_name": "x",
        "file_format": "parquet",
        "table_format": "delta",
    }


@pytest.mark.parametrize(
    ("make", "name"),
    [
        (lambda: dlt.mark.make_nested_hints(parent_table_name="other"), "parent_table_name"),
        (lambda: dlt.mark.make_nested_hints(no_such=1), "no_such"),
        (
            lambda: dlt.resource(
                [{"l": [1]}],
                name="r",
                nested_hints={
                    "l": dlt.mark.make_nested_hints(
                        write_disposition={"disposition": "merge", "strategy": "scd2"}
                    )
                },
            ),
            "scd2",
        ),
    ],
)
def test_nested_hints_loadstone_refuses_are_named(make: Any, name: str) -> None:
    with pytest.raises(TypeError, match=name):
        make()


@pytest.mark.parametrize(
    ("cursor_path", "marked"), [("id", "id"), ("Id", "Id"), ("$.id", None), ("a.b", None)]
)
def test_a_cursor_on_a_top_level_field_marks_its_column(
    cursor_path: str, marked: str | None
) -> None:
    res = dlt.resource([{"id": 1}], name="r")
    res.apply_hints(incremental=dlt.sources.incremental(cursor_path))
    columns = res.compute_table_schema()["columns"]
    assert columns == ({marked: {"name": marked, "incremental": True}} if marked else {})


def test_hints_that_are_functions_of_the_item_give_each_table_its_own() -> None:
    res = dlt.resource(
        [{"t": "a", "id": 1}],
        name="r",
        table_name=lambda item: item["t"],
        primary_key=lambda item: "id" if item["t"] == "a" else "t",
        write_disposition=lambda item: "merge" if item["t"] == "a" else "append",
    )
    assert [
        (table["name"], table["write_disposition"], list(table["columns"]))
        for table in (res.compute_table_schema({"t": "a"}), res.compute_table_schema({"t": "b"}))
    ] == [("a", "merge", ["id"]), ("b", "append", ["t"])]


@pytest.mark.parametrize(
    "make",
    [
        lambda: dlt.resource([{"v": 1}], name="r", columns=lambda item: {}),
        lambda: dlt.resource([{"v": 1}], name="r").apply_hints(primary_key=lambda item: "v"),
    ],
)
def test_hint_functions_need_a_table_name_that_is_one(make: Any) -> None:
    with pytest.raises(dlt.InconsistentTableTemplate, match=r"Table name .* must be a function"):
        make()


def test_a_resource_merge_key_holds_no_null() -> None:
    table = dlt.resource([{"w": 1}], name="r", merge_key="w").compute_table_schema()
    assert table["columns"]["w"] == {"name": "w", "merge_key": True, "nullable": False}


def test_make_hints_names_the_table_under_dlt_key() -> None:
    assert dlt.mark.make_hints(table_name="t", write_disposition="append") == {
        "columns": {},
        "write_disposition": "append",
        "table_name": "t",
    }


def test_merge_hints_takes_a_hint_dict_written_as_dlt_writes_it() -> None:
    res = dlt.resource([{"a": 1}], name="r")
    res.merge_hints({"table_name": "t", "columns": {}, "original_columns": {}})
    assert res.table_name == "t"


def test_a_new_write_disposition_drops_the_old_strategy() -> None:
    """dlt 1.31: ``apply_hints(write_disposition="merge")`` after an ``upsert`` merges by
    the default strategy (recorded: ``apply_hints_replaces_and_removes.json``)."""
    res = dlt.resource([{"id": 1}], name="t", primary_key="id")
    res.apply_hints(write_disposition={"disposition": "merge", "strategy": "upsert"})
    res.apply_hints(write_disposition="merge")
    assert "x-merge-strategy" not in res.compute_table_schema()


def test_an_empty_merge_key_or_contract_removes_the_hint() -> None:
    res = dlt.resource([{"id": 1}], name="t", merge_key="id", schema_contract="freeze")
    res.apply_hints(merge_key="", schema_contract={})
    table = res.compute_table_schema()
    assert ("schema_contract" in table, list(table["columns"])) == (False, [])


def test_a_dynamic_table_name_needs_an_item_for_the_table_schema() -> None:
    res = dlt.resource([{"k": "a"}], name="t", table_name=lambda item: item["k"])
    with pytest.raises(dlt.DataItemRequiredForDynamicTableHints):
        res.compute_table_schema()


_VALID_FROM = {
    "name": "_dlt_valid_from",
    "data_type": "timestamp",
    "nullable": True,
    "x-valid-from": True,
}
_VALID_TO = {
    "name": "_dlt_valid_to",
    "data_type": "timestamp",
    "nullable": True,
    "x-valid-to": True,
}
_ROW_VERSION = {
    "name": "_dlt_id",
    "nullable": False,
    "x-row-version": True,
    "unique": False,
    "row_key": False,
}
_REFS = [{"columns": ["a"], "referenced_table": "o", "referenced_columns": ["id"]}]

#: hints -> dlt 1.31's compute_table_schema() (p1216-p1219): its keys in its order
TABLE_SCHEMA_CASES: list[tuple[dict[str, Any], dict[str, Any]]] = [
    (
        {"primary_key": "id", "write_disposition": "merge"},
        {"columns": {"id": {"name": "id", "nullable": False, "primary_key": True}},
         "write_disposition": "merge"},
    ),
    (
        {"write_disposition": {"disposition": "merge", "strategy": "scd2",
                               "active_record_timestamp": "9999-12-31",
                               "boundary_timestamp": "2024-01-01T00:00:00",
                               "retire_absent_rows": False, "natural_key": "nk"}},
        {"columns": {"_dlt_valid_from": _VALID_FROM,
                     "_dlt_valid_to": {**_VALID_TO, "x-active-record-timestamp": "9999-12-31"},
                     "_dlt_id": _ROW_VERSION},
         "x-merge-strategy": "scd2", "x-boundary-timestamp": "2024-01-01T00:00:00",
         "write_disposition": "merge"},
    ),
    (
        {"write_disposition": {"disposition": "merge", "strategy": "scd2"},
         "columns": {"_dlt_valid_from": {"data_type": "date"}, "q": {"data_type": "text"}}},
        {"columns": {"_dlt_valid_from": _VALID_FROM, "q": {"data_type": "text", "name": "q"},
                     "_dlt_valid_to": {**_VALID_TO, "x-active-record-timestamp": None},
                     "_dlt_id": _ROW_VERSION},
         "x-merge-strategy": "scd2", "write_disposition": "merge"},
    ),
    (
        {"primary_key": ["a"], "merge_key": ["a", "b"], "write_disposition": "merge"},
        {"columns": {"a": {"name": "a", "nullable": False, "primary_key": True, "merge_key": True},
                     "b": {"name": "b", "nullable": False, "merge_key": True}},
         "write_disposition": "merge"},
    ),
    (
        {"write_disposition": {"disposition": "merge", "strategy": "upsert"}, "primary_key": "id",
         "references": _REFS, "schema_contract": "freeze", "max_table_nesting": 1,
         "file_format": "jsonl"},
        {"columns": {"id": {"name": "id", "nullable": False, "primary_key": True}},
         "schema_contract": "freeze", "file_format": "jsonl", "references": _REFS,
         "x-normalizer": {"max_nesting": 1}, "x-merge-strategy": "upsert",
         "write_disposition": "merge"},
    ),
    (
        {"references": _REFS, "schema_contract": "evolve", "merge_key": "a"},
        {"columns": {"a": {"name": "a", "nullable": False, "merge_key": True}},
         "write_disposition": "append", "schema_contract": "evolve", "references": _REFS},
    ),
    (
        {"nested_hints": {"sub": {"columns": {"q": {"data_type": "bigint"}}}}},
        {"columns": {}, "write_disposition": "append"},
    ),
    (
        {"columns": {"a": {"data_type": "bigint"}}, "primary_key": "a"},
        {"columns": {"a": {"data_type": "bigint", "name": "a", "primary_key": True,
                           "nullable": False}},
         "write_disposition": "append"},
    ),
]  # fmt: skip


@pytest.mark.parametrize(("hints", "expected"), TABLE_SCHEMA_CASES)
def test_compute_table_schema_gives_dlts_keys_in_dlts_order(
    hints: dict[str, Any], expected: dict[str, Any]
) -> None:
    table = dlt.resource([{"id": 1}], name="r", **hints).compute_table_schema()
    expected = {**expected, "name": "r", "resource": "r"}
    assert json.dumps(table) == json.dumps(expected)


def test_a_cursor_marks_its_column_after_the_keys() -> None:
    # dlt 1.31 (p1216): {'data_type', 'name', 'primary_key', 'nullable', 'incremental'}
    res = dlt.resource(
        [{"a": 1}], name="r", primary_key="a", columns={"a": {"data_type": "bigint"}}
    )
    res.apply_hints(incremental=dlt.sources.incremental("a"))
    column = res.compute_table_schema()["columns"]["a"]
    assert list(column) == ["data_type", "name", "primary_key", "nullable", "incremental"]
