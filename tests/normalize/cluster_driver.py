"""A pipeline driver run as a subprocess by the cluster tests: one Spark application, many runs.

    python cluster_driver.py PIPELINES_DIR STEPS_JSON

``STEPS_JSON`` is a list of steps, run in order in this one process (a Spark application
costs a driver and two executor JVMs, so the module runs its API cases in one):

* ``{"mode": "jsonl", "pipeline": NAME, "source": PATH}``: ``run(PATH)`` into DuckDB;
* ``{"mode": "dataframe", "pipeline": NAME, "rows": N}``: ``run`` on a generated DataFrame;
* ``{"mode": "resume", "pipeline": NAME}``: ``run()``, finishing what a failed run left;
* ``{"mode": "reveal", "folder": PATH}``: the workers see PATH from now on (the storage is
  fixed; the worker pids come from ``LOADSTONE_TEST_WORKER_PIDS``).

A step may add ``"env": {...}``, set for that step only (config is read from the
environment at each run). Spark and storage come from the environment (``SPARK__MASTER`` or
``SPARK__REMOTE``, ``PACKAGES__STORAGE_URL`` ...). Prints one JSON object per step on stdout:
``error`` (None, or the one-line error a failed run raised), ``rows`` (rows loaded per table)
and ``normalize`` (the run's normalize trace).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cluster_support import reveal
from env_support import environment

import loadstone
from loadstone.spark_session import get_spark_session


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


def main(pipelines_dir: str, steps_json: str) -> int:
    for step in json.loads(steps_json):
        with environment(step.get("env", {})):
            if step["mode"] == "reveal":
                pids = [int(p) for p in os.environ["LOADSTONE_TEST_WORKER_PIDS"].split(",")]
                reveal(pids, Path(step["folder"]))
                result: dict[str, Any] = {"error": None, "rows": {}, "normalize": None}
            else:
                result = _run(step, pipelines_dir)
        print(json.dumps(result, default=str), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
