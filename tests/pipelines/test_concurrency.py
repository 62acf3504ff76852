"""Runs at the same time: of one pipeline, a drop during a run, two pipelines on one DuckDB file.

A second run of a pipeline waits for the first (saying so) or fails before touching anything;
``drop-pending-packages`` refuses while a run holds the pipeline; a lock left by a dead
process is no obstacle; a DuckDB file held by another process is waited for, and when the
wait times out the advice given finishes the package without loading anything twice.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb

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


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "loadstone.cli", *args],
        env=dict(os.environ, **(env or {})),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run_args(path: str, pipeline: str = "conc", dataset: str = "ds") -> list[str]:
    return ["run", path, "-t", "items", "-p", pipeline, "--dataset", dataset, "-q"]


def counts(database: str = "conc.duckdb", dataset: str = "ds") -> tuple[int, int, int]:
    with duckdb.connect(database, read_only=True) as conn:
        return conn.execute(
            f"SELECT count(*), count(DISTINCT id), (SELECT count(*) FROM {dataset}.items__tags) "
            f"FROM {dataset}.items"
        ).fetchone()


def test_a_second_run_waits_for_the_first_and_says_so() -> None:
    held = PipelineLock(pipelines_dir(), "conc")
    held.acquire(0)
    second = cli(*run_args(write_input("b.jsonl", 0)), "--lock-timeout", "120")
    assert second.stderr is not None
    notice = second.stderr.readline()
    assert "is being run by process" in notice and "waiting for it to finish" in notice
    assert not (pipelines_dir() / "conc" / "packages").exists()  # nothing touched meanwhile
    held.release()
    _out, err = second.communicate(timeout=300)
    assert second.returncode == 0, err
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


def test_two_runs_of_one_pipeline_at_once_load_each_row_once() -> None:
    runs = [cli(*run_args(write_input(f"in{n}.jsonl", n * ROWS))) for n in range(2)]
    for run in runs:
        _out, err = run.communicate(timeout=300)
        assert run.returncode == 0, err
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


def test_two_pipelines_on_one_duckdb_file_at_once_load_each_row_once() -> None:
    shared = {"DESTINATION__DUCKDB__CREDENTIALS": "shared.duckdb"}
    runs = [
        cli(*run_args(write_input(f"in{n}.jsonl", 0), f"p{n}", f"ds{n}"), env=shared)
        for n in range(2)
    ]
    for run in runs:
        _out, err = run.communicate(timeout=300)
        assert run.returncode == 0, err
    for n in range(2):
        assert counts("shared.duckdb", f"ds{n}") == (ROWS, ROWS, ROWS)


HOLDER = """
import sys, duckdb
conn = duckdb.connect(sys.argv[1])
print("held", flush=True)
sys.stdin.readline()
"""


def test_a_duckdb_file_held_elsewhere_gives_advice_that_cannot_duplicate() -> None:
    env = {"DESTINATION__DUCKDB__LOCK_TIMEOUT": "0.5"}
    write_input("a.jsonl", 0)
    assert main(run_args("a.jsonl")) == 0  # the pipeline knows its state: no restore needed
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, "conc.duckdb"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    write_input("b.jsonl", ROWS)
    blocked = cli(*run_args("b.jsonl"), env=env)
    _out, err = blocked.communicate(timeout=300)
    holder.communicate("\n", timeout=60)
    assert blocked.returncode != 0
    assert err.count("error: ") == 1 and "cannot open DuckDB database" in err
    assert "`loadstone pipeline conc load` finishes it" in err and "close it and retry" not in err
    again = cli(*run_args("b.jsonl"))  # the same command: finishes the package, extracts nothing
    _out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    assert "instead of extracting it again" in err
    assert counts() == (2 * ROWS, 2 * ROWS, 2 * ROWS)
