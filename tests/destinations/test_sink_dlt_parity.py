"""A custom destination (``loadstone.destination``) gets what dlt 1.31's gets.

Every scenario of ``sink_scenarios.py`` ran once under dlt 1.31 (recorded in
``tests/fixtures/sink/dlt_outcomes.json``); here the same program runs with ``import
loadstone as dlt`` and the sink must see the same tables, batches, rows, typed values and
table schemas, and the run the same outcome.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import loadstone
from tests.destinations.sink_scenarios import FIXTURE, SCENARIOS, comparable

RECORDED = json.loads(FIXTURE.read_text())


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_the_sink_sees_what_dlt_gives(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    outcome = SCENARIOS[name](loadstone, tmp_path)
    assert comparable(outcome) == comparable(RECORDED[name])
