"""A full disk at each step ends in one ``error:`` line, nothing half-written, nothing loaded;
the same command after space is freed loads every row exactly once.

The pipelines folder (extract and normalize write there) or the DuckDB file sits on a small
tmpfs, mounted inside a private mount namespace (``unshare -m``) so that nothing leaks out of
the tests. Everything runs in that namespace: the failing command, a look at what it left, a
remount with room, and the same command again. Each is a process of its own, forked from one
preloaded parent (``preloaded_children.py``) that ``unshare -m`` started and that imported
what a run imports; each test mounts its tmpfs over a folder of its own. Needs root (CI runs
as root).
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import locations
import pytest
from preloaded_children import PIPELINE_RUN, Preloaded, preloaded

CASES = locations.FIXTURES / "cases"

COMMAND = [
    *("run", "blocks.jsonl", "-t", "blocks", "-p", "full"),
    *("--pipelines-dir", "pipes", "--dataset", "ds", "-q"),
]
#: in the namespace: mount (or remount) a tmpfs of a size over a folder
MOUNT = """
import subprocess, sys
subprocess.run(["mount", *sys.argv[1:]], check=True)
"""
#: in the namespace: the temporary files left in a folder
LEFTOVERS = """
import json, sys
from pathlib import Path
print(json.dumps([str(p) for p in Path(sys.argv[1]).rglob("*.tmp")]))
"""
#: in the namespace: rows loaded (root rows, distinct numbers) and nested rows
LOADED = """
import json, duckdb
with duckdb.connect("db/full.duckdb", read_only=True) as conn:
    rows = conn.execute("SELECT count(*), count(DISTINCT number) FROM ds.blocks").fetchone()
    children = conn.execute("SELECT count(*) FROM ds.blocks__transactions").fetchone()[0]
print(json.dumps({"rows": list(rows), "children": children}))
"""


@pytest.fixture(scope="module")
def namespace() -> Iterator[Preloaded]:
    """The preloaded parent, in a private mount namespace of its own (its children too)."""
    require_mount_namespace()
    yield from preloaded(*PIPELINE_RUN, wrapper=["unshare", "-m"])


def inside(parent: Preloaded, folder: str, size: str) -> dict[str, Any]:
    """In the namespace: a tmpfs of ``size`` over ``folder``, the command, a look at what it
    left, a remount with room, the same command again, and what was loaded."""

    def checked(code: str, *args: str) -> str:
        done = parent.run(code, args)
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout

    checked(MOUNT, "-t", "tmpfs", "-o", f"size={size}", "tmpfs", folder)
    # the input is copied into the package (not read in place) so extract writes, and the
    # sizes below fill the disk at the step they name
    env = dict(
        os.environ, DESTINATION__DUCKDB__CREDENTIALS="db/full.duckdb", EXTRACT__COPY_INPUTS="true"
    )
    first = parent.run(module="loadstone.cli", args=COMMAND, env=env, timeout=600)
    leftovers = json.loads(checked(LEFTOVERS, folder))
    checked(MOUNT, "-o", "remount,size=200M", folder)
    second = parent.run(module="loadstone.cli", args=COMMAND, env=env, timeout=600)
    loaded = json.loads(checked(LOADED)) if second.returncode == 0 else {}
    return {
        "code": first.returncode,
        "err": first.stderr,
        "leftovers": leftovers,
        "again": second.returncode,
        "again_err": second.stderr,
        **loaded,
    }


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
def test_disk_full(namespace: Preloaded, folder: str, size: str, step: str) -> None:
    blocks_jsonl()
    Path("pipes").mkdir()
    Path("db").mkdir()
    outcome = inside(namespace, folder, size)
    errors = [line for line in outcome["err"].splitlines() if line.startswith("error: ")]
    assert outcome["code"] != 0 and "Traceback" not in outcome["err"], outcome["err"]
    assert len(errors) == 1 and step in errors[0], errors
    assert "disk full" in errors[0] or "No space left on device" in errors[0], errors
    assert outcome["leftovers"] == []
    assert outcome["again"] == 0, outcome["again_err"]
    assert outcome["rows"] == [2, 2] and outcome["children"] == 655
