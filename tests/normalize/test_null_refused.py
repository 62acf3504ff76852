"""A null in a column declared ``nullable: false`` fails the package at normalize with
``CannotCoerceNullException`` naming schema, table and column, as dlt 1.31 does (the whole
outcomes are compared with dlt's recording in ``tests/compat/not_null_scenarios.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import loadstone as dlt
from loadstone.exceptions import CannotCoerceNullException, PipelineStepFailed


def _pipeline(tmp_path: Path) -> Any:
    return dlt.pipeline(
        "nulls",
        destination=dlt.destinations.duckdb(str(tmp_path / "nulls.duckdb")),
        dataset_name="ds",
        pipelines_dir=str(tmp_path / "pipelines"),
    )


def test_a_null_in_a_not_nullable_column_fails_normalize_naming_it(tmp_path: Path) -> None:
    columns = {"name": {"data_type": "text", "nullable": False}}
    rows = [{"id": 1, "name": "a"}, {"id": 2, "name": None}]
    with pytest.raises(PipelineStepFailed) as failed:
        _pipeline(tmp_path).run(dlt.resource(rows, name="users", columns=columns))
    assert failed.value.step == "normalize"
    cause = failed.value.exception.__cause__
    assert isinstance(cause, CannotCoerceNullException)
    assert (cause.schema_name, cause.table_name, cause.column_name) == ("nulls", "users", "name")


def test_a_null_in_a_nested_tables_not_nullable_column_fails_too(tmp_path: Path) -> None:
    hints = {"lines": dlt.mark.make_nested_hints(columns={"sku": {"nullable": False}})}
    rows = [{"id": 1, "lines": [{"sku": "a"}, {"sku": None}]}]
    with pytest.raises(PipelineStepFailed) as failed:
        _pipeline(tmp_path).run(dlt.resource(rows, name="orders", nested_hints=hints))
    assert (failed.value.exception.__cause__.table_name, failed.value.step) == (
        "orders__lines",
        "normalize",
    )
