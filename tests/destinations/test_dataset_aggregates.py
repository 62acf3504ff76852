"""Aggregates of integer columns read from ``pipeline.dataset()`` come back as ``int``, as
dlt 1.31 gives them (differential programs p850, p851): DuckDB sums a BIGINT column into a
128-bit HUGEINT, which Arrow carries as ``decimal128(38, 0)``; loadstone gave
``Decimal('15')``. Decimal columns and their sums stay ``Decimal``. dlt's outcomes are in
fixtures/dataset/dlt_aggregate_types.json."""

from __future__ import annotations

import datetime
import json
from decimal import Decimal
from pathlib import Path

import pytest

import loadstone as dlt

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "dataset"
RECORDED: dict[str, list[str]] = {
    query: types
    for query, types in json.loads((FIXTURES / "dlt_aggregate_types.json").read_text()).items()
    if not query.startswith("_")
}
UTC = datetime.timezone.utc


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> object:
    tmp = tmp_path_factory.mktemp("aggregates")
    p = dlt.pipeline(
        "agg",
        destination=dlt.destinations.duckdb(str(tmp / "agg.duckdb")),
        dataset_name="d",
        pipelines_dir=str(tmp / "pl"),
    )
    rows = [
        {"id": i, "amt": Decimal("1.50") * i, "ts": datetime.datetime(2024, 1, i, tzinfo=UTC)}
        for i in range(1, 6)
    ]
    p.run(rows, table_name="t")
    return p.dataset()


@pytest.mark.parametrize("query", sorted(RECORDED))
def test_row_value_types_are_dlts(dataset: object, query: str) -> None:
    row = dataset(query).fetchall()[0]  # type: ignore[operator]  # a dataset is callable
    assert [type(value).__name__ for value in row] == RECORDED[query]


def test_a_bigint_sum_is_an_int_of_the_same_value(dataset: object) -> None:
    assert dataset("select sum(id) as s from t").fetchone() == (15,)  # type: ignore[operator]  # callable


@pytest.mark.parametrize("function", ["max", "min"])
def test_an_aggregate_relations_column_is_named_as_dlts(dataset: object, function: str) -> None:
    """dlt 1.31 names the column of ``rel.select(c).max()`` ``_col_0`` on every destination;
    loadstone's was the database's own name (``max(id)`` on DuckDB, ``max`` on PostgreSQL;
    differential program p1127)."""
    relation = getattr(dataset.t.select("id"), function)()  # type: ignore[attr-defined]  # a dataset's table
    assert list(relation.df().columns) == ["_col_0"]
    assert relation.fetchone() == ((5,) if function == "max" else (1,))
