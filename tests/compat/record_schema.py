"""Record dlt 1.31's answers to the ``Schema`` member probes as a fixture.

Run with the throwaway dlt environment (never a dependency of loadstone), from the
repository root::

    /tmp/dltenv/bin/python -m tests.compat.record_schema

It writes ``tests/fixtures/schema_object/dlt_schema_object.json``;
``tests/schema/test_schema_object_dlt.py`` runs the same probes under loadstone and compares.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import dlt
import dlt.common.schema.utils as schema_utils

from tests.compat.schema_object import schema_outcome

FIXTURE = (
    Path(__file__).resolve().parents[1] / "fixtures" / "schema_object" / "dlt_schema_object.json"
)


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="dlt_schema_object_") as folder:
        outcome = schema_outcome(dlt, Path(folder), utils=schema_utils)
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    record = {"dlt_version": dlt.__version__, "outcome": outcome}
    FIXTURE.write_text(json.dumps(record, indent=1) + "\n")
    print(f"recorded {len(outcome)} probes in {FIXTURE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
