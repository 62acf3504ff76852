"""Record dlt 1.31's ``allow_external_schedulers`` answers
(``tests/compat/external_schedule_probes.py``).

Run with the throwaway dlt environment, from the repository root::

    /tmp/dltenv/bin/python -m tests.compat.record_external_schedule
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import dlt

from tests.compat.external_schedule_probes import schedule_outcome

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "dlt_external_schedulers.json"


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="dlt_schedule_") as folder:
        outcome = schedule_outcome(dlt, Path(folder))
    FIXTURE.write_text(
        json.dumps({"dlt_version": dlt.__version__, "outcome": outcome}, indent=1) + "\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
