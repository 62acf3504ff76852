"""Record dlt 1.31's outcome of every compatibility scenario as a fixture.

Run with the throwaway dlt environment (never a dependency of loadstone)::

    /tmp/dltenv/bin/python -m tests.compat.record [scenario ...]

from the repository root. dlt 1.31 queries datasets with sqlglot; with sqlglot 30 its
``pipeline.dataset()`` fails, so record ``dataset_queries`` with ``sqlglot<27`` installed.
Each outcome goes to ``tests/fixtures/compat/<scenario>.json`` (``--out DIR``: elsewhere);
``tests/pipelines/test_compat_dlt.py`` runs the same scenario under loadstone and compares.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import dlt

from tests.compat.harness import run_scenario
from tests.compat.scenarios import SCENARIOS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "compat"


def main(names: list[str]) -> int:
    """Record ``names`` (all by default); ``--out DIR`` writes there instead of the fixtures."""
    out = FIXTURES
    if "--out" in names:
        at = names.index("--out")
        out = Path(names[at + 1])
        names = names[:at] + names[at + 2 :]
    out.mkdir(parents=True, exist_ok=True)
    for name in names or sorted(SCENARIOS):
        with tempfile.TemporaryDirectory(prefix=f"dlt_{name}_") as folder:
            outcome = run_scenario(SCENARIOS[name], dlt, "dlt", Path(folder))
        record = {"dlt_version": dlt.__version__, "outcome": outcome}
        (out / f"{name}.json").write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
        print(f"{name}: recorded")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
