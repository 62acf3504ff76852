"""An independent Spark application reading the Spark destination's tables.

It knows only the metastore and the warehouse (no loadstone import): for every database and
table it writes the row count, the columns and the rows (as text) to ``WORKDIR/read.json``.
``python spark_catalog_reader.py WORKDIR``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pyspark.sql import SparkSession


def main() -> None:
    work = Path(sys.argv[1])
    spark = (
        SparkSession.builder.master("local[1]")
        .appName("independent-reader")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", str(work / "warehouse"))
        .config(
            "spark.hadoop.javax.jdo.option.ConnectionURL",
            f"jdbc:derby:;databaseName={work / 'metastore'};create=false",
        )
        .enableHiveSupport()
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    found: dict[str, dict[str, object]] = {}
    # SHOW statements, not spark.catalog.listTables: that one fetches every table's whole
    # metadata from the metastore (about 5 of this program's 35 CPU-s), and only names are used
    for (database,) in spark.sql("SHOW DATABASES").collect():
        for table in spark.sql(f"SHOW TABLES IN `{database}`").collect():
            frame = spark.table(f"`{database}`.`{table.tableName}`")
            rows = [[None if v is None else str(v) for v in row] for row in frame.collect()]
            found[f"{database}.{table.tableName}"] = {
                "columns": [f"{f.name}:{f.dataType.simpleString()}" for f in frame.schema],
                "count": len(rows),
                "rows": rows if len(rows) <= 50 else [],
            }
    spark.stop()
    (work / "read.json").write_text(json.dumps(found), encoding="utf-8")


if __name__ == "__main__":
    main()
