"""A run killed with SIGKILL at any step is finished by the next run: every row exactly once.

The pipeline runs in a subprocess. It is killed at a known point through the public
progress hook (``pipeline(progress=...)``): the hook sends SIGKILL to its own process when
the step reaches the point (or a moment after it started), so no test-only branch exists in
the product. The parent then checks the package state on disk and runs the pipeline again.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

pytestmark = pytest.mark.spark

ROWS = 300

SCRIPT = """
import os, signal, sys, threading
import loadstone as dlt

phase, delay, rows = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])

def kill():
    os.kill(os.getpid(), signal.SIGKILL)

def progress(event):
    if event.step == phase and event.event == "package_started":
        if phase == "load" and delay < 0:
            return
        threading.Timer(delay, kill).start() if delay > 0 else kill()
    if phase == "load" and delay < 0 and event.step == "load" and event.event == "package_committed":
        kill()   # the destination committed; the package state still says 'normalized'

pipe = dlt.pipeline("crashy", destination="duckdb", dataset_name="crash", progress=progress)
pipe.run(({"id": i, "tags": [i, i + 1]} for i in range(rows)), table_name="items")
print("run finished without being killed")
"""


def run_killed(
    phase: str, delay: float, rows: int = ROWS, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    script = Path("crash_script.py")
    script.write_text(SCRIPT)
    env = dict(os.environ, SPARK__MASTER="local[1]", **(env or {}))
    return subprocess.run(
        [sys.executable, str(script), phase, str(delay), str(rows)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def package_states() -> list[str]:
    root = Path(os.environ["LOADSTONE_HOME"]) / "pipelines" / "crashy" / "packages"
    return [json.loads((p / "package.json").read_text())["state"] for p in sorted(root.iterdir())]


def finish_and_count() -> tuple[int, int, int, int]:
    import loadstone as dlt

    pipe = dlt.pipeline("crashy", destination="duckdb", dataset_name="crash")
    pipe.run()
    assert pipe.list_pending_packages() == []
    with duckdb.connect("crashy.duckdb", read_only=True) as conn:
        (items, distinct) = conn.execute(
            "SELECT count(*), count(DISTINCT id) FROM crash.items"
        ).fetchone()
        (tags,) = conn.execute("SELECT count(*) FROM crash.items__tags").fetchone()
        (loads,) = conn.execute("SELECT count(*) FROM crash._dlt_loads").fetchone()
    return items, distinct, tags, loads


def test_kill_when_normalize_starts_is_finished_by_the_next_run() -> None:
    result = run_killed("normalize", 0)
    assert result.returncode == -signal.SIGKILL, result.stderr[-2000:]
    assert package_states() == ["extracted"]
    assert finish_and_count() == (ROWS, ROWS, 2 * ROWS, 1)


KILLING_NORMALIZER = """
import os, signal
from loadstone.hookspecs import hookimpl
from loadstone.plugin_manager import get_normalizer


class KillAfterWriting:
    def normalize(self, package, schema, context):
        get_normalizer("relational").normalize(package, schema, context)
        os.kill(os.getpid(), signal.SIGKILL)


@hookimpl
def loadstone_normalizer():
    return KillAfterWriting()
"""


def test_kill_after_the_normalizer_wrote_its_files_is_finished_by_the_next_run() -> None:
    # the normalizer is chosen by config; this one (named by module path) dies after writing
    Path("crash_plugins").mkdir()
    Path("crash_plugins/__init__.py").write_text("")
    Path("crash_plugins/killing_normalizer.py").write_text(KILLING_NORMALIZER)
    result = run_killed(
        "none",
        0,
        env={
            "NORMALIZE__NORMALIZER": "crash_plugins.killing_normalizer",
            "PYTHONPATH": os.getcwd(),
        },
    )
    assert result.returncode == -signal.SIGKILL, result.stderr[-2000:]
    assert package_states() == ["extracted"]
    root = Path(os.environ["LOADSTONE_HOME"]) / "pipelines" / "crashy" / "packages"
    assert any((root).glob("*/normalized/**/*.parquet"))
    assert finish_and_count() == (ROWS, ROWS, 2 * ROWS, 1)


def test_kill_when_load_starts_is_finished_by_the_next_run() -> None:
    result = run_killed("load", 0)
    assert result.returncode == -signal.SIGKILL, result.stderr[-2000:]
    assert package_states() == ["normalized"]
    assert finish_and_count() == (ROWS, ROWS, 2 * ROWS, 1)


def test_kill_after_the_destination_committed_does_not_load_twice() -> None:
    result = run_killed("load", -1)
    assert result.returncode == -signal.SIGKILL, result.stderr[-2000:]
    assert package_states() == ["normalized"]
    with duckdb.connect("crashy.duckdb", read_only=True) as conn:
        assert conn.execute("SELECT count(*) FROM crash._dlt_loads").fetchone() == (1,)
    assert finish_and_count() == (ROWS, ROWS, 2 * ROWS, 1)
    assert package_states() == ["loaded"]


def test_kill_during_extract_leaves_nothing_half_loaded() -> None:
    result = run_killed("extract", 0)
    assert result.returncode == -signal.SIGKILL, result.stderr[-2000:]
    assert package_states() == ["extracting"]
    import loadstone as dlt

    pipe = dlt.pipeline("crashy", destination="duckdb", dataset_name="crash")
    pipe.run([{"id": 1, "tags": []}], table_name="items")
    with duckdb.connect("crashy.duckdb", read_only=True) as conn:
        assert conn.execute("SELECT count(*) FROM crash.items").fetchone() == (1,)
    assert package_states() == ["loaded"]
