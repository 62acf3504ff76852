"""Loader side of the Spark destination over Spark Connect: each command is one client process.

``python spark_connect_child.py COMMAND WORKDIR sc://HOST:PORT`` loads through the Connect
server into databases whose folders are under WORKDIR, and writes what it saw as JSON to
``WORKDIR/<command>.json``. A client process of its own, because a Connect client switches
pyspark's functions to Connect for the whole process (the suite's classic session would break).

* ``crash``: a ``merge`` pipeline with nested rows loads once, then its second load is killed
  (SIGKILL) once the root table's files are renamed in: its old files and its nested table's
  were set aside, the nested table's new rows and the ``_dlt_loads`` row are not in yet.
* ``loads``: what readers see of the killed load; the rerun finishes the killed package; two loads of an ``append`` table and a
  ``replace`` table with a nested table (the second with a time of day, a column Spark cannot
  read from Parquet, rewritten as text by the server's Python workers); then every table is
  read back through the Connect server; and the destination without ``catalog``, refused.

The server's catalog is in-memory (the loopback server is started without Hive): each dataset
is created beforehand with a ``LOCATION`` under WORKDIR (the destination uses a database that
exists), and the destination names ``catalog="spark_catalog"``, accepting that catalog.
"""

from __future__ import annotations

import datetime
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import loadstone as dlt

MERGED = "connect_merged"
MIXED = "connect_mixed"
FIRST_MERGE = [
    {"id": 1, "v": "a", "tags": ["a", "b", "c"]},
    {"id": 2, "v": "b", "tags": ["q"]},
]
SECOND_MERGE = [
    {"id": 1, "v": "c", "tags": ["z"]},  # a shrunk list: none of a, b, c stays
    {"id": 3, "v": "d", "tags": ["y"]},
    {"id": 3, "v": "duplicate"},  # the first of duplicate keys is kept
]


def session(url: str) -> Any:
    from pyspark.sql import SparkSession

    return SparkSession.builder.remote(url).getOrCreate()


def pipeline(work: Path, spark: Any, name: str) -> Any:
    return dlt.pipeline(
        name,
        destination=dlt.destinations.spark(spark, catalog="spark_catalog"),
        dataset_name=name,
        pipelines_dir=str(work / "pipelines"),
    )


def new_dataset(work: Path, spark: Any, name: str) -> None:
    spark.sql(f"DROP DATABASE IF EXISTS {name} CASCADE")
    spark.sql(f"CREATE DATABASE {name} LOCATION '{work / 'warehouse' / name}'")


def merge(p: Any, rows: list[dict[str, Any]]) -> Any:
    return p.run(rows, table_name="items", write_disposition="merge", primary_key="id")


def crash(work: Path, spark: Any) -> dict[str, Any]:
    from loadstone.plugins.destinations.spark import table_files

    new_dataset(work, spark, MERGED)
    p = pipeline(work, spark, MERGED)
    merge(p, FIRST_MERGE)

    def publish_then_die(self: Any, load_id: str) -> int:
        os.kill(os.getpid(), signal.SIGKILL)
        return 0

    original = table_files.TableFolder.publish

    def publish_once_then_die(self: Any, load_id: str) -> int:
        published = original(self, load_id)
        table_files.TableFolder.publish = publish_then_die  # type: ignore[method-assign]
        return published

    table_files.TableFolder.publish = publish_once_then_die  # type: ignore[method-assign]
    merge(p, SECOND_MERGE)
    return {"killed": False}


def mixed(batch: int) -> list[Any]:
    """An ``append`` table and a ``replace`` table with a nested one; load 2 has a time."""
    events = [{"id": 1}, {"id": 2}] if batch == 1 else [{"id": 3}]
    stock: list[dict[str, Any]] = [{"sku": "a", "bins": ["x", "y"]}]
    if batch == 2:
        stock = [{"sku": "b", "bins": ["z"], "at": datetime.time(1, 2, 3, 4)}]
    return [
        dlt.resource(events, name="events", write_disposition="append"),
        dlt.resource(stock, name="stock", write_disposition="replace"),
    ]


def rows(spark: Any, sql: str) -> list[list[Any]]:
    return sorted([list(row) for row in spark.sql(sql).collect()], key=str)


def visible(spark: Any, table: str, column: str) -> list[list[Any]]:
    """What a reader sees now (the server caches file listings: refreshed first)."""
    spark.catalog.refreshTable(f"{MERGED}.{table}")
    return rows(spark, f"SELECT {column} FROM {MERGED}.{table}")


def in_memory_error(spark: Any) -> str | None:
    """The server's in-memory catalog, not accepted by name: refused, saying what to do."""
    try:
        dlt.destinations.spark(spark).client(None, "refused")
    except Exception as error:
        return f"{type(error).__name__}: {error}"
    return None


def loads(work: Path, spark: Any) -> dict[str, Any]:
    killed = {t: visible(spark, t, c) for t, c in [("items", "id"), ("items__tags", "value")]}
    killed["_dlt_loads"] = visible(spark, "_dlt_loads", "load_id")
    rerun = pipeline(work, spark, MERGED).run()
    new_dataset(work, spark, MIXED)
    p = pipeline(work, spark, MIXED)
    for batch in (1, 2):
        p.run(mixed(batch))
    return {
        "killed": killed,
        "in_memory_error": in_memory_error(spark),
        "rerun_packages": len(rerun.packages),
        "merged": rows(spark, f"SELECT id, v FROM {MERGED}.items"),
        "merged_tags": rows(spark, f"SELECT value FROM {MERGED}.items__tags"),
        "merged_loads": rows(spark, f"SELECT load_id FROM {MERGED}._dlt_loads"),
        "events": rows(spark, f"SELECT id FROM {MIXED}.events"),
        "stock": rows(spark, f"SELECT sku, at FROM {MIXED}.stock"),
        "bins": rows(spark, f"SELECT value FROM {MIXED}.stock__bins"),
        "mixed_loads": rows(spark, f"SELECT load_id FROM {MIXED}._dlt_loads"),
        "dataset": sorted(r[0] for r in p.dataset()["events"].select("id").fetchall()),
    }


COMMANDS = {"crash": crash, "loads": loads}


def main() -> None:
    command, work, url = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    os.chdir(work)
    result = COMMANDS[command](work, session(url))
    (work / f"{command}.json").write_text(json.dumps(result, default=str), encoding="utf-8")


if __name__ == "__main__":
    main()
