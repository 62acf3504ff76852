"""Loader side of the Spark destination tests: each command is one Spark application.

``python spark_destination_child.py COMMAND WORKDIR [ARG]`` loads into the Hive metastore and
warehouse under WORKDIR and writes what it saw as JSON to ``WORKDIR/<command>.json``. The
test module runs these in child processes because the embedded Derby metastore admits one JVM
at a time and the suite's own SparkSession has no Hive support. Starting a Spark application
costs seconds, and so does every load (each table is staged, renamed in and refreshed, plus
three system tables), so the module needs only two loader applications and few loads:
``crash`` (killed with SIGKILL, so it must be a process of its own) and ``loads``, which does
everything else in one application: the shared cases (one run, a table each), the
disposition scenarios (one pipeline, two runs, a table each, then its state and schema
restored from the catalog), the reruns of the crashed
pipelines, ``loadstone run --destination spark`` through the CLI's ``main``, and the decimal
loads of ``spark_decimals_child.py``. The *reader* is another program
(``spark_catalog_reader.py``) that does not import loadstone at all.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import loadstone as dlt

SPARK_OPTIONS = {
    "spark.master": "local[2]",
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    # the embedded metastore makes each table's folder without copying its parent's owner and
    # permissions, which Hive does by running `ls`, `chown` and `chmod` processes per folder
    # (about 200 process starts in the loads application; the tests check no permissions)
    "spark.hadoop.hive.warehouse.subdir.inherit.perms": "false",
}
CASES = ("github_events", "github_issues", "ethereum_blocks", "weird_rows")


def destination(work: Path) -> Any:
    return dlt.destinations.spark(
        warehouse_dir=str(work / "warehouse"),
        metastore_dir=str(work / "metastore"),
        options=SPARK_OPTIONS,
    )


def pipeline(work: Path, name: str) -> Any:
    return dlt.pipeline(
        name,
        destination=destination(work),
        dataset_name=name,
        pipelines_dir=str(work / "pipelines"),
    )


def counts(info: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for package in info.packages:
        for table, rows in package.row_counts.items():
            out[table] = out.get(table, 0) + rows
    return out


def load_cases(work: Path, cases_dir: Path) -> dict[str, Any]:
    """Every shared case as a table of one dataset ``cases``, in one run (one load package);
    the row counts the normalizer produced, by case (a case's tables start with its name)."""
    resources = [
        dlt.resource(json.loads((cases_dir / f"{case}.json").read_text("utf-8")), name=case)
        for case in CASES
    ]
    rows = counts(pipeline(work, "cases").run(resources))
    return {
        case: {t: n for t, n in rows.items() if n and (t == case or t.startswith(f"{case}__"))}
        for case in CASES
    }


def disposition_batches() -> list[list[Any]]:
    """Two runs of one pipeline, a table per disposition scenario: append, replace (root and
    nested), schema evolution (a column and a nested table added), merge by primary key
    (nested rows replaced; of duplicate keys the first is kept), merge of a shrunk list, and
    a wei beyond 38 digits (``too_wide``, whose column gets a text variant)."""
    first, second = (
        {
            "appended": [{"id": 1}, {"id": 2}],
            "replaced": [{"id": 1, "tags": ["a", "b"]}],
            "evolved": [{"id": 1, "name": "one"}],
            "merged": [{"id": 1, "v": "a", "tags": ["x"]}, {"id": 2, "v": "b", "tags": ["k"]}],
            "shrunk": [{"id": 1, "tags": ["a", "b", "c"]}, {"id": 2, "tags": ["q"]}],
            "too_wide": [{"id": 1, "big": 10**20}, {"id": 2, "big": 10**40}],
        },
        {
            "appended": [{"id": 3}],
            "replaced": [{"id": 2, "tags": ["c"]}],
            "evolved": [{"id": 2, "name": "two", "score": 2.5, "parts": [{"x": 1}]}],
            "merged": [
                {"id": 1, "v": "c", "tags": ["y", "z"]},
                {"id": 3, "v": "d"},
                {"id": 3, "v": "duplicate"},
            ],
            "shrunk": [{"id": 1, "tags": ["z"]}],  # a list of 3, then of 1 under the same key
        },
    )
    hints: dict[str, dict[str, Any]] = {
        "appended": {"write_disposition": "append"},
        "replaced": {"write_disposition": "replace"},
        "evolved": {"write_disposition": "append"},
        "merged": {"write_disposition": "merge", "primary_key": "id"},
        "shrunk": {"write_disposition": "merge", "primary_key": "id"},
        "too_wide": {"write_disposition": "append"},
    }
    return [
        [dlt.resource(rows, name=name, **hints[name]) for name, rows in batch.items()]
        for batch in (first, second)
    ]


def dispositions(work: Path) -> dict[str, Any]:
    """append, replace, schema evolution, merge (one pipeline, two runs, the second with a
    resource that keeps state); dataset() and sql_client() read; then the pipeline's local
    state dropped and restored from the catalog; merge refused."""
    out: dict[str, Any] = {}
    first, second = disposition_batches()

    @dlt.resource(name="items")
    def with_cursor() -> Any:
        dlt.current.resource_state()["cursor"] = "cursor-42"
        yield {"id": 1}

    p = pipeline(work, "dispositions")
    p.run(first)
    from pyspark.sql import SparkSession

    users_session = SparkSession.getActiveSession()
    assert users_session is not None
    before = users_session.table("dispositions.appended").count()  # the session caches files
    p.run([*second, with_cursor()])
    out["users_session_counts"] = [before, users_session.table("dispositions.appended").count()]
    out["append_dataset"] = sorted(r[0] for r in p.dataset()["appended"].select("id").fetchall())
    with p.sql_client() as client:
        out["evolved_sql"] = client.execute_sql("SELECT id, score FROM evolved ORDER BY id")
    p.drop()
    again = pipeline(work, "dispositions")
    again.run()
    out["restored_state"] = json.dumps(again.state, default=str)
    out["restored_tables"] = sorted(again.default_schema.tables) if again.default_schema else []

    p = pipeline(work, "upserted")
    try:
        p.run(
            [{"id": 1}],
            table_name="items",
            write_disposition={"disposition": "merge", "strategy": "upsert"},
            primary_key="id",
        )
        out["merge_error"] = None
    except Exception as error:
        out["merge_error"] = f"{type(error).__name__}: {error}"
    return out


def crash(work: Path) -> dict[str, Any]:
    """Two pipelines, ``append`` and ``replace``, in a process that gets SIGKILL once the first
    table of each one's second load is in.

    At that point each root table's files are renamed in (for ``replace``, its old files and
    its nested table's are set aside), the nested tables' and ``_dlt_loads`` are not. The two
    second loads run at once, in two threads, so that one Spark application (a process
    killed once) leaves both pipelines half-loaded.
    """
    from loadstone.plugins.destinations.spark import table_files

    first, second = (
        [{"id": 1, "tags": ["a", "b"]}, {"id": 2}],
        [{"id": 3, "tags": ["c", "d"]}, {"id": 4, "tags": ["e"]}],
    )
    pipelines = {d: pipeline(work, f"crashed_{d}") for d in ("append", "replace")}
    for disposition, each in pipelines.items():
        each.run(first, table_name="items", write_disposition=disposition)
    original = table_files.TableFolder.publish
    both_published = threading.Barrier(len(pipelines), timeout=300)

    def publish_then_die(self: Any, load_id: str) -> int:
        published = original(self, load_id)
        both_published.wait()
        os.kill(os.getpid(), signal.SIGKILL)
        return published

    table_files.TableFolder.publish = publish_then_die  # type: ignore[method-assign]
    loads = [
        threading.Thread(
            target=each.run,
            args=(second,),
            kwargs={"table_name": "items", "write_disposition": disposition},
        )
        for disposition, each in pipelines.items()
    ]
    for load in loads:
        load.start()
    for load in loads:
        load.join()
    return {"killed": False}


def rerun(work: Path) -> dict[str, Any]:
    """The next runs finish the packages the killed ones left; nothing twice."""
    loaded = {}
    for disposition in ("append", "replace"):
        info = pipeline(work, f"crashed_{disposition}").run()
        loaded[disposition] = len(info.packages)
    return loaded


def cli_run(work: Path, cases_dir: Path) -> dict[str, Any]:
    """``loadstone run ... --destination spark`` through the CLI's own ``main``: the exit
    status and what it wrote on stderr (the command's behaviour, not a process's)."""
    import contextlib
    import io

    from loadstone.cli import main

    os.environ.update(
        {
            "DESTINATION__SPARK__WAREHOUSE_DIR": str(work / "warehouse"),
            "DESTINATION__SPARK__METASTORE_DIR": str(work / "metastore"),
            "SPARK__MASTER": SPARK_OPTIONS["spark.master"],
            "SPARK__SQL__SHUFFLE__PARTITIONS": SPARK_OPTIONS["spark.sql.shuffle.partitions"],
        }
    )
    argv = ["run", str(cases_dir / "weird_rows.json"), "--table", "events"]
    argv += ["--destination", "spark", "--pipeline", "from_cli"]
    argv += ["--pipelines-dir", str(work / "pipelines"), "--quiet"]
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        returncode = main(argv)
    return {"returncode": returncode, "stderr": stderr.getvalue()}


def decimals(work: Path) -> dict[str, Any]:
    """The decimal loads of issue 39 (``spark_decimals_child.py``), in this application: what
    they saw, or the error that stopped them (so the other tests still get their loads)."""
    import spark_decimals_child as child

    seen: dict[str, Any] = {}
    for key, load in (("issue", child.issue_values), ("refused", child.refused)):
        try:
            seen[key] = load(work)
        except Exception as error:
            seen[key] = {"failed": f"{type(error).__name__}: {error}"}
    try:
        child.random_decimals(work)
        seen["property"] = "held"
    except Exception as error:
        seen["property"] = f"{type(error).__name__}: {error}"
    return seen


def loads(work: Path, cases_dir: Path) -> dict[str, Any]:
    """Every load but the killed ones, in one Spark application (run after both crashes)."""
    return {
        "cases": load_cases(work, cases_dir),
        "dispositions": dispositions(work),
        "rerun": rerun(work),
        "cli": cli_run(work, cases_dir),
        "decimals": decimals(work),
    }


COMMANDS = {"loads": loads, "crash": crash}


def main() -> None:
    command, work = sys.argv[1], Path(sys.argv[2])
    args: list[Any] = []
    if command == "loads":
        args = [Path(sys.argv[3])]
    os.chdir(work)
    result = COMMANDS[command](work, *args)
    (work / f"{command}.json").write_text(json.dumps(result, default=str), encoding="utf-8")


if __name__ == "__main__":
    main()
