"""A pipeline driver run as a subprocess by the cluster tests (one SparkSession per process).

    python cluster_driver.py jsonl|dataframe PIPELINES_DIR NAME [SOURCE_OR_ROWS]

Spark and storage come from the environment (``SPARK__MASTER`` or ``SPARK__REMOTE``,
``PACKAGES__STORAGE_URL`` ...). Prints the run's trace as JSON on success; a failed run
prints ``error: ...`` on stderr and exits 1, as the CLI does.
"""

from __future__ import annotations

import json
import sys

import loadstone
from loadstone.spark_session import get_spark_session


def main(mode: str, pipelines_dir: str, name: str, source: str = "") -> int:
    pipe = loadstone.pipeline(name, destination="duckdb", pipelines_dir=pipelines_dir)
    try:
        if mode == "jsonl":
            pipe.run(source, table_name="events")
        elif mode == "dataframe":
            spark = get_spark_session()
            rows = int(source)
            frame = spark.range(0, rows, 1, 4).selectExpr(
                "id",
                "concat('event ', id) as name",
                "named_struct('size', id % 97, 'text', repeat('x', 50)) as payload",
                "array(named_struct('tag', concat('t', id % 5))) as tags",
            )
            pipe.run(frame, table_name="events", spark=spark)
        elif mode == "resume":
            pipe.run()
        else:
            raise SystemExit(f"unknown mode {mode}")
    except Exception as exc:
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(pipe.last_trace.get("normalize")))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
