"""Record what dlt 1.31 loads for the programs of ``tests/dlt_import_programs.py``.

Run with the throwaway dlt environment (never a dependency of loadstone), from the
repository root::

    /tmp/dltenv2/bin/python -m tests.compat.record_import_paths

Writes ``tests/fixtures/import_paths/dlt_outcomes.json``; ``tests/test_dlt_import_paths.py``
runs the ported programs under loadstone and compares.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import dlt

from tests.dlt_import_programs import PROGRAMS, run_program

OUT = Path(__file__).resolve().parents[1] / "fixtures" / "import_paths" / "dlt_outcomes.json"


def main() -> int:
    outcomes = {}
    for name, text in sorted(PROGRAMS.items()):
        with tempfile.TemporaryDirectory(prefix=f"dlt_{name}_") as folder:
            outcomes[name] = run_program(text, Path(folder))
        print(f"{name}: recorded")
    record = {"dlt_version": dlt.__version__, "outcomes": outcomes}
    OUT.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
