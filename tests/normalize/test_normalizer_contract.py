"""The normalizer contract: plugin, context, output layout, types, schema evolution, errors."""

from __future__ import annotations

import datetime
import decimal
import json
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from normalizer_support import StandInPackage, read_table, schema_tables, snake_case
from schema_documents import schema_of

from loadstone.destinations.contract import Capabilities
from loadstone.exceptions import SchemaContractError
from loadstone.normalizers.contract import (
    IdentifierCollisionError,
    NormalizeContext,
    NormalizeResult,
    arrow_type,
)
from loadstone.plugins.normalizers.relational import RelationalNormalizer, loadstone_normalizer
from loadstone.plugins.normalizers.relational.folders import safe_folder


def _normalize(
    tmp_path: Path,
    records: list[Any],
    *,
    table: str = "t",
    schema: Any = None,
    hints: Any = None,
    naming: Any = None,
    capabilities: Any = None,
) -> NormalizeResult:
    package = StandInPackage(tmp_path / f"package{len(list(tmp_path.glob('package*')))}")
    package.add_jsonl(table, records)
    package.table_hints = {table: hints or {}}
    context = NormalizeContext(spark=None, naming=naming or snake_case(), capabilities=capabilities)
    return RelationalNormalizer().normalize(package, schema or schema_of(), context)


def test_the_plugin_hook_returns_a_normalizer() -> None:
    assert callable(loadstone_normalizer().normalize)


def test_the_plugin_is_found_by_its_entry_point_name() -> None:
    from loadstone.plugin_manager import get_normalizer

    assert isinstance(get_normalizer("relational"), RelationalNormalizer)


def test_context_rejects_an_unknown_bad_record_policy() -> None:
    with pytest.raises(ValueError, match="on_bad_record"):
        NormalizeContext(spark=None, naming=snake_case(), on_bad_record="ignore")


def test_each_table_is_one_parquet_folder_inside_the_package(tmp_path: Path) -> None:
    result = _normalize(tmp_path, [{"a": 1, "kids": [1, 2]}])
    for name, output in result.tables.items():
        assert output.folder.parent == tmp_path / "package0" / "normalized"
        assert output.folder.name == name
        assert all(f.parent == output.folder and f.suffix == ".parquet" for f in output.files)
    assert {n: o.row_count for n, o in result.tables.items()} == {"t": 1, "t__kids": 2}


@pytest.mark.parametrize("name", ["Ünïcode", "a/b", "..", "CON", "x" * 300, "名前", "A", "a"])
def test_folder_names_are_safe_and_distinct(name: str) -> None:
    folder = safe_folder(name)
    assert folder.replace("_", "a").replace("-", "a").isalnum() and folder.isascii()
    assert len(folder) <= 100
    assert safe_folder(name.swapcase()) != folder or name.swapcase() == name


def test_parquet_types_follow_the_data_types(tmp_path: Path) -> None:
    record = {
        "s": "x",
        "i": 1,
        "f": 1.5,
        "b": True,
        "ts": "2023-04-08T05:14:40Z",
        "obj": {"k": [1, {"z": 2}]},
    }
    result = _normalize(tmp_path, [record], hints={"columns": {"obj": {"data_type": "json"}}})
    schema = pq.read_schema(result.tables["t"].files[0])
    assert schema.field("s").type == pa.string()
    assert schema.field("i").type == pa.int64()
    assert schema.field("f").type == pa.float64()
    assert schema.field("b").type == pa.bool_()
    assert schema.field("ts").type == pa.timestamp("us", tz="UTC")
    assert schema.field("obj").type == pa.string()
    row = read_table(result, "t")[0]
    assert json.loads(row["obj"]) == {"k": [1, {"z": 2}]}
    assert row["ts"] == datetime.datetime(2023, 4, 8, 5, 14, 40, tzinfo=datetime.timezone.utc)


def test_arrow_types_for_every_data_type() -> None:
    assert arrow_type("decimal") == pa.decimal128(38, 9)
    assert arrow_type("decimal", 10, 2) == pa.decimal128(10, 2)
    assert arrow_type("wei") == pa.decimal128(38, 0)
    assert arrow_type("date") == pa.date32()
    assert arrow_type("time") == pa.time64("us")
    assert arrow_type("binary") == pa.binary()


def test_ethereum_blocks_keep_integers_beyond_64_bits_exactly(
    tmp_path: Path, cases_dir: Path
) -> None:
    """dlt cannot extract these; DuckDB reads decimal(38, 0) exactly (decimal256 only as DOUBLE)."""
    blocks = json.loads((cases_dir / "ethereum_blocks.json").read_text(encoding="utf-8"))
    result = _normalize(tmp_path, blocks, table="blocks")
    columns = schema_tables(result)["blocks"]["columns"]
    assert columns["total_difficulty"]["data_type"] == "wei"
    files = [str(f) for f in result.tables["blocks"].files]
    got = duckdb.sql(f"SELECT total_difficulty FROM read_parquet({files!r})").fetchall()
    assert sorted(int(v) for (v,) in got) == sorted(b["totalDifficulty"] for b in blocks)
    assert result.tables["blocks__transactions"].row_count == sum(
        len(b["transactions"]) for b in blocks
    )


def test_integers_beyond_38_digits_go_losslessly_to_a_text_variant(tmp_path: Path) -> None:
    huge = 10**60 + 7
    result = _normalize(tmp_path, [{"w": 2**70}, {"w": huge}])
    columns = schema_tables(result)["t"]["columns"]
    assert columns["w"]["data_type"] == "wei"
    assert columns["w__v_text"]["data_type"] == "text"
    rows = read_table(result, "t")
    assert rows[0]["w"] == decimal.Decimal(2**70)
    assert rows[1]["w__v_text"] == str(huge)


def test_a_known_column_keeps_its_schema_type(tmp_path: Path) -> None:
    first = _normalize(tmp_path, [{"v": "a"}])
    second = _normalize(tmp_path, [{"v": 1, "w": 2}], schema=first.schema)
    assert [r["v"] for r in read_table(second, "t")] == ["1"]
    assert second.new_columns == {"t": ("w",)}
    assert second.new_tables == ()
    assert list(schema_tables(second)["t"]["columns"])[:3] == ["v", "_dlt_load_id", "_dlt_id"]


def test_columns_that_only_saw_none_are_not_created(tmp_path: Path) -> None:
    result = _normalize(tmp_path, [{"a": 1, "n": None}, {"a": 2, "n": None}])
    assert "n" not in schema_tables(result)["t"]["columns"]


def test_root_rows_get_the_load_id_and_random_row_keys(tmp_path: Path) -> None:
    rows = read_table(_normalize(tmp_path, [{"a": 1}, {"a": 2}]), "t")
    assert {r["_dlt_load_id"] for r in rows} == {"1700000000.123456"}
    assert len({r["_dlt_id"] for r in rows}) == 2
    assert all(len(r["_dlt_id"]) == 14 and "=" not in r["_dlt_id"] for r in rows)


def test_merge_tables_propagate_the_root_key(tmp_path: Path) -> None:
    result = _normalize(
        tmp_path,
        [{"id": 1, "l": [{"m": [1]}]}],
        hints={"write_disposition": "merge", "primary_key": "id"},
    )
    root_id = read_table(result, "t")[0]["_dlt_id"]
    assert read_table(result, "t__l__m")[0]["_dlt_root_id"] == root_id
    assert schema_tables(result)["t"]["write_disposition"] == "merge"


def test_non_dict_items_are_wrapped_as_value(tmp_path: Path) -> None:
    result = _normalize(tmp_path, [1, 2])
    assert [r["value"] for r in read_table(result, "t")] == [1, 2]


def test_case_sensitive_naming_on_case_insensitive_destination_names_both_identifiers(
    tmp_path: Path,
) -> None:
    from loadstone.plugins.naming.sql_cs_v1 import NamingConvention

    caps = Capabilities(
        max_identifier_length=None,
        max_column_identifier_length=None,
        has_case_sensitive_identifiers=False,
        casefold="lower",
    )
    with pytest.raises(IdentifierCollisionError) as info:
        _normalize(tmp_path, [{"Name": 1, "name": 2}], naming=NamingConvention(), capabilities=caps)
    assert "'Name'" in str(info.value) and "'name'" in str(info.value)
    assert not any((tmp_path / "package0" / "normalized").iterdir())


def test_frozen_columns_reject_a_new_column_of_an_existing_table(tmp_path: Path) -> None:
    first = _normalize(tmp_path, [{"a": 1}])
    with pytest.raises(SchemaContractError, match="'b'"):
        _normalize(
            tmp_path,
            [{"a": 1, "b": 2}],
            schema=first.schema,
            hints={"schema_contract": {"columns": "freeze"}},
        )


def test_discard_row_drops_rows_with_new_columns(tmp_path: Path) -> None:
    first = _normalize(tmp_path, [{"a": 1}])
    second = _normalize(
        tmp_path,
        [{"a": 1, "b": 2}, {"a": 3}],
        schema=first.schema,
        hints={"schema_contract": {"columns": "discard_row"}},
    )
    assert [r["a"] for r in read_table(second, "t")] == [3]


@pytest.mark.parametrize(
    ("contract", "columns"),
    [  # dlt 1.31 (p1224): the discarded row's other changes its contract allows stay
        ({"columns": "discard_row"}, ["a", "s", "s__v_text"]),
        ({"data_type": "discard_row"}, ["a", "s", "b", "c"]),
    ],
)
def test_a_discarded_row_still_makes_the_changes_its_contract_allows(
    tmp_path: Path, contract: dict[str, str], columns: list[str]
) -> None:
    first = _normalize(tmp_path, [{"a": 1, "s": 1}])
    second = _normalize(
        tmp_path,
        [{"a": 2, "b": 2, "s": "text", "c": 3}, {"a": 3}],
        schema=first.schema,
        hints={"schema_contract": contract},
    )
    assert [r["a"] for r in read_table(second, "t")] == [3]
    table = schema_tables(second)["t"]["columns"]
    assert [c for c in table if not c.startswith("_dlt")] == columns


def test_a_known_table_takes_the_hinted_columns_no_data_fills(tmp_path: Path) -> None:
    # dlt 1.31 (p1239): ['id', '_dlt_load_id', '_dlt_id', 'extra', 'untyped'], extra a bool
    first = _normalize(tmp_path, [{"id": 1}])
    second = _normalize(
        tmp_path,
        [{"id": 2}],
        schema=first.schema,
        hints={"columns": {"extra": {"data_type": "bool"}, "untyped": {"nullable": True}}},
    )
    columns = schema_tables(second)["t"]["columns"]
    assert list(columns) == ["id", "_dlt_load_id", "_dlt_id", "extra", "untyped"]
    assert columns["extra"]["data_type"] == "bool" and "data_type" not in columns["untyped"]


def test_long_identifiers_are_shortened_to_the_naming_limit(tmp_path: Path) -> None:
    result = _normalize(tmp_path, [{"k" * 80: {"inner" * 10: 1}}], naming=snake_case(max_length=30))
    assert all(len(c) <= 30 for c in schema_tables(result)["t"]["columns"])


def test_legacy_break_path_setting_normalizes_keys_whole(tmp_path: Path) -> None:
    schema = schema_of({"normalizers": {"use_break_path_on_normalize": False}})
    result = _normalize(tmp_path, [{"a__b": 1}], schema=schema)
    assert "a_b" in schema_tables(result)["t"]["columns"]


def test_default_hints_of_the_schema_apply_to_new_columns(tmp_path: Path) -> None:
    schema = schema_of(
        {"settings": {"default_hints": {"partition": ["re:_at$"], "not_null": ["id"]}}}
    )
    columns = schema_tables(_normalize(tmp_path, [{"id": 1, "created_at": "x"}], schema=schema))[
        "t"
    ]["columns"]
    assert columns["created_at"]["partition"] is True
    assert columns["id"]["nullable"] is False


def test_preferred_types_fix_the_type_of_new_columns(tmp_path: Path) -> None:
    schema = schema_of(
        {"settings": {"preferred_types": {"re:_ts$": "timestamp", "price": "double"}}}
    )
    result = _normalize(tmp_path, [{"seen_ts": 0, "price": 3}], schema=schema)
    columns = schema_tables(result)["t"]["columns"]
    assert (columns["seen_ts"]["data_type"], columns["price"]["data_type"]) == (
        "timestamp",
        "double",
    )
    assert read_table(result, "t")[0]["price"] == 3.0


def test_frozen_tables_reject_a_new_table(tmp_path: Path) -> None:
    with pytest.raises(SchemaContractError, match="tables"):
        _normalize(tmp_path, [{"a": 1}], hints={"schema_contract": "freeze"})


def test_discard_value_on_tables_drops_the_rows_of_a_new_table(tmp_path: Path) -> None:
    result = _normalize(
        tmp_path, [{"a": 1}], hints={"schema_contract": {"tables": "discard_value"}}
    )
    assert "t" not in schema_tables(result)
    assert result.tables == {}


def test_a_new_nested_table_of_an_existing_root_obeys_discard_row(tmp_path: Path) -> None:
    first = _normalize(tmp_path, [{"a": 1}])
    result = _normalize(
        tmp_path,
        [{"a": 2, "pets": [{"name": "Fluffy"}]}],
        schema=first.schema,
        hints={"schema_contract": {"tables": "discard_row"}},
    )
    assert "t__pets" not in schema_tables(result)
    assert [row["a"] for row in read_table(result, "t")] == [2]


def test_a_frozen_column_violation_names_table_column_and_value(tmp_path: Path) -> None:
    first = _normalize(tmp_path, [{"a": 1}])
    with pytest.raises(SchemaContractError) as info:
        _normalize(
            tmp_path,
            [{"a": 1, "b": "surprise"}],
            schema=first.schema,
            hints={"schema_contract": {"columns": "freeze"}},
        )
    assert (info.value.table, info.value.column) == ("t", "b")
    assert "'t'" in str(info.value) and "'b'" in str(info.value) and "surprise" in str(info.value)


def _in_chunks(
    tmp_path: Path, records: list[Any], schema: Any, hints: Any, chunk_bytes: int = 8
) -> NormalizeResult:
    """Normalized in small chunks (one line each by default): each guesses new types alone."""
    package = StandInPackage(tmp_path / f"package{len(list(tmp_path.glob('package*')))}")
    package.add_jsonl("t", records)
    package.table_hints = {"t": hints}
    context = NormalizeContext(spark=None, naming=snake_case())
    return RelationalNormalizer(chunk_bytes=chunk_bytes).normalize(package, schema, context)


def test_a_frozen_data_type_is_judged_by_the_type_the_first_value_gives(tmp_path: Path) -> None:
    # sequentially "a" is text from its first value, so 5 and "abc" both fit; a later chunk
    # that meets 5 first must not fail on "abc" for its own, overturned, guess of bigint
    first = _normalize(tmp_path, [{"id": 1}])
    frozen = {"schema_contract": {"data_type": "freeze"}}
    records = [{"id": 2, "a": "x"}, {"id": 3, "a": 5}, {"id": 4, "a": "abc"}]
    # line 1 is 20 bytes: chunks of 19 bytes put line 1 alone and lines 2 and 3 together
    result = _in_chunks(tmp_path, records, first.schema, frozen, chunk_bytes=19)
    assert schema_tables(result)["t"]["columns"]["a"]["data_type"] == "text"
    assert [r["a"] for r in read_table(result, "t")] == ["x", "5", "abc"]


def test_a_frozen_data_type_still_fails_on_the_value_the_first_type_rejects(
    tmp_path: Path,
) -> None:
    first = _normalize(tmp_path, [{"id": 1}])
    frozen = {"schema_contract": {"data_type": "freeze"}}
    records = [{"id": 2, "a": 5}, {"id": 3, "a": "abc"}, {"id": 4, "a": 6}]
    with pytest.raises(SchemaContractError) as info:
        _in_chunks(tmp_path, records, first.schema, frozen)
    assert (info.value.table, info.value.column) == ("t", "a__v_text")  # the variant, as dlt
    assert "abc" in str(info.value)


def test_the_schemas_contract_governs_a_table_without_one(tmp_path: Path) -> None:
    """``settings.schema_contract`` (set by ``run(schema_contract=)`` or a source's) applies
    to a table that has none of its own, as in dlt 1.31: a new column is refused."""
    first = _normalize(tmp_path, [{"v": 1}])
    first.schema.set_schema_contract({"columns": "freeze"})
    with pytest.raises(SchemaContractError):
        _normalize(tmp_path, [{"v": 2, "w": 3}], schema=first.schema)
