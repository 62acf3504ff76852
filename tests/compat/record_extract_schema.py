"""Record dlt 1.31's schema versions per step (``tests/compat/extract_schema_probes.py``).

Run with the throwaway dlt environment, from the repository root::

    /tmp/dltenv/bin/python -m tests.compat.record_extract_schema
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import dlt

from tests.compat.extract_schema_probes import steps_outcome

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "dlt_extract_schema.json"


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="dlt_extract_schema_") as folder:
        outcome = steps_outcome(dlt, Path(folder))
    FIXTURE.write_text(
        json.dumps({"dlt_version": dlt.__version__, "outcome": outcome}, indent=1) + "\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
