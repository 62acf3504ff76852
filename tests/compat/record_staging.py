"""Record dlt 1.31's answers to ``staging=`` (``tests/compat/staging_probes.py``).

Run with the throwaway dlt environment (never a dependency of loadstone), from the
repository root::

    /tmp/dltenv/bin/python -m tests.compat.record_staging

It writes ``tests/fixtures/dlt_staging.json``, plus what the bucket held afterwards (dlt
refuses before it writes anything there).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import dlt

from tests.compat.staging_probes import staging_outcome

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "dlt_staging.json"


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="dlt_staging_") as folder:
        bucket = Path(folder) / "bucket"
        outcome = staging_outcome(dlt, Path(folder), bucket.as_uri())
        outcome["bucket_files"] = (
            sorted(str(p.relative_to(bucket)) for p in bucket.rglob("*")) if bucket.exists() else []
        )
    FIXTURE.write_text(
        json.dumps({"dlt_version": dlt.__version__, "outcome": outcome}, indent=1) + "\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
