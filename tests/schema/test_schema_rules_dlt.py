"""Schema rules with one definition each, as dlt 1.31 applies them (preferred types, scd2 hints).

dlt (``tests/fixtures/schemas/preferred_types_order_dlt.json``) gives a new column the type of
the first ``preferred_types`` rule, in written order, that matches its name; an exact name has
no priority over an earlier ``re:`` rule. The schema API and the normalizer both answer from
``loadstone.schema.settings.preferred_type_for``, so they agree with dlt and with each other.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import locations
import pytest
from hypothesis import given
from hypothesis import strategies as st
from normalizer_support import StandInPackage, schema_tables, snake_case
from schema_documents import schema_of

from loadstone.extract.resource_hints import make_hints
from loadstone.normalizers.contract import NormalizeContext
from loadstone.plugins.normalizers.relational import RelationalNormalizer
from loadstone.schema import Schema
from loadstone.schema.settings import compile_preferred
from loadstone.schema.system_tables import state_table

FIXTURES = locations.FIXTURES
FIXTURE = FIXTURES / "schemas" / "preferred_types_order_dlt.json"
DLT = json.loads(FIXTURE.read_text(encoding="utf-8"))
CASES = sorted(DLT["cases"].items())


@pytest.mark.parametrize(("label", "case"), CASES, ids=[label for label, _ in CASES])
def test_the_schema_types_new_columns_as_dlt(label: str, case: dict[str, Any]) -> None:
    schema = Schema("s")
    schema.update_preferred_types(case["preferred_types"])
    found = {c: schema.infer_column("t", c, v).data_type for c, v in DLT["row"].items()}
    assert found == case["columns"]


@pytest.mark.parametrize(("label", "case"), CASES, ids=[label for label, _ in CASES])
def test_the_normalizer_types_new_columns_as_dlt(
    tmp_path: Path, label: str, case: dict[str, Any]
) -> None:
    package = StandInPackage(tmp_path)
    package.add_jsonl("t", [DLT["row"]])
    schema = schema_of({"settings": {"preferred_types": case["preferred_types"]}})
    context = NormalizeContext(spark=None, naming=snake_case())
    result = RelationalNormalizer().normalize(package, schema, context)
    columns = schema_tables(result)["t"]["columns"]
    assert {c: columns[c]["data_type"] for c in DLT["row"]} == case["columns"]


def test_scd2_columns_follow_the_declared_columns_as_in_dlt(tmp_path: Path) -> None:
    """One reading of code hints (``table_from_hints``): declared columns, then validity."""
    observed = json.loads((FIXTURES / "relational" / "scd2_columns_dlt.json").read_text())
    package = StandInPackage(tmp_path)
    package.add_jsonl("orders", [observed["row"]])
    package.table_hints = {"orders": make_hints(**observed["hints"])}
    context = NormalizeContext(spark=None, naming=snake_case())
    result = RelationalNormalizer().normalize(package, schema_of(), context)
    columns = schema_tables(result)["orders"]["columns"]
    assert list(columns) == list(observed["columns"])
    for name, expected in observed["columns"].items():
        assert columns[name] == expected, name


def test_hinted_tables_and_columns_keep_dlts_key_order(tmp_path: Path) -> None:
    """dlt 1.31 (p1212, p1220): a key column reads {name, nullable, primary_key} and its
    type comes last; a merge table's strategy comes before its write disposition."""
    package = StandInPackage(tmp_path)
    package.add_jsonl("dim", [{"id": 1, "v": "a"}])
    package.table_hints = {
        "dim": make_hints(
            primary_key="id", write_disposition={"disposition": "merge", "strategy": "scd2"}
        )
    }
    context = NormalizeContext(spark=None, naming=snake_case())
    result = RelationalNormalizer().normalize(package, schema_of(), context)
    table = schema_tables(result)["dim"]
    assert [k for k in table if k != "columns"] == [
        "x-merge-strategy", "write_disposition", "name", "resource", "x-normalizer"
    ]  # fmt: skip
    assert list(table["columns"]["id"]) == ["name", "nullable", "primary_key", "data_type"]
    assert list(table["columns"]["_dlt_id"]) == [
        "name", "nullable", "x-row-version", "unique", "row_key", "data_type"
    ]  # fmt: skip


def test_system_columns_keep_dlts_key_order() -> None:
    # dlt 1.31 (p1211): a precision comes before the description; the state table's name
    # after its formats
    tables = Schema("s").tables
    load_id = ["name", "data_type", "nullable", "precision", "description"]
    assert list(tables["_dlt_loads"]["columns"]["load_id"]) == load_id
    state = state_table()
    assert list(state.to_dict())[1:5] == ["write_disposition", "file_format", "name", "resource"]
    assert list(state.columns["_dlt_load_id"].to_dict()) == load_id


def test_the_normalizer_evolves_a_copy_and_leaves_the_given_schema_alone(tmp_path: Path) -> None:
    """The driver applies facts to ``Schema.copy()``: a failed package changes nothing."""
    schema = Schema("s")
    before = schema.to_dict(bump_version=False)
    package = StandInPackage(tmp_path)
    package.add_jsonl("t", [{"id": 1, "tags": ["a"]}])
    context = NormalizeContext(spark=None, naming=snake_case())
    result = RelationalNormalizer().normalize(package, schema, context)
    assert isinstance(result.schema, Schema) and result.schema is not schema
    assert schema.to_dict(bump_version=False) == before
    assert list(result.schema.tables["t__tags"].columns)[:1] == ["value"]
    assert result.new_tables == ("t", "t__tags")


_NAMES = st.text(alphabet="abi_d", min_size=1, max_size=4)
_RULES = st.dictionaries(
    st.one_of(_NAMES, _NAMES.map(lambda n: f"re:^{n}")),
    st.sampled_from(["text", "bigint", "double", "bool"]),
    max_size=5,
)


@given(rules=_RULES, column=_NAMES)
def test_the_first_matching_rule_in_written_order_wins(rules: dict[str, str], column: str) -> None:
    """One rule for everyone: the schema's inference and the engine's compiled rules agree."""
    expected = next(
        (
            data_type
            for rule, data_type in rules.items()
            if (column.startswith(rule[4:]) if rule.startswith("re:") else rule == column)
        ),
        None,
    )
    assert compile_preferred(rules).type_for(column) == expected
    schema = Schema("s")
    schema.update_preferred_types(rules)
    assert schema.infer_column("t", column, 1.5).data_type == (expected or "double")


def test_tables_and_settings_print_as_dlts_dicts() -> None:
    # dlt 1.31 (p1252, p1220): print(schema.tables["t"]) / print(schema.settings) show dicts
    schema = Schema("s")
    schema.update_table({"name": "t", "columns": {"a": {"name": "a", "data_type": "text"}}})
    assert repr(schema.tables["t"]) == repr(dict(schema.tables["t"].to_dict()))
    assert repr(schema.settings).startswith("{'detections': ['iso_timestamp']")
