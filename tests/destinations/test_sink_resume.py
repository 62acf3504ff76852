"""A custom destination sends every batch once across a kill and a rerun.

The sink function is the destination: what it accepted cannot be taken back. So the load
keeps, in the package, how many rows of each table the function accepted, and a rerun sends
the package from the first batch not accepted (dlt 1.31 resumes a sink's job the same way).
A real process is killed (SIGKILL, no clean-up) inside the sink, between two batches.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

PROGRAM = """
import json, os, sys
import loadstone as dlt

log, kill_at = sys.argv[1], int(os.environ.get("KILL_AT", "0"))
calls = []

@dlt.destination(batch_size=2)
def sink(items, table):
    calls.append(1)
    if len(calls) == kill_at:
        os.kill(os.getpid(), 9)
    with open(log, "a") as handle:
        handle.write(json.dumps({"table": table["name"], "ids": [i["id"] for i in items]}) + "\\n")

@dlt.resource(name="events")
def events(cursor=dlt.sources.incremental("id", initial_value=-1)):
    yield [{"id": i} for i in range(9) if i > cursor.start_value]

pipeline = dlt.pipeline("resume", destination=sink, pipelines_dir=sys.argv[2])
pipeline.run(events())
print(json.dumps(pipeline.state["sources"]["resume"]["resources"]["events"]["incremental"]["id"]["last_value"]))
"""


def _run(tmp_path: Path, kill_at: int | None) -> subprocess.CompletedProcess[str]:
    program = tmp_path / "program.py"
    program.write_text(PROGRAM)
    env = {**os.environ, "KILL_AT": str(kill_at or 0)}
    return subprocess.run(
        [sys.executable, str(program), str(tmp_path / "log.jsonl"), str(tmp_path / "pipelines")],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _batches(tmp_path: Path) -> list[list[int]]:
    lines = (tmp_path / "log.jsonl").read_text().splitlines()
    return [json.loads(line)["ids"] for line in lines]


def test_a_kill_between_batches_then_a_rerun_sends_each_batch_once(tmp_path: Path) -> None:
    killed = _run(tmp_path, kill_at=3)
    assert killed.returncode == -signal.SIGKILL
    assert _batches(tmp_path) == [[0, 1], [2, 3]]

    rerun = _run(tmp_path, kill_at=None)

    assert rerun.returncode == 0, rerun.stderr
    assert _batches(tmp_path) == [[0, 1], [2, 3], [4, 5], [6, 7], [8]]


def test_a_cursor_s_rows_the_killed_load_did_not_send_arrive_on_the_rerun_once(
    tmp_path: Path,
) -> None:
    _run(tmp_path, kill_at=2)
    assert _batches(tmp_path) == [[0, 1]]

    rerun = _run(tmp_path, kill_at=None)

    assert json.loads(rerun.stdout.strip().splitlines()[-1]) == 8
    assert _batches(tmp_path) == [[0, 1], [2, 3], [4, 5], [6, 7], [8]]
