"""Runs at the same time: of one pipeline, a drop during a run, two pipelines on one DuckDB file.

A second run of a pipeline waits for the first (saying so) or fails before touching anything;
``drop-pending-packages`` refuses while a run holds the pipeline; a lock left by a dead
process is no obstacle; a DuckDB file held by another process is waited for, and when the
wait times out the advice given finishes the package without loading anything twice.

The ``loadstone`` commands run at the same time are forked from one preloaded parent
(``preloaded_children.py``) that imported what a run imports: each is a process of its own
(its own pid and locks), without paying Python's start-up and the imports again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from preloaded_children import PIPELINE_RUN, Child, Preloaded, preloaded

from loadstone.cli import main
from loadstone.storage.pipeline_lock import PipelineLock, lock_path

ROWS = 200


def write_input(path: str, first_id: int) -> str:
    with open(path, "w") as handle:
        for i in range(first_id, first_id + ROWS):
            handle.write(json.dumps({"id": i, "tags": [i]}) + "\n")
    return path


def pipelines_dir() -> Path:
    return Path(os.environ["LOADSTONE_HOME"]) / "pipelines"


@pytest.fixture(scope="module")
def parent() -> Iterator[Preloaded]:
    yield from preloaded(*PIPELINE_RUN)


def cli(parent: Preloaded, *args: str, env: dict[str, str] | None = None) -> Child:
    """``python -m loadstone.cli ARGS``, started (forked from the preloaded parent)."""
    return parent.start(module="loadstone.cli", args=args, env=dict(os.environ, **(env or {})))


def run_args(path: str, pipeline: str = "conc", dataset: str = "ds") -> list[str]:
    return ["run", path, "-t", "items", "-p", pipeline, "--dataset", dataset, "-q"]


def counts(database: str = "conc.duckdb", dataset: str = "ds") -> tuple[int, int, int]:
    with duckdb.connect(database, read_only=True) as conn:
        return conn.execute(
            f"SELECT count(*), count(DISTINCT id), (SELECT count(*) FROM {dataset}.items__tags) "
            f"FROM {dataset}.items"
        ).fetchone()


def test_a_second_run_waits_for_the_first_and_says_so(parent: Preloaded) -> None:
    held = PipelineLock(pipelines_dir(), "conc")
    held.acquire(0)
    second = cli(parent, *run_args(write_input("b.jsonl", 0)), "--lock-timeout", "120")
    notice = second.first_line()
    assert "is being run by process" in notice and "waiting for it to finish" in notice
    assert not (pipelines_dir() / "conc" / "packages").exists()  # nothing touched meanwhile
    held.release()
    done = second.wait(timeout=300)
    assert done.returncode == 0, done.stderr
    assert counts() == (ROWS, ROWS, ROWS)


def test_with_lock_timeout_0_a_second_run_fails_before_touching_anything(capsys: Any) -> None:
    held = PipelineLock(pipelines_dir(), "conc")
    held.acquire(0)
    try:
        code = main([*run_args(write_input("b.jsonl", 0)), "--lock-timeout", "0"])
    finally:
        held.release()
    err = capsys.readouterr().err
    assert code != 0
    assert err.count("error: ") == 1 and f"process {os.getpid()}" in err
    assert "nothing was changed" in err
    assert not (pipelines_dir() / "conc").exists()


def test_two_runs_of_one_pipeline_at_once_load_each_row_once(parent: Preloaded) -> None:
    runs = [cli(parent, *run_args(write_input(f"in{n}.jsonl", n * ROWS))) for n in range(2)]
    for run in runs:
        done = run.wait(timeout=300)
        assert done.returncode == 0, done.stderr
    assert counts() == (2 * ROWS, 2 * ROWS, 2 * ROWS)


def test_dropping_pending_packages_is_refused_while_a_run_holds_the_pipeline(capsys: Any) -> None:
    import loadstone as dlt

    dlt.pipeline("conc", destination="duckdb", dataset_name="ds").extract(
        Path(write_input("a.jsonl", 0)), table_name="items"
    )
    held = PipelineLock(pipelines_dir(), "conc")
    held.acquire(0)
    try:
        code = main(["pipeline", "conc", "drop-pending-packages"])
        info = main(["pipeline", "conc", "info"])
    finally:
        held.release()
    captured = capsys.readouterr()
    assert code != 0 and "is being run by" in captured.err
    assert info == 0 and "running:         yes" in captured.out
    assert "do not" not in captured.out and "wait for it to finish" in captured.out
    assert len(dlt.pipeline("conc").list_pending_packages()) == 1


def test_a_lock_file_left_by_a_dead_process_is_no_obstacle() -> None:
    path = lock_path(pipelines_dir(), "conc")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"pid": 2**22 + 7, "host": "h", "command": "x", "since": 0}))
    assert main([*run_args(write_input("a.jsonl", 0)), "--lock-timeout", "0"]) == 0
    assert counts() == (ROWS, ROWS, ROWS)


def test_two_pipelines_on_one_duckdb_file_at_once_load_each_row_once(parent: Preloaded) -> None:
    shared = {"DESTINATION__DUCKDB__CREDENTIALS": "shared.duckdb"}
    runs = [
        cli(parent, *run_args(write_input(f"in{n}.jsonl", 0), f"p{n}", f"ds{n}"), env=shared)
        for n in range(2)
    ]
    for run in runs:
        done = run.wait(timeout=300)
        assert done.returncode == 0, done.stderr
    for n in range(2):
        assert counts("shared.duckdb", f"ds{n}") == (ROWS, ROWS, ROWS)


HOLDER = """
import sys, duckdb
conn = duckdb.connect(sys.argv[1])
print("held", flush=True)
sys.stdin.readline()
"""


def test_a_duckdb_file_held_elsewhere_stops_the_run_before_it_extracts(parent: Preloaded) -> None:
    """A run first reads the destination's state (as dlt's run syncs it): with the file held
    elsewhere it fails there, naming the file, having extracted nothing; the same command
    then loads each row once."""
    env = {"DESTINATION__DUCKDB__LOCK_TIMEOUT": "0.5"}
    write_input("a.jsonl", 0)
    assert main(run_args("a.jsonl")) == 0
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, "conc.duckdb"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    write_input("b.jsonl", ROWS)
    blocked = cli(parent, *run_args("b.jsonl"), env=env).wait(timeout=300)
    err = blocked.stderr
    holder.communicate("\n", timeout=60)
    assert blocked.returncode != 0
    assert err.count("error: ") == 1 and "cannot open DuckDB database" in err
    assert "step sync failed" in err
    # the same command: nothing was extracted, so it extracts and loads b once
    again = cli(parent, *run_args("b.jsonl")).wait(timeout=300)
    assert again.returncode == 0, again.stderr
    assert counts() == (2 * ROWS, 2 * ROWS, 2 * ROWS)
