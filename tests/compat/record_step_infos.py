"""Record dlt 1.31's step infos and empty runs (``tests/compat/step_info_probes.py``).

Run with the throwaway dlt environment, from the repository root::

    /tmp/dltenv/bin/python -m tests.compat.record_step_infos
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import dlt

from tests.compat.step_info_probes import SCENARIOS

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "pipeline" / "step_infos.json"


def main() -> int:
    outcomes = {}
    for name, scenario in SCENARIOS.items():
        with tempfile.TemporaryDirectory(prefix=f"dlt_{name}_") as folder:
            outcomes[name] = scenario(dlt, Path(folder))
    FIXTURE.write_text(
        json.dumps({"dlt_version": dlt.__version__, "outcomes": outcomes}, indent=1) + "\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
