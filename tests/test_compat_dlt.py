"""``import loadstone as dlt`` runs dlt-style programs with dlt 1.31's outcomes.

Each scenario of ``tests/compat/scenarios.py`` runs under loadstone; its outcome must equal
the one recorded under dlt 1.31 (``tests/fixtures/compat/<scenario>.json``, written by
``tests/compat/record.py``). Where loadstone differs on purpose, :data:`DELIBERATE` holds the
outcome loadstone gives instead, with the reason; the README's table lists the same.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import loadstone
from tests.compat.harness import run_scenario
from tests.compat.scenarios import SCENARIOS

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "compat"

#: scenario -> (path in the outcome, loadstone's value, reason): deliberate differences
DELIBERATE: dict[str, list[tuple[tuple[str, ...], Any, str]]] = {}


def recorded(name: str) -> Any:
    path = FIXTURES / f"{name}.json"
    if not path.exists():
        raise RuntimeError(
            f"no recorded dlt outcome {path}: run `/tmp/dltenv/bin/python -m tests.compat.record "
            f"{name}` from the repository root (needs dlt 1.31 in that environment)"
        )
    return json.loads(path.read_text(encoding="utf-8"))["outcome"]


def _set(outcome: Any, path: tuple[str, ...], value: Any) -> None:
    for key in path[:-1]:
        outcome = outcome[key]
    outcome[path[-1]] = value


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_matches_dlt(name: str, tmp_path: Path) -> None:
    expected = recorded(name)
    for path, value, _reason in DELIBERATE.get(name, []):
        _set(expected, path, value)
    outcome = run_scenario(SCENARIOS[name], loadstone, "loadstone", tmp_path / "work")
    assert outcome == expected
