"""The Spark job whose loaded classes become the suite's JVM class archive (``jvm_options.py``).

It touches what the suite's Spark applications use: a Hive-metastore catalog, JSON and Parquet
files, Python rows in and out, and ``mapInArrow`` tasks. ``python jvm_archive_job.py ARCHIVE``
prints the driver JVM's pid; that JVM writes ARCHIVE as it exits, after this script ends.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
from pyspark.sql import SparkSession

#: the JVM's messages about classes it leaves out of the archive: to stderr, errors only
LOGS = "-Xlog:disable -Xlog:all=error:stderr"


def _double(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        yield pa.RecordBatch.from_pydict({"id": [2 * v for v in batch.column(0).to_pylist()]})


def main() -> None:
    os.environ["PYSPARK_PYTHON"] = sys.executable  # the workers need this venv's pyarrow
    with tempfile.TemporaryDirectory() as work:
        folder = Path(work)
        (folder / "rows.jsonl").write_text(
            "\n".join(json.dumps({"id": i, "tags": ["a"], "o": {"x": i}}) for i in range(50))
        )
        spark = (
            SparkSession.builder.master("local[1]")
            .config(
                "spark.driver.extraJavaOptions",
                f"-XX:TieredStopAtLevel=1 -XX:ArchiveClassesAtExit={sys.argv[1]} {LOGS}",
            )
            .config("spark.ui.enabled", "false")
            .config("spark.sql.warehouse.dir", str(folder / "warehouse"))
            .config(
                "spark.hadoop.javax.jdo.option.ConnectionURL",
                f"jdbc:derby:;databaseName={folder / 'metastore'};create=true",
            )
            .enableHiveSupport()
            .getOrCreate()
        )
        rows = spark.read.json(str(folder / "rows.jsonl"))
        rows.write.parquet(str(folder / "rows.parquet"))
        read = spark.read.parquet(str(folder / "rows.parquet"))
        read.select("id").mapInArrow(_double, "id long").collect()
        spark.createDataFrame([(1, "a"), (2, "b")], "id long, v string").createOrReplaceTempView(
            "v"
        )
        spark.sql("CREATE DATABASE IF NOT EXISTS warm")
        spark.sql("CREATE TABLE warm.t (id BIGINT, v STRING) USING parquet")
        spark.sql("INSERT INTO warm.t SELECT * FROM v")
        spark.table("warm.t").orderBy("id").collect()
        jvm = spark.sparkContext._jvm
        assert jvm is not None
        print(f"jvm-pid={jvm.java.lang.ProcessHandle.current().pid()}", flush=True)
        spark.stop()


if __name__ == "__main__":
    main()
