"""``extract()`` and ``normalize()`` return dlt's ``ExtractInfo`` / ``NormalizeInfo``, and a run
with nothing to load loads nothing, as dlt 1.31 does.

Each scenario of ``tests/compat/step_info_probes.py`` ran under dlt 1.31
(``tests/compat/record_step_infos.py``); what dlt returned, printed and loaded is in
``tests/fixtures/pipeline/step_infos.json``. Here the same scenario runs under loadstone.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import locations
import pytest

import loadstone
from tests.compat.step_info_probes import SCENARIOS

RECORDED: dict[str, Any] = json.loads(
    (locations.FIXTURES / "pipeline" / "step_infos.json").read_text()
)["outcomes"]


def test_every_scenario_was_recorded() -> None:
    assert sorted(RECORDED) == sorted(SCENARIOS)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_returns_loads_and_prints_as_dlt(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    outcome = json.loads(json.dumps(SCENARIOS[name](loadstone, tmp_path)))  # as recorded
    assert outcome == RECORDED[name]


def test_a_trace_read_back_makes_the_same_step_infos(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    pipe = loadstone.pipeline("read_back", destination="duckdb", pipelines_dir=str(tmp_path))
    extracted = pipe.extract([{"id": 1, "tags": ["a", "b"]}], table_name="items")
    normalized = pipe.normalize()
    pipe.load()
    trace = loadstone.attach("read_back", pipelines_dir=str(tmp_path)).last_trace
    assert trace.last_extract_info is not extracted  # made again from trace.json
    assert trace.last_extract_info == extracted
    assert trace.last_normalize_info == normalized
    assert str(trace.last_normalize_info) == str(normalized)
    assert trace.last_normalize_info.row_counts == normalized.row_counts
