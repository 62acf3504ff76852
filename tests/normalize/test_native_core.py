"""The native engine core writes the Python engine's tables, byte for byte.

``normalize.engine_core = "native"`` parses a chunk's lines with simdjson straight into Arrow
buffers (``native_core.py``, ``_native_core.cpp``); the Python engine stays the reference.
Each case runs through both cores with the root keys' random bytes made the same for both
(so every ``_dlt_id``, ``_dlt_parent_id`` and ``_dlt_root_id`` can be compared too) and
compares every Parquet file byte for byte, the schema and the facts the driver applied.
Where the core hands a chunk back, the Python engine wrote it: the cases say which core a
chunk ran on, so a silent hand-back of the common shapes cannot pass for equality.
"""

from __future__ import annotations

import gzip
import itertools
import json
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from normalizer_support import FIXTURES, StandInPackage, load_fixture, schema_tables, snake_case
from schema_documents import schema_of

from loadstone import plugin_manager
from loadstone.normalizers.contract import NormalizeContext
from loadstone.plugins.normalizers.relational import (
    RelationalNormalizer,
    dispatch,
    native_core,
    row_keys,
)

CASES = sorted((FIXTURES.parent / "cases").glob("*.json.gz"))
HOSTILE = load_fixture("hostile_input.json")["cases"]
#: the real cases the core writes whole (Ethereum blocks hold integers beyond int64)
NATIVE_CASES = {"github_events", "github_issues", "weird_rows"}
#: hostile cases the core takes (the others are merge keys or coercions: handed back)
NATIVE_HOSTILE = {"deep_default"}


def test_the_native_core_is_built() -> None:
    """The suite measures the product CI ships: the core must be importable."""
    assert native_core.CORE_AVAILABLE


def test_without_the_core_the_python_engine_runs_and_says_so_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A machine that built no core (no C++ compiler or simdjson) runs the Python engine."""
    monkeypatch.setattr(native_core, "CORE_AVAILABLE", False)
    monkeypatch.setattr(native_core, "_said_unavailable", False)
    records = [{"a": 1, "b": [{"c": "x"}]}]
    with caplog.at_level("WARNING", logger=native_core.__name__):
        first = _run(monkeypatch, records, "native")
        second = _run(monkeypatch, records, "native")
    assert first["cores"] == second["cores"] == ["native skipped: not built"]
    said = [r for r in caplog.records if "native core" in r.getMessage()]
    assert len(said) == 1


def _fake_urandom() -> Callable[[int], bytes]:
    counter = itertools.count()
    return lambda size: bytes(next(counter) % 251 for _ in range(size))


@pytest.fixture(autouse=True)
def _same_random_bytes(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Root keys are random by design: both cores draw them from one source, made the same
    for each run here, so the keys and every key derived from them compare too."""
    monkeypatch.setattr(row_keys.os, "urandom", _fake_urandom())
    yield
    row_keys._random.forget()


def _run(
    monkeypatch: pytest.MonkeyPatch,
    records: list[Any],
    core: str,
    *,
    hints: dict[str, Any] | None = None,
    naming: str = "snake_case",
    chunk_bytes: int = 1 << 30,
    flush_rows: int = 20000,
) -> dict[str, Any]:
    monkeypatch.setenv("NORMALIZE__ENGINE_CORE", core)
    monkeypatch.setattr(row_keys.os, "urandom", _fake_urandom())
    row_keys._random.forget()
    cores: list[str] = []
    run_chunk = dispatch.run_chunk

    def recorded(*args: Any) -> Any:
        facts = run_chunk(*args)
        cores.append(facts.core)
        return facts

    monkeypatch.setattr(dispatch, "run_chunk", recorded)
    package = StandInPackage(Path(tempfile.mkdtemp(prefix=f"core_{core}_")))
    package.add_jsonl("items", records)
    if hints:
        package.table_hints["items"] = hints
    normalizer = RelationalNormalizer(chunk_bytes=chunk_bytes, flush_rows=flush_rows, workers=1)
    context = NormalizeContext(spark=None, naming=plugin_manager.naming_convention(naming))
    result = normalizer.normalize(package, schema_of(), context)
    monkeypatch.setattr(dispatch, "run_chunk", run_chunk)
    return {
        "schema": json.loads(json.dumps(schema_tables(result), default=str)),
        "files": {
            name: [(Path(f).name, Path(f).read_bytes()) for f in sorted(output.files)]
            for name, output in result.tables.items()
        },
        "counts": {name: output.row_count for name, output in result.tables.items()},
        "new_columns": result.new_columns,
        "bad": result.bad_records,
        "cores": cores,
    }


def _assert_same(python: dict[str, Any], native: dict[str, Any]) -> None:
    assert python["cores"] and set(python["cores"]) == {"python"}
    for key in ("schema", "counts", "new_columns", "bad"):
        assert native[key] == python[key], key
    assert list(native["files"]) == list(python["files"])
    for table, files in python["files"].items():
        assert native["files"][table] == files, table


def _both(monkeypatch: pytest.MonkeyPatch, records: list[Any], **options: Any) -> dict[str, Any]:
    python = _run(monkeypatch, records, "python", **options)
    native = _run(monkeypatch, records, "native", **options)
    _assert_same(python, native)
    return native


@pytest.mark.parametrize("naming", ["snake_case", "sql_cs_v1"])
@pytest.mark.parametrize("case", CASES, ids=[c.name.split(".")[0] for c in CASES])
def test_real_cases_give_the_python_engines_files(
    monkeypatch: pytest.MonkeyPatch, case: Path, naming: str
) -> None:
    records = json.loads(gzip.decompress(case.read_bytes()))
    native = _both(monkeypatch, records, naming=naming)
    name = case.name.split(".")[0]
    if name in NATIVE_CASES:
        assert set(native["cores"]) == {"native"}
    else:
        assert all(c.startswith("native fallback: ") for c in native["cores"])


def test_small_chunks_and_flushes_give_the_python_engines_files(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Many chunks (re-run with the settled types where they guessed otherwise) and a file
    every 7 rows of a table."""
    records = json.loads(
        gzip.decompress((FIXTURES.parent / "cases" / "github_events.json.gz").read_bytes())
    )
    native = _both(monkeypatch, records[:300], chunk_bytes=200_000, flush_rows=7)
    assert len(native["cores"]) > 3 and set(native["cores"]) == {"native"}


@pytest.mark.parametrize("case", HOSTILE, ids=[c["name"] for c in HOSTILE])
def test_hostile_cases_give_the_python_engines_files(
    monkeypatch: pytest.MonkeyPatch, case: dict[str, Any]
) -> None:
    native = _both(monkeypatch, case["records"], hints=case["hints"])
    if case["name"] in NATIVE_HOSTILE:
        assert set(native["cores"]) == {"native"}


@pytest.mark.parametrize(
    ("records", "why"),
    [
        ([{"a": 1}, {"a": "x"}], "text into a column of another type"),
        ([{"a": 1}, {"a": 1.5}], "a double into a column of another type"),
        ([{"a": "x"}, {"a": 1.5}], "a double into a column of another type"),
        ([{"a": 1}, {"a": 2**64}], "a line simdjson refuses"),
        ([{"a": 1}, {"a": 2**63}], "an integer beyond int64"),
        ([{"a": "2023-04-08T05:14:40Z"}, {"a": "Apr 8"}], "text into a column of another type"),
        ([{"a": {"x": 1}, "A": 2}], "keys of one name holding an object or a list"),
        ([{"a": {"b": 1}, "a__b": 2}], "two keys of one row name one column"),
        ([{"_dlt_id": "mine"}], "a key named as the engine's own `_dlt_` columns"),
        ([[1, 2]], "a line that is not a JSON object"),
    ],
)
def test_what_the_core_hands_back_is_the_python_engines(
    monkeypatch: pytest.MonkeyPatch, records: list[Any], why: str
) -> None:
    native = _both(monkeypatch, records)
    assert len(native["cores"]) == 1
    assert native["cores"][0].startswith(f"native fallback: {why}")


def test_keys_of_one_name_keep_the_first_place_and_the_last_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``a``, ``A`` and ``b`` in snake_case: column ``a`` holds the last value, before ``b``."""
    native = _both(monkeypatch, [{"a": 1, "b": True, "A": 2}, {"A": None, "a": 3}])
    assert native["cores"] == ["native"]


@pytest.mark.parametrize(
    "records",
    [
        [{"a": 1.5}, {"a": 2}, {"a": 2**62 + 1}],
        [{"a": 1}, {"a": 2.0}, {"a": -0.0}],
        [{"a": "x"}, {"a": -5}, {"a": True}, {"a": False}],
    ],
    ids=["int-into-double", "whole-double-into-bigint", "int-and-bool-into-text"],
)
def test_values_coerced_into_their_column_are_the_python_engines(
    monkeypatch: pytest.MonkeyPatch, records: list[Any]
) -> None:
    native = _both(monkeypatch, records)
    assert native["cores"] == ["native"]


def test_merge_nested_rows_carry_their_root_key_natively(monkeypatch: pytest.MonkeyPatch) -> None:
    """A merge without keys propagates the root key (``_dlt_root_id``) to every nested row."""
    records = [
        {"id": i, "kids": [{"a": j, "grand": [{"b": k} for k in range(2)]} for j in range(2)]}
        for i in range(5)
    ]
    native = _both(monkeypatch, records, hints={"write_disposition": "merge"})
    assert native["cores"] == ["native"]
    assert "_dlt_root_id" in native["schema"]["items__kids__grand"]["columns"]


def test_a_line_with_duplicate_keys_is_handed_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """JSON's last value wins in the Python engine: the core does not guess."""
    monkeypatch.setenv("NORMALIZE__ENGINE_CORE", "native")
    package = StandInPackage(Path(tempfile.mkdtemp(prefix="core_dup_")))
    path = package.add_jsonl("items", [])
    path.write_text('{"a": {"x": 1}, "a": {"y": 2}}\n', encoding="utf-8")
    result = RelationalNormalizer(workers=1).normalize(
        package, schema_of(), NormalizeContext(spark=None, naming=snake_case())
    )
    columns = schema_tables(result)["items"]["columns"]
    assert "a__y" in columns and "a__x" not in columns


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["x", "", "ключ", "2023-04-08T05:14:40Z", "2023-04-08 05:14:40.123+00:00"]),
)
KEYS = st.sampled_from(["a", "b", "c d", "ключ", "value", "list", "id"])
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=3)),
    max_leaves=8,
)
RECORDS = st.lists(st.dictionaries(KEYS, VALUES, max_size=4), min_size=1, max_size=20)
EXAMPLES = max(10, settings.default.max_examples // 3)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    records=RECORDS,
    chunk_bytes=st.integers(min_value=1, max_value=400),
    flush_rows=st.integers(1, 5),
)
def test_any_records_and_split_give_the_python_engines_files(
    monkeypatch: pytest.MonkeyPatch,
    records: list[dict[str, Any]],
    chunk_bytes: int,
    flush_rows: int,
) -> None:
    _both(monkeypatch, records, chunk_bytes=chunk_bytes, flush_rows=flush_rows)


#: dlt 1.31's tables (and their data columns) per max_table_nesting (p1236): the lists of a
#: row's objects give rows one level below the row, a list in a list two
NESTING_CASES = [
    ({"a": {"l": [{"x": [{"y": 1}]}]}}, 1, {"items": ["a__l"]}),
    ({"a": {"l": [{"x": [{"y": 1}]}]}}, 2, {"items": [], "items__a__l": [], "items__a__l__x": ["y"]}),
    ({"top": [[1, 2], [3]]}, 2, {"items": [], "items__top": ["list"]}),
    ({"top": [[1, 2], [3]]}, 3, {"items": [], "items__top": [], "items__top__list": ["value"]}),
    ({"top": [[[1]]]}, 3, {"items": [], "items__top": [], "items__top__list": ["list"]}),
    ({"l": [[{"q": 1}]]}, 2, {"items": [], "items__l": ["list"]}),
    ({"l": [{"x": {"y": {"z": 1}}}]}, 2, {"items": [], "items__l": ["x__y"]}),
]  # fmt: skip


@pytest.mark.parametrize(("record", "nesting", "tables"), NESTING_CASES)
def test_max_table_nesting_counts_levels_as_dlt(
    monkeypatch: pytest.MonkeyPatch, record: dict[str, Any], nesting: int, tables: dict[str, Any]
) -> None:
    native = _both(monkeypatch, [record], hints={"max_nesting": nesting})
    found = {
        name: [c for c in table["columns"] if not c.startswith("_dlt")]
        for name, table in native["schema"].items()
        if not name.startswith("_dlt")
    }
    assert found == tables
