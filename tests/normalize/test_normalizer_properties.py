"""Properties: however the input is split into chunks, the result is the sequential one.

Chunks run in this process here (``spark=None`` runs them one after another through the same
optimistic protocol as Spark tasks: local type guesses, global decision, re-runs), so
hypothesis can try many splits quickly; ``test_normalizer_parallel`` runs it on Spark.
Each example's packages live in a folder of pytest's own temporary tree (``tmp_path_factory``,
session-scoped, so hypothesis accepts it), which pytest removes with its old runs.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from normalizer_support import StandInPackage, read_table, schema_tables, snake_case
from schema_documents import schema_of

from loadstone.normalizers.contract import NormalizeContext
from loadstone.plugins.normalizers.relational import RelationalNormalizer

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.sampled_from(["x", "12", "1.5", "true", "2023-04-08T05:14:40Z", "2021-01-01", ""]),
)
KEYS = st.sampled_from(["a", "b", "A", "c d", "ключ", "_dlt_x", "value"])
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=3)),
    max_leaves=6,
)
RECORDS = st.lists(st.dictionaries(KEYS, VALUES, max_size=4), min_size=1, max_size=25)
#: each example normalizes a whole package (twice): a third of the profile's budget
EXAMPLES = max(10, settings.default.max_examples // 3)
DROP = {"_dlt_id", "_dlt_parent_id", "_dlt_root_id", "_dlt_load_id"}


def _normalize(
    folders: pytest.TempPathFactory, records: list[dict[str, Any]], chunk_bytes: int
) -> tuple[Any, RelationalNormalizer]:
    package = StandInPackage(folders.mktemp("prop"))
    package.add_jsonl("t", records)
    normalizer = RelationalNormalizer(chunk_bytes=chunk_bytes)
    context = NormalizeContext(spark=None, naming=snake_case())
    return normalizer.normalize(package, schema_of(), context), normalizer


def _columns(result: Any) -> list[tuple[str, list[tuple[str, Any]]]]:
    return [
        (name, [(c["name"], c.get("data_type")) for c in table["columns"].values()])
        for name, table in schema_tables(result).items()
    ]


def _values(result: Any) -> dict[str, list[str]]:
    return {
        name: sorted(
            json.dumps(
                {k: v for k, v in row.items() if k not in DROP and v is not None},
                sort_keys=True,
                default=str,
            )
            for row in read_table(result, name)
        )
        for name in schema_tables(result)
    }


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=RECORDS, chunk_bytes=st.integers(min_value=1, max_value=400))
@example(  # a name two paths share: the dict's list first, then the list's list
    records=[{"c d": {"b": [None]}}, {"c d": [{"b": [None]}]}], chunk_bytes=1
)
def test_any_split_into_chunks_gives_the_sequential_schema_and_values(
    tmp_path_factory: pytest.TempPathFactory, records: list[dict[str, Any]], chunk_bytes: int
) -> None:
    sequential, _ = _normalize(tmp_path_factory, records, 1 << 30)
    chunked, _ = _normalize(tmp_path_factory, records, chunk_bytes)
    assert _columns(chunked) == _columns(sequential)
    assert _values(chunked) == _values(sequential)
    assert {n: o.row_count for n, o in chunked.tables.items()} == {
        n: o.row_count for n, o in sequential.tables.items()
    }


def _normalize_frozen(
    folders: pytest.TempPathFactory, records: list[dict[str, Any]], chunk_bytes: int
) -> Any:
    """``records`` into an existing table whose data types are frozen: the result or the error."""
    from loadstone.exceptions import ContractViolation

    package = StandInPackage(folders.mktemp("prop_frozen"))
    package.add_jsonl("t", [{"seed": 1}])
    context = NormalizeContext(spark=None, naming=snake_case())
    existing = RelationalNormalizer().normalize(package, schema_of(), context).schema
    package = StandInPackage(folders.mktemp("prop_frozen"))
    package.add_jsonl("t", records)
    package.table_hints = {"t": {"schema_contract": {"data_type": "freeze"}}}
    try:
        result = RelationalNormalizer(chunk_bytes=chunk_bytes).normalize(package, existing, context)
    except ContractViolation as violation:
        return ("violation", violation.table, violation.column, violation.value)
    return (_columns(result), _values(result))


#: few keys and scalars whose types clash, so that chunks often guess a column differently
CLASHING = st.lists(
    st.dictionaries(
        st.sampled_from(["a", "b"]),
        st.sampled_from([1, 7, "x", "12", 2.5, True, None, "2021-01-01"]),
        max_size=2,
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=CLASHING, chunk_bytes=st.integers(min_value=1, max_value=60))
def test_any_split_meets_a_frozen_data_type_as_the_sequential_run_does(
    tmp_path_factory: pytest.TempPathFactory, records: list[dict[str, Any]], chunk_bytes: int
) -> None:
    assert _normalize_frozen(tmp_path_factory, records, chunk_bytes) == _normalize_frozen(
        tmp_path_factory, records, 1 << 30
    )
