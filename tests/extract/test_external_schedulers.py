"""``incremental(allow_external_schedulers=True)`` loads the scheduler's interval, as dlt 1.31.

The interval comes from ``DLT_INTERVAL_START`` / ``DLT_INTERVAL_END``; the programs of
``tests/compat/external_schedule_probes.py`` ran under dlt and their answers are in
``tests/fixtures/dlt_external_schedulers.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import locations
import pytest

import loadstone
from loadstone.exceptions import ExternalSchedulerNotAvailable
from tests.compat.external_schedule_probes import CURSORS, schedule_outcome

RECORDED: dict[str, Any] = json.loads(
    (locations.FIXTURES / "dlt_external_schedulers.json").read_text()
)["outcome"]


@pytest.fixture(scope="module")
def outcome(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return schedule_outcome(loadstone, tmp_path_factory.mktemp("scheduled"))


@pytest.mark.parametrize("case", [*sorted(CURSORS), "start_only", "no_interval"])
def test_a_scheduled_run_loads_the_interval_as_dlt(outcome: dict[str, Any], case: str) -> None:
    assert outcome[case] == RECORDED[case]


def test_without_an_interval_the_error_names_the_resource(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DLT_INTERVAL_START", raising=False)
    monkeypatch.delenv("DLT_INTERVAL_END", raising=False)
    cursor = loadstone.sources.incremental("c", initial_value=0, allow_external_schedulers=True)
    with pytest.raises(ExternalSchedulerNotAvailable) as caught:
        cursor.bind("events", {})
    assert caught.value.resource_name == "events"


def test_a_timestamp_that_is_not_iso_8601_is_named_with_its_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DLT_INTERVAL_START", "yesterday")
    monkeypatch.setenv("DLT_INTERVAL_END", "2024-01-06T00:00:00Z")
    cursor = loadstone.sources.incremental("c", initial_value=0, allow_external_schedulers=True)
    with pytest.raises(ValueError, match="DLT_INTERVAL_START='yesterday'"):
        cursor.bind("events", {})
