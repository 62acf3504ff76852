"""Decimals keep every digit on every destination (issue 39): the precision and scale a hint
or Arrow data declares are what the table gets, as under dlt 1.31
(``tests/fixtures/decimals/dlt_decimals.json``); a value that does not fit is refused as a
data error naming table, column and value, and nothing of its package is loaded."""

from __future__ import annotations

import json
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from decimal_cases import PROPERTY, DecimalColumn, decimal_columns, same_digits
from decimal_programs import (
    DESTINATIONS,
    ISSUE_VALUES,
    arrow_decimals,
    destination,
    hinted_dicts,
    pipeline,
    read_back,
)
from hypothesis import given
from hypothesis import strategies as st
from locations import FIXTURES

import loadstone
from loadstone.exceptions import PipelineStepFailed, ValueDoesNotFit

DLT = json.loads((FIXTURES / "decimals" / "dlt_decimals.json").read_text(encoding="utf-8"))
HINT_38_10 = {"data_type": "decimal", "precision": 38, "scale": 10}


def by_column(table: dict[str, Any]) -> dict[str, list[str | None]]:
    return {name: [row[name] for row in table["rows"]] for name in table["types"]}


def assert_same_table(ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    assert ours["types"] == theirs["types"]
    assert by_column(ours) == by_column(theirs)


@pytest.fixture
def pg(request: pytest.FixtureRequest, kind: str) -> str | None:
    return request.getfixturevalue("postgres_url") if kind == "postgres" else None


@pytest.mark.oracle
@pytest.mark.parametrize("kind", DESTINATIONS)
def test_a_hinted_decimal_38_10_loads_every_digit_as_dlt(
    kind: str, pg: str | None, tmp_path: Path
) -> None:
    ours = hinted_dicts(loadstone, kind, tmp_path, pg, HINT_38_10, ISSUE_VALUES, "hinted_38_10")
    theirs = DLT["hinted_38_10"][kind]
    assert ours["outcome"] == theirs["outcome"] == "ok"
    assert_same_table(ours["table"], theirs["table"])
    assert by_column(ours["table"])["x"] == list(ISSUE_VALUES)


@pytest.mark.oracle
@pytest.mark.parametrize("kind", DESTINATIONS)
def test_an_arrow_decimal128_38_10_loads_every_digit_as_dlt(
    kind: str, pg: str | None, tmp_path: Path
) -> None:
    ours = arrow_decimals(loadstone, kind, tmp_path, pg, (38, 10), ISSUE_VALUES)
    theirs = DLT["arrow_38_10"][kind]
    assert ours["outcome"] == theirs["outcome"] == "ok"
    assert_same_table(ours["table"], theirs["table"])


@pytest.mark.oracle
@pytest.mark.parametrize("kind", ["duckdb", "postgres"])
def test_a_scale_alone_gets_precision_38_as_dlt(kind: str, pg: str | None, tmp_path: Path) -> None:
    hint = {"data_type": "decimal", "scale": 3}
    ours = hinted_dicts(loadstone, kind, tmp_path, pg, hint, ("1.234",), "hinted_scale_only")
    assert_same_table(ours["table"], DLT["hinted_scale_only"][kind]["table"])


def test_a_scale_alone_gives_the_parquet_file_that_scale_too(tmp_path: Path) -> None:
    """dlt writes ``decimal128(38, 9)`` here while its tables say ``DECIMAL(38,3)``."""
    hint = {"data_type": "decimal", "scale": 3}
    ours = hinted_dicts(loadstone, "parquet", tmp_path, None, hint, ("1.234",), "scale")
    assert ours["table"]["types"]["x"] == "decimal128(38, 3)"
    assert DLT["hinted_scale_only"]["parquet"]["table"]["types"]["x"] == "decimal128(38, 9)"


@pytest.mark.parametrize("kind", ["duckdb", "postgres", "parquet"])
def test_a_precision_alone_means_scale_zero_everywhere(
    kind: str, pg: str | None, tmp_path: Path
) -> None:
    """SQL's DECIMAL(p) and dlt's Parquet files; dlt's tables take scale 9, which fails for
    ``precision 5`` (DuckDB ``DECIMAL(5,9)``, PostgreSQL ``numeric(5,9)`` overflows)."""
    hint = {"data_type": "decimal", "precision": 5}
    ours = hinted_dicts(loadstone, kind, tmp_path, pg, hint, ("123",), "hinted_precision_only")
    assert ours["outcome"] == "ok"
    assert ours["table"]["types"]["x"] in ("DECIMAL(5,0)", "numeric(5,0)", "decimal128(5, 0)")
    assert by_column(ours["table"])["x"] == ["123"]
    dlt_outcomes = {"duckdb": "BinderException", "postgres": "NumericValueOutOfRange"}
    assert DLT["hinted_precision_only"][kind]["outcome"] == dlt_outcomes.get(kind, "ok")


@pytest.mark.parametrize("kind", DESTINATIONS)
def test_a_value_beyond_the_precision_is_refused_and_nothing_is_loaded(
    kind: str, pg: str | None, tmp_path: Path
) -> None:
    """dlt fails at load (DuckDB ConversionException, PostgreSQL numeric overflow) or at
    normalize (ArrowInvalid) and keeps the package pending; here it is set aside."""
    dataset = f"too_large_{kind}"
    pipe = pipeline(loadstone, kind, tmp_path, pg, dataset)
    _, run_args = destination(loadstone, kind, tmp_path, pg)
    rows = [{"id": 1, "x": Decimal("1.5")}, {"id": 2, "x": Decimal("1E+40")}]
    with pytest.raises(PipelineStepFailed) as failed:
        pipe.run(rows, table_name="t", columns={"x": HINT_38_10}, **run_args)
    error = failed.value.__cause__
    assert isinstance(error, ValueDoesNotFit)
    assert (error.table, error.column, error.value) == ("t", "x", "1E+40")
    assert "41 digits before the point" in str(error)
    assert read_back(kind, tmp_path, pg, dataset, "t") is None
    assert pipe.list_extracted_load_packages() == []
    assert len(pipe.failed_packages()) == 1


def test_a_tenth_decimal_in_a_default_decimal_is_refused_not_rounded(tmp_path: Path) -> None:
    """dlt rounds it into DuckDB and PostgreSQL (``0E-9`` for ``-1E-10``), silently."""
    pipe = pipeline(loadstone, "duckdb", tmp_path, None, "default")
    with pytest.raises(PipelineStepFailed, match=r"value -1E-10 does not fit decimal\(38,9\)"):
        pipe.run([{"id": 1, "x": Decimal("-1E-10")}], table_name="t")
    theirs = DLT["default_with_ten_decimals"]["duckdb"]["table"]
    assert by_column(theirs)["x"] == ["1234567890123.012345679", "0E-9"]


# -- properties ----------------------------------------------------------------------------
def load_columns(kind: str, work: Path, pg: str | None, columns: list[DecimalColumn]) -> None:
    """Every column into one table, each with its own hint; read back equals written digit
    for digit, or the run refused a value that does not fit and loaded nothing."""
    dataset = f"prop_{uuid.uuid4().hex[:8]}"
    pipe = pipeline(loadstone, kind, work, pg, dataset)
    _, run_args = destination(loadstone, kind, work, pg)
    width = max(len(c.values) for c in columns)
    rows = [
        {"id": i, **{f"c{n}": c.values[i] for n, c in enumerate(columns) if i < len(c.values)}}
        for i in range(width)
    ]
    hints = {f"c{n}": c.hint for n, c in enumerate(columns)}
    if all(c.fits for c in columns):
        pipe.run(rows, table_name="t", columns=hints, **run_args)
        read = by_column(read_back(kind, work, pg, dataset, "t"))
        for n, column in enumerate(columns):
            for written, got in zip(column.values, read[f"c{n}"], strict=False):
                assert same_digits(written, got), (column, written, got)
    else:
        with pytest.raises(PipelineStepFailed) as failed:
            pipe.run(rows, table_name="t", columns=hints, **run_args)
        assert isinstance(failed.value.__cause__, ValueDoesNotFit)
        assert read_back(kind, work, pg, dataset, "t") is None


#: one column that may hold a value it cannot, and up to two that hold only values they can
TABLES = st.tuples(decimal_columns(), st.lists(decimal_columns(misfit=False), max_size=2)).map(
    lambda drawn: [drawn[0], *drawn[1]]
)


@pytest.mark.parametrize("kind", DESTINATIONS)
@PROPERTY
@given(columns=TABLES)
def test_random_decimals_read_back_digit_for_digit_or_are_refused(
    kind: str, pg: str | None, tmp_path: Path, columns: list[DecimalColumn]
) -> None:
    load_columns(kind, tmp_path / uuid.uuid4().hex[:8], pg, columns)
