"""A full disk at each step ends in one ``error:`` line, nothing half-written, nothing loaded;
the same command after space is freed loads every row exactly once.

The pipelines folder (extract and normalize write there) or the DuckDB file sits on a small
tmpfs, mounted inside a private mount namespace (``unshare -m``) so that nothing leaks out of
the test. Everything runs in that namespace: the failing command, a look at what it left, a
remount with room, and the same command again. Needs root (CI runs as root).
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import locations
import pytest

CASES = locations.FIXTURES / "cases"

INSIDE = """
import json, os, subprocess, sys
from pathlib import Path
import duckdb

folder, size = sys.argv[1], sys.argv[2]
subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", folder], check=True)
command = [sys.executable, "-m", "loadstone.cli", "run", "blocks.jsonl", "-t", "blocks", "-p", "full",
           "--pipelines-dir", "pipes", "--dataset", "ds", "-q"]
# the input is copied into the package (not read in place) so extract writes, and the sizes
# below fill the disk at the step they name
env = dict(os.environ, DESTINATION__DUCKDB__CREDENTIALS="db/full.duckdb", EXTRACT__COPY_INPUTS="true")
first = subprocess.run(command, env=env, capture_output=True, text=True)
leftovers = [str(p) for p in Path(folder).rglob("*.tmp")]
subprocess.run(["mount", "-o", "remount,size=200M", folder], check=True)
second = subprocess.run(command, env=env, capture_output=True, text=True)
with duckdb.connect("db/full.duckdb", read_only=True) as conn:
    rows = conn.execute("SELECT count(*), count(DISTINCT number) FROM ds.blocks").fetchone()
    children = conn.execute("SELECT count(*) FROM ds.blocks__transactions").fetchone()[0]
print(json.dumps({
    "code": first.returncode, "err": first.stderr, "leftovers": leftovers,
    "again": second.returncode, "again_err": second.stderr, "rows": list(rows), "children": children,
}))
"""


def require_mount_namespace() -> None:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        raise RuntimeError(
            "test_disk_full needs root and unshare(1) (util-linux) to mount a small tmpfs; "
            "run the suite as root, as CI does"
        )


def blocks_jsonl() -> None:
    blocks = json.loads(gzip.decompress((CASES / "ethereum_blocks.json.gz").read_bytes()))
    with open("blocks.jsonl", "w") as handle:
        for block in blocks:
            handle.write(json.dumps(block) + "\n")


@pytest.mark.parametrize(
    ("folder", "size", "step"),
    [
        ("pipes", "1M", "extract failed writing package"),
        ("pipes", "2300K", "step normalize"),
        ("db", "600K", "step load"),
    ],
    ids=["extract", "normalize", "load_into_duckdb"],
)
def test_disk_full(folder: str, size: str, step: str) -> None:
    require_mount_namespace()
    blocks_jsonl()
    Path("pipes").mkdir()
    Path("db").mkdir()
    Path("inside.py").write_text(INSIDE)
    done = subprocess.run(
        ["unshare", "-m", sys.executable, "inside.py", folder, size],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    errors = [line for line in outcome["err"].splitlines() if line.startswith("error: ")]
    assert outcome["code"] != 0 and "Traceback" not in outcome["err"], outcome["err"]
    assert len(errors) == 1 and step in errors[0], errors
    assert "disk full" in errors[0] or "No space left on device" in errors[0], errors
    assert outcome["leftovers"] == []
    assert outcome["again"] == 0, outcome["again_err"]
    assert outcome["rows"] == [2, 2] and outcome["children"] == 655
