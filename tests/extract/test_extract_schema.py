"""The extract saves the run's root tables, so a run saves the schema versions dlt 1.31 does.

dlt's extract writes the tables its resources declare (and the state table) and saves the
schema before normalize adds the nested tables: ``previous_hashes`` holds one hash per save.
The steps of ``tests/compat/extract_schema_probes.py`` ran under dlt; the versions, hash
counts and tables it saw are in ``tests/fixtures/dlt_extract_schema.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import locations
import pytest

import loadstone
from tests.compat.extract_schema_probes import steps_outcome

RECORDED: dict[str, Any] = json.loads((locations.FIXTURES / "dlt_extract_schema.json").read_text())[
    "outcome"
]


@pytest.fixture(scope="module")
def outcome(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return steps_outcome(loadstone, tmp_path_factory.mktemp("extract_schema"))


@pytest.mark.parametrize("step", sorted(RECORDED))
def test_each_step_saves_the_schema_dlt_saves(outcome: dict[str, Any], step: str) -> None:
    assert outcome[step] == RECORDED[step]


def test_the_state_table_gets_its_row_key_at_normalize(tmp_path: Path) -> None:
    """dlt 1.31 (p1211): after extract the state table has no ``_dlt_id`` and no
    ``seen-data``; normalize adds both, the row key last."""
    pipeline = loadstone.pipeline(
        "state_key",
        destination=loadstone.destinations.duckdb(str(tmp_path / "state_key.duckdb")),
        pipelines_dir=str(tmp_path),
    )
    pipeline.extract([{"id": 1}], table_name="t")
    state = pipeline.default_schema.tables["_dlt_pipeline_state"]
    assert list(state["columns"])[-1] == "_dlt_load_id"
    assert "x-normalizer" not in state
    pipeline.normalize()
    state = pipeline.default_schema.tables["_dlt_pipeline_state"]
    assert list(state["columns"])[-2:] == ["_dlt_load_id", "_dlt_id"]
    assert state["x-normalizer"] == {"seen-data": True}


def test_a_table_declared_at_extract_is_made_new_at_normalize(tmp_path: Path) -> None:
    """Under a frozen column contract a new table still takes its first columns: the table
    the extract saved is made again by normalize, as a table the schema never had."""

    @loadstone.resource(schema_contract={"columns": "freeze"}, columns={"note": {}})
    def things() -> Any:
        yield {"id": 1, "note": "x"}

    pipeline = loadstone.pipeline(
        "declared",
        destination=loadstone.destinations.duckdb(str(tmp_path / "declared.duckdb")),
        pipelines_dir=str(tmp_path),
    )
    pipeline.run(things())
    assert list(pipeline.default_schema.tables["things"]["columns"])[:2] == ["id", "note"]


def test_a_new_table_under_frozen_tables_is_refused_at_extract(tmp_path: Path) -> None:
    """dlt 1.31 refuses a new root table of a ``tables: freeze`` contract at extract: the
    schema never gets it, so no later run can load it either."""

    @loadstone.resource(name="t", schema_contract={"tables": "freeze"})
    def rows() -> Any:
        yield {"id": 1}

    pipeline = loadstone.pipeline(
        "frozen_tables",
        destination=loadstone.destinations.duckdb(str(tmp_path / "frozen.duckdb")),
        pipelines_dir=str(tmp_path),
    )
    for _ in range(2):
        with pytest.raises(loadstone.PipelineStepFailed) as failed:
            pipeline.run(rows())
        assert (failed.value.step, type(failed.value.exception)) == (
            "extract",
            loadstone.DataValidationError,
        )
    assert pipeline.list_extracted_load_packages() == []
