"""``import loadstone as dlt`` runs dlt-style programs with dlt 1.31's outcomes.

Each scenario of ``tests/compat/scenarios.py`` runs under loadstone; its outcome must equal
the one recorded under dlt 1.31 (``tests/fixtures/compat/<scenario>.json``, written by
``tests/compat/record.py``). Where loadstone differs on purpose, :data:`DELIBERATE` holds the
outcome loadstone gives instead, with the reason; the README's table lists the same.

With ``LOADSTONE_COMPAT_DLT_PYTHON=/path/to/python`` (an environment holding dlt 1.31), dlt
runs every scenario live as well, and the recorded fixture must still equal what dlt does:
the fixtures cannot go stale unnoticed. Without it the suite needs no dlt.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import locations
import pytest

import loadstone
from tests.compat.harness import run_scenario
from tests.compat.scenarios import SCENARIOS

FIXTURES = locations.FIXTURES / "compat"
#: a Python interpreter with dlt 1.31: when set, dlt also runs every scenario live
DLT_PYTHON_ENV = "LOADSTONE_COMPAT_DLT_PYTHON"

#: scenario -> (path in the outcome, loadstone's value, reason): deliberate differences
DELIBERATE: dict[str, list[tuple[tuple[str, ...], Any, str]]] = {
    "arrow_scd2_and_merge_key": [
        (
            ("versions",),
            [[1, "a", True], [2, "B", True], [2, "b", False]],
            "Arrow rows of an scd2 table get a hash of their content as _dlt_id, as dict rows "
            "do, so an unchanged row keeps its version (dlt's random ids version it again)",
        ),
    ],
    "failed_load_job_leaves_table": [
        (
            ("outcome",),
            {"cause": "ValueDoesNotFit", "error": "PipelineStepFailed", "step": "normalize"},
            "12345 does not fit decimal(3,0): refused at normalize, naming table, column and "
            "value (issue 39), so nothing of the package reaches the destination",
        ),
        (
            ("tables",),
            {
                "things": {
                    "columns": ["_dlt_id", "_dlt_load_id", "id", "v"],
                    "rows": [[1, "x"]],
                }
            },
            "the tables a failed package created are rolled back with it; a rerun makes them",
        ),
    ],
    "run_with_a_pending_package_on_first_run": [
        (
            ("tables",),
            {"old_rows": {"columns": ["_dlt_id", "_dlt_load_id", "id"], "rows": [[1]]}},
            "a pending package of a pipeline that never loaded is finished and the run "
            "returns (dlt discards the package and loads the new data)",
        ),
    ],
    "schema_object_changes": [
        (
            ("typed",),
            {
                "line_no": {"name": "line_no", "nullable": False},
                "qty": {"data_type": "bigint", "name": "qty"},
            },
            "a Schema given as run(schema=...) is not changed by the run: "
            "pipeline.default_schema holds the result",
        ),
    ],
    "insert_only_merge_with_nested_rows": [
        (
            ("t__l",),
            {
                "columns": ["_dlt_id", "_dlt_list_idx", "_dlt_parent_id", "_dlt_root_id", "value"],
                "rows": [[1, 0], [4, 0]],
            },
            "the nested rows of a row insert-only skips (its key is in the table) are skipped "
            "with it: dlt inserts them (2 and 3 here), under a parent row the table lacks",
        ),
    ],
    "sources_and_resources_in_one_list": [
        (
            ("packages",),
            ["mixed_list", "shop", "crm"],
            "the default schema's package (crm) is extracted last, so that it carries the "
            "state complete (dlt writes the state into it at the end of its extract): the "
            "packages are listed in load-id order; their contents and the state row are dlt's",
        ),
    ],
    "arrow_and_dicts_in_one_resource": [
        (("run",), {"ok": None}, "dlt fails the Arrow rows' load (NOT NULL _dlt_load_id)"),
        (
            ("tables",),
            {
                "readings": {
                    "columns": ["_dlt_id", "_dlt_load_id", "id", "val"],
                    "rows": [[1, "x"], [2, "y"], [3, "z"]],
                }
            },
            "loadstone gives Arrow rows the dlt columns the table already has and loads all",
        ),
    ],
}


def recorded(name: str) -> Any:
    path = FIXTURES / f"{name}.json"
    if not path.exists():
        raise RuntimeError(
            f"no recorded dlt outcome {path}: run `/tmp/dltenv/bin/python -m tests.compat.record "
            f"{name}` from the repository root (needs dlt 1.31 in that environment)"
        )
    return json.loads(path.read_text(encoding="utf-8"))["outcome"]


def _set(outcome: Any, path: tuple[str, ...], value: Any) -> Any:
    """``outcome`` with ``value`` at ``path``; a path of one key replaces the whole outcome."""
    if len(path) == 1 and path[0] not in outcome:
        return {path[0]: value}
    target = outcome
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return outcome


@pytest.fixture(scope="session")
def live_dlt(tmp_path_factory: pytest.TempPathFactory) -> Path | None:
    """Outcomes of a live dlt run of every scenario (None without a dlt interpreter)."""
    python = os.environ.get(DLT_PYTHON_ENV)
    if not python:
        return None
    out = tmp_path_factory.mktemp("live_dlt")
    subprocess.run(
        [python, "-m", "tests.compat.record", "--out", str(out)],
        cwd=locations.REPO,
        check=True,
        capture_output=True,
    )
    return out


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_matches_dlt(name: str, tmp_path: Path, live_dlt: Path | None) -> None:
    expected = recorded(name)
    if live_dlt is not None:
        live = json.loads((live_dlt / f"{name}.json").read_text(encoding="utf-8"))["outcome"]
        assert live == expected, f"dlt now gives another outcome: re-record {name}"
    for path, value, _reason in DELIBERATE.get(name, []):
        expected = _set(expected, path, value)
    outcome = run_scenario(SCENARIOS[name], loadstone, "loadstone", tmp_path / "work")
    assert outcome == expected
