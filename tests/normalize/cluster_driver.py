"""A pipeline driver run as a subprocess by the cluster tests: one process, many runs.

    python cluster_driver.py PIPELINES_DIR STEPS_JSON

``STEPS_JSON`` is a list of steps, run in order in this one process (a Spark application
costs a driver and two executor JVMs, so the module runs its CLI and API cases in one
driver):

* ``{"mode": "cli", "argv": [...], "pipeline": NAME}``: ``loadstone ARGV`` through the
  command line's own ``main`` (see :func:`_cli`);
* ``{"mode": "jsonl", "pipeline": NAME, "source": PATH}``: ``run(PATH)`` into DuckDB;
* ``{"mode": "dataframe", "pipeline": NAME, "rows": N}``: ``run`` on a generated DataFrame;
* ``{"mode": "resume", "pipeline": NAME}``: ``run()``, finishing what a failed run left;
* ``{"mode": "reveal", "folder": PATH}``: the workers see PATH from now on (the storage is
  fixed; the worker pids come from ``LOADSTONE_TEST_WORKER_PIDS``).

A step may add ``"env": {...}``, set for that step only (config is read from the
environment at each run). Spark and storage come from the environment (``SPARK__MASTER`` or
``SPARK__REMOTE``, ``PACKAGES__STORAGE_URL`` ...). Prints one JSON object per step on stdout:
``error`` (None, or the one-line error a failed run raised), ``rows`` (rows loaded per table)
and ``normalize`` (the run's normalize trace); a ``cli`` step adds ``returncode``, ``stderr``,
``stdout``, ``table_rows`` (rows and distinct ids in the pipeline's DuckDB table when the
command returned) and whether a Spark session was running before and after it (its stderr
is kept in ``NAME.cli-stderr`` in the working folder).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from cluster_support import reveal, table_rows
from env_support import environment

import loadstone
from loadstone.spark_session import active_session, get_spark_session


def _frame(spark: Any, rows: int) -> Any:
    return spark.range(0, rows, 1, 4).selectExpr(
        "id",
        "concat('event ', id) as name",
        "named_struct('size', id % 97, 'text', repeat('x', 50)) as payload",
        "array(named_struct('tag', concat('t', id % 5))) as tags",
    )


def _run(step: Mapping[str, Any], pipelines_dir: str) -> dict[str, Any]:
    pipe = loadstone.pipeline(step["pipeline"], destination="duckdb", pipelines_dir=pipelines_dir)
    try:
        if step["mode"] == "jsonl":
            info = pipe.run(step["source"], table_name="events")
        elif step["mode"] == "dataframe":
            spark = get_spark_session()
            info = pipe.run(_frame(spark, int(step["rows"])), table_name="events", spark=spark)
        else:
            info = pipe.run()
    except Exception as exc:
        return {"error": f"error: {type(exc).__name__}: {exc}", "rows": {}, "normalize": None}
    rows: dict[str, int] = {}
    for package in info.packages:
        for table, count in package.row_counts.items():
            rows[table] = rows.get(table, 0) + count
    return {"error": None, "rows": rows, "normalize": pipe.last_trace.get("normalize")}


@contextlib.contextmanager
def _stderr_of_process(into: Path) -> Iterator[None]:
    """File descriptor 2 goes to ``into`` for the block: what a ``loadstone`` process's stderr
    would hold, Python's lines and those of a Spark driver JVM started in the block (the JVM
    inherits the descriptor, and keeps writing to ``into`` for the rest of its life)."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(into, "wb") as target:
        os.dup2(target.fileno(), 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def _cli(step: Mapping[str, Any]) -> dict[str, Any]:
    """``loadstone ARGV`` in this process, as a ``loadstone`` process would run it.

    What would differ, and is kept the same: the command's stderr is the process's file
    descriptor 2 (the Spark driver JVM's log lines included, not just ``sys.stderr``); the
    environment is restored afterwards (``--engine`` sets ``NORMALIZE__ENGINE``, which a
    process takes with it when it ends). The command starts its own Spark session only if
    none is running (``spark_before``): the test orders the steps so that each CLI step
    starts one, as a process does, and a failing command stops the session it started
    before its error line (``spark_after``). A later application of this process inherits
    the Spark options the first one started the driver JVM with (it keeps them as system
    properties), so steps that start applications must set the same Spark options.
    """
    from loadstone.cli import main

    saved = dict(os.environ)
    spark_before = active_session() is not None
    stdout = io.StringIO()
    captured = Path.cwd() / f"{step['pipeline']}.cli-stderr"
    try:
        with _stderr_of_process(captured), contextlib.redirect_stdout(stdout):
            returncode = main(step["argv"])
    finally:
        os.environ.clear()
        os.environ.update(saved)
    stderr = captured.read_text(encoding="utf-8", errors="replace")
    return {
        "error": None,
        "rows": {},
        "normalize": None,
        "returncode": returncode,
        "stderr": stderr,
        "stdout": stdout.getvalue(),
        "table_rows": table_rows(Path.cwd(), step["pipeline"]),
        "spark_before": spark_before,
        "spark_after": active_session() is not None,
    }


def _step(step: Mapping[str, Any], pipelines_dir: str) -> dict[str, Any]:
    if step["mode"] == "cli":
        return _cli(step)
    if step["mode"] == "reveal":
        pids = [int(p) for p in os.environ["LOADSTONE_TEST_WORKER_PIDS"].split(",")]
        reveal(pids, Path(step["folder"]))
        return {"error": None, "rows": {}, "normalize": None}
    return _run(step, pipelines_dir)


def main(pipelines_dir: str, steps_json: str) -> int:
    for step in json.loads(steps_json):
        with environment(step.get("env", {})):
            result = _step(step, pipelines_dir)
        print(json.dumps(result, default=str), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
