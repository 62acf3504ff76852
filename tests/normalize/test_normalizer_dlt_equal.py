"""The relational normalizer produces what dlt 1.31 produces for the same input.

Expected results were captured once by running dlt as a black box
(``/work/oracle/run_dlt.py``: pipeline into DuckDB, then the stored schema and the rows) and
are kept as JSON under ``tests/fixtures/relational/``. Inputs are the real cases
(``tests/fixtures/cases``, copies of the shared cases) and ``hostile_input.json``.
"""

from __future__ import annotations

import datetime
import decimal
import json
from pathlib import Path
from typing import Any

import pytest
from normalizer_support import (
    StandInPackage,
    load_fixture,
    read_table,
    schema_tables,
    snake_case,
)
from schema_documents import schema_of

from loadstone.normalizers.contract import NormalizeContext
from loadstone.plugins.normalizers.relational import RelationalNormalizer

REAL_CASES = [
    ("github_events.json", "events"),
    ("github_issues.json", "issues"),
    ("weird_rows.json", "weird"),
]
HOSTILE = load_fixture("hostile_input.json")["cases"]
HOSTILE_NAMES = [case["name"] for case in HOSTILE]
#: cases whose every row key is deterministic (supplied root ids; primary-key hashes)
DETERMINISTIC_IDS = {"supplied_ids", "upsert", "insert_only", "scd2"}
RANDOM_ID_COLUMNS = {"_dlt_id", "_dlt_parent_id", "_dlt_root_id"}


def _normalize(tmp_path: Path, table: str, records: list[Any], hints: dict[str, Any]) -> Any:
    package = StandInPackage(tmp_path / "package")
    package.add_jsonl(table, records)
    package.table_hints = {table: hints}
    context = NormalizeContext(spark=None, naming=snake_case())
    return RelationalNormalizer().normalize(package, schema_of(), context)


def _comparable(value: Any) -> Any:
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    return value


def _rows(rows: list[list[Any]] | list[dict[str, Any]], columns: list[str]) -> list[str]:
    out = []
    for row in rows:
        values = row if isinstance(row, list) else [row.get(c) for c in columns]
        out.append(json.dumps([_comparable(v) for v in values], sort_keys=True, default=str))
    return sorted(out)


def _assert_same_schema(expected: dict[str, Any], result: Any) -> None:
    tables = schema_tables(result)
    assert list(tables) == expected["table_order"]
    for name, table in expected["tables"].items():
        got = tables[name]
        assert [(c["name"], c["data_type"]) for c in table["columns"]] == [
            (c["name"], c.get("data_type")) for c in got["columns"].values()
        ], name
        assert got.get("parent") == table["parent"], name
        assert result.tables[name].row_count == table["row_count"], name


@pytest.mark.oracle
@pytest.mark.parametrize(("file_name", "table"), REAL_CASES)
def test_real_cases_give_dlt_tables_columns_types_and_row_counts(
    tmp_path: Path, cases_dir: Path, file_name: str, table: str
) -> None:
    expected = load_fixture(f"expected_{table}.json")
    records = json.loads((cases_dir / file_name).read_text(encoding="utf-8"))
    result = _normalize(tmp_path, table, records, {})
    _assert_same_schema(expected, result)


@pytest.mark.oracle
@pytest.mark.parametrize("case", HOSTILE, ids=HOSTILE_NAMES)
def test_hostile_data_gives_dlt_schema(tmp_path: Path, case: dict[str, Any]) -> None:
    expected = load_fixture(f"expected_{case['name']}.json")
    result = _normalize(tmp_path, case["table"], case["records"], case["hints"])
    _assert_same_schema(expected, result)


@pytest.mark.oracle
@pytest.mark.parametrize("case", HOSTILE, ids=HOSTILE_NAMES)
def test_hostile_data_gives_dlt_values(tmp_path: Path, case: dict[str, Any]) -> None:
    """Every value equals dlt's; row keys too where they are deterministic."""
    expected = load_fixture(f"expected_{case['name']}.json")
    result = _normalize(tmp_path, case["table"], case["records"], case["hints"])
    for name, table in expected["tables"].items():
        skip = {"_dlt_load_id", "_dlt_valid_from"}
        if case["name"] not in DETERMINISTIC_IDS:
            skip |= RANDOM_ID_COLUMNS
        keep = [i for i, c in enumerate(table["db_columns"]) if c not in skip]
        columns = [table["db_columns"][i] for i in keep]
        expected_rows = [[row[i] for i in keep] for row in table["rows"]]
        assert _rows(read_table(result, name), columns) == _rows(expected_rows, columns), name


def test_weird_text_values_arrive_unchanged(tmp_path: Path, cases_dir: Path) -> None:
    expected = load_fixture("expected_weird.json")["tables"]["weird"]
    records = json.loads((cases_dir / "weird_rows.json").read_text(encoding="utf-8"))
    result = _normalize(tmp_path, "weird", records, {})
    got = {row["idx"]: row["str"] for row in read_table(result, "weird")}
    assert got == {row[0]: row[1] for row in expected["rows"]}


def test_nested_row_keys_derive_from_a_supplied_root_key(tmp_path: Path) -> None:
    case = next(c for c in HOSTILE if c["name"] == "supplied_ids")
    expected = load_fixture("expected_supplied_ids.json")["tables"]["supplied__kids__grand"]
    result = _normalize(tmp_path, case["table"], case["records"], case["hints"])
    columns = expected["db_columns"]
    got = {
        (r["_dlt_parent_id"], r["_dlt_list_idx"]): r["_dlt_id"]
        for r in read_table(result, "supplied__kids__grand")
    }
    want = {
        (row[columns.index("_dlt_parent_id")], row[columns.index("_dlt_list_idx")]): row[
            columns.index("_dlt_id")
        ]
        for row in expected["rows"]
    }
    assert got == want


def test_upsert_root_keys_are_the_dlt_primary_key_hash(tmp_path: Path) -> None:
    case = next(c for c in HOSTILE if c["name"] == "upsert")
    expected = load_fixture("expected_upsert.json")["tables"]["upserted"]
    result = _normalize(tmp_path, case["table"], case["records"], case["hints"])
    columns = expected["db_columns"]
    want = {row[columns.index("id")]: row[columns.index("_dlt_id")] for row in expected["rows"]}
    assert {r["id"]: r["_dlt_id"] for r in read_table(result, "upserted")} == want


@pytest.mark.oracle
@pytest.mark.parametrize("case", HOSTILE, ids=HOSTILE_NAMES)
def test_hostile_data_gives_dlt_column_hints(tmp_path: Path, case: dict[str, Any]) -> None:
    """Nullability and every column hint (row_key, parent_key, variant, x-valid-from ...)."""
    expected = load_fixture(f"expected_{case['name']}.json")
    tables = schema_tables(_normalize(tmp_path, case["table"], case["records"], case["hints"]))
    _assert_same_hints(expected, tables)


@pytest.mark.oracle
@pytest.mark.parametrize(("file_name", "table"), REAL_CASES)
def test_real_cases_give_dlt_column_hints(
    tmp_path: Path, cases_dir: Path, file_name: str, table: str
) -> None:
    expected = load_fixture(f"expected_{table}.json")
    records = json.loads((cases_dir / file_name).read_text(encoding="utf-8"))
    _assert_same_hints(expected, schema_tables(_normalize(tmp_path, table, records, {})))


def _assert_same_hints(expected: dict[str, Any], tables: Any) -> None:
    for name, table in expected["tables"].items():
        want = [
            {k: v for k, v in c.items() if v is not None or k.startswith("x-")}
            for c in table["columns"]
        ]
        got = [
            {k: v for k, v in c.items() if v is not None or k.startswith("x-")}
            for c in tables[name]["columns"].values()
        ]
        assert got == want, name
