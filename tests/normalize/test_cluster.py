"""Loadstone on a real Spark cluster and a Spark Connect server, all on loopback.

The workers cannot see the driver's pipelines folder (a tmpfs over it in their own mount
namespace), as on machines that do not share a disk: packages keep their data files on
``packages.storage_url``, a folder both sides see. The driver is a subprocess
(``cluster_driver.py``), configured through the environment only. A Spark application on the
cluster costs a driver and two executor JVMs (on 2 cores, about 17 s), so the CLI and API
cases share one driver process (the ``runs`` fixture) and each test checks one of them: the
two ``loadstone run`` commands run through the command line's own ``main`` in it, each
starting its Spark application as a ``loadstone`` process does, their stderr the process's
(the driver JVM's lines included); the failing one's application ends with it, the other's
serves the API cases.

The Spark destination over Spark Connect is tested here too (last), on the same Connect
server: a module runs on one worker (``--dist loadfile``), so the server starts once (it
costs a minute of CPU) instead of once on each worker.

Every driver and client program (``cluster_driver.py``, ``spark_connect_child.py``, the
CLI's ``pipeline trace``) is a process of its own forked from one preloaded parent
(``preloaded_children.py``): real processes, own pids, a real SIGKILL, without importing
loadstone, pyarrow and pyspark again in each.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import duckdb
import pytest
from cluster_support import Cluster, ConnectServer, table_rows, write_events
from preloaded_children import LOADSTONE_RUN, Preloaded, preloaded
from s3_support import S3Server

from loadstone.storage.filesystem import open_filesystem

pytestmark = pytest.mark.cluster

DRIVER = Path(__file__).with_name("cluster_driver.py")
#: the Spark destination's client program over Spark Connect
CONNECT_CHILD = Path(__file__).resolve().parents[1] / "destinations/spark/spark_connect_child.py"
LOADSTONE = Path(sys.executable).with_name("loadstone")
#: small chunks, so that a small input still makes several tasks
CHUNK_BYTES = "200000"
#: one step of ``cluster_driver.py`` (its docstring lists the keys)
Step = dict[str, Any]
#: what the drivers (the CLI and ``cluster_driver.py``, classic pyspark or Spark Connect) and
#: the Spark destination's Connect client import, once in the preloaded parent
DRIVER_MODULES = (
    *LOADSTONE_RUN,
    "loadstone.spark_session",
    "loadstone.plugins.normalizers.relational.native",
    "loadstone.plugins.normalizers.relational.engine",
    "loadstone.plugins.destinations.duckdb.client",
    "loadstone.plugins.destinations.spark.client",
    "duckdb",
    "pyarrow",
    "pyarrow.parquet",
    "pandas",
    "pyspark",
    "pyspark.sql",
    "pyspark.sql.connect.session",
)


@pytest.fixture(scope="module")
def children() -> Iterator[Preloaded]:
    """The preloaded parent every driver and client program of the module is forked from."""
    yield from preloaded(*DRIVER_MODULES)


def _program(
    children: Preloaded,
    script: Path,
    args: Sequence[str],
    env: Mapping[str, str],
    cwd: Path,
) -> subprocess.CompletedProcess[str]:
    """``python SCRIPT ARGS`` (a forked child), its output captured."""
    return children.run(script=str(script), args=args, env=env, cwd=cwd, timeout=600)


def _rows(cwd: Path, pipeline: str, table: str = "events") -> tuple[int, int]:
    """(rows, distinct ids) of the pipeline's table in its DuckDB file; (0, 0) if none."""
    return table_rows(cwd, pipeline, table)


def _trace(children: Preloaded, cluster: Cluster, cwd: Path, pipeline: str) -> dict[str, Any]:
    args = ["pipeline", pipeline, "trace", "--json", "--pipelines-dir", str(cluster.pipelines_dir)]
    result = _program(children, LOADSTONE, args, cluster.driver_env(), cwd)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _check(result: Any) -> None:
    assert result.returncode == 0, f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"


def _driver(
    children: Preloaded, cluster: Cluster, env: dict[str, str], cwd: Path, steps: list[Step]
) -> list[Any]:
    """Run ``steps`` in one driver application; each step's result (``cluster_driver.py``)."""
    args = [str(cluster.pipelines_dir), json.dumps(steps)]
    result = _program(children, DRIVER, args, env, cwd)
    _check(result)
    found = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert len(found) == len(steps), result.stdout
    return found


def _executors(normalize: dict[str, Any]) -> set[str]:
    return {chunk["executor"] for chunk in normalize["chunks"]}


@attrs.frozen
class DriverRuns:
    """What the module's driver process did (``cluster_driver.py``), step by step."""

    work: Path
    store: Path
    bucket: Any
    bucket_name: str
    steps: dict[str, Any]


def _s3_inbox(s3_server: S3Server, work: Path) -> tuple[Any, str]:
    """A new bucket with three JSONL objects under ``inbox/`` (one gzipped)."""
    bucket_name = s3_server.new_bucket()
    bucket, _ = open_filesystem(f"s3://{bucket_name}", s3_server.credentials)
    for number, key in enumerate(("2024-01/a.jsonl", "2024-02/b.jsonl.gz", "2024-02/c.jsonl")):
        part = write_events(work / f"s3-events-{number}.jsonl", 1000, start=number * 1000)
        body = part.read_bytes()
        bucket.pipe(
            f"{bucket_name}/inbox/{key}", gzip.compress(body) if key.endswith(".gz") else body
        )
    return bucket, bucket_name


def _cli_steps(cluster: Cluster, shared: dict[str, str], hidden: dict[str, str]) -> list[Step]:
    """The two ``loadstone run`` commands, first in the driver so that each starts its Spark
    application as a ``loadstone`` process does (``cluster_driver.py``: ``_cli``): one on
    storage the executors cannot see (its application ends with it, and one executor is
    enough for it to fail: a JVM and its Python daemon less), then one whose application the
    API steps go on to use (with ``spark.cores.max`` 2 again, as ``driver_env`` sets it: the
    driver JVM keeps the first application's options for the next)."""
    failing = write_events(cluster.shared / "hidden-events.jsonl", 2000)
    loading = write_events(cluster.shared / "cli-events.jsonl", 4000)
    common = ["-t", "events", "-q", "--pipelines-dir", str(cluster.pipelines_dir)]
    return [
        {"label": "cli_hidden", "mode": "cli", "pipeline": "hidden",
         "argv": ["run", str(failing), "-p", "hidden", *common],
         "env": {**hidden, "SPARK__CORES__MAX": "1", "NORMALIZE__MIN_EXECUTORS": "1"}},
        {"label": "cli", "mode": "cli", "pipeline": "viacli",
         "argv": ["run", str(loading), "-p", "viacli", "--engine", "spark", *common],
         "env": shared},
    ]  # fmt: skip


@pytest.fixture(scope="module")
def runs(
    children: Preloaded,
    cluster: Cluster,
    s3_server: S3Server,
    tmp_path_factory: pytest.TempPathFactory,
) -> DriverRuns:
    """The CLI and API cases in one driver process on the cluster (a Spark application
    costs a driver and two executor JVMs): a CLI run on storage the executors cannot see
    (its application ends with its failure), then in one application a CLI run, a JSONL
    file and a DataFrame, a run whose tasks fail once and whose Python worker is killed, an
    ``s3://`` input with packages in an S3 bucket (read and written by the executors), and
    a DataFrame run on the hidden storage, failing until it is fixed, when the failed CLI
    run's package is finished."""
    work = tmp_path_factory.mktemp("cluster_runs")
    store = cluster.flaky / "store"
    shared, hidden = (
        {"PACKAGES__STORAGE_URL": str(cluster.shared / "store")},
        {"PACKAGES__STORAGE_URL": str(store)},
    )
    raise_marker, kill_marker = cluster.shared / "fault-raise", cluster.shared / "fault-kill"
    raise_marker.touch()
    kill_marker.touch()
    faults = {**shared, "NORMALIZE__FAULT": f"raise:{raise_marker},kill:{kill_marker}"}
    bucket, bucket_name = _s3_inbox(s3_server, work)
    on_s3 = {
        "PACKAGES__STORAGE_URL": f"s3://{bucket_name}/packages",
        "NORMALIZE__ENGINE": "spark",
        **{f"PACKAGES__CREDENTIALS__{k.upper()}": v for k, v in s3_server.credentials.items()},
    }
    steps: list[Step] = [
        *_cli_steps(cluster, shared, hidden),
        {"label": "s3", "mode": "jsonl", "pipeline": "ons3", "env": on_s3,
         "source": f"s3://{bucket_name}/inbox/2024-*/*.jsonl*"},
        {"label": "jsonl", "mode": "jsonl", "pipeline": "viaapi", "env": shared,
         "source": str(write_events(cluster.shared / "api-events.jsonl", 3000, start=10_000))},
        {"label": "dataframe", "mode": "dataframe", "pipeline": "viaapi", "rows": 5000,
         "env": shared},
        {"label": "faults", "mode": "jsonl", "pipeline": "faults", "env": faults,
         "source": str(write_events(cluster.shared / "fault-events.jsonl", 3000))},
        {"label": "hidden_dataframe", "mode": "dataframe", "pipeline": "hiddendf", "rows": 3000,
         "env": hidden},
        {"label": "reveal", "mode": "reveal", "folder": str(cluster.flaky)},
        {"label": "resume", "mode": "resume", "pipeline": "hidden", "env": hidden},
    ]  # fmt: skip
    env = cluster.driver_env(NORMALIZE__CHUNK_BYTES=CHUNK_BYTES)
    results = _driver(children, cluster, env, work, steps)
    found = {step["label"]: result for step, result in zip(steps, results, strict=True)}
    # each CLI run started its own Spark application, as a ``loadstone`` process does
    assert not found["cli_hidden"]["spark_before"] and not found["cli"]["spark_before"]
    return DriverRuns(work, store, bucket, bucket_name, found)


def test_cli_loads_every_row_once_with_tasks_on_both_executors(
    children: Preloaded, cluster: Cluster, runs: DriverRuns
) -> None:
    cli = runs.steps["cli"]
    assert cli["returncode"] == 0, f"stdout:\n{cli['stdout']}\nstderr:\n{cli['stderr']}"
    assert _rows(runs.work, "viacli") == (4000, 4000)
    trace = _trace(children, cluster, runs.work, "viacli")["normalize"]
    assert trace["engine"] == "spark" and trace["master"] == cluster.master_url
    assert len(_executors(trace)) == 2 and "driver" not in _executors(trace)
    assert all(chunk["native"] for chunk in trace["chunks"])


def test_api_loads_jsonl_and_a_dataframe_once_with_tasks_on_both_executors(
    runs: DriverRuns,
) -> None:
    jsonl, frame = runs.steps["jsonl"], runs.steps["dataframe"]
    assert (jsonl["error"], frame["error"]) == (None, None)
    assert (jsonl["rows"]["events"], frame["rows"]["events"]) == (3000, 5000)
    assert _rows(runs.work, "viaapi") == (8000, 8000)
    for step in (jsonl, frame):
        assert len(_executors(step["normalize"])) == 2
        assert "driver" not in _executors(step["normalize"])


def test_storage_the_executors_cannot_see_fails_the_cli_clearly_and_loads_nothing(
    runs: DriverRuns,
) -> None:
    """The error is the last line of the command's stderr, after the driver JVM's own."""
    failed = runs.steps["cli_hidden"]
    assert failed["returncode"] != 0
    error = failed["stderr"].strip().splitlines()[-1]
    assert error.startswith("error: ")
    assert "cannot read its input" in error and str(runs.store) in error and "executor" in error
    assert tuple(failed["table_rows"]) == (0, 0)


def test_storage_the_executors_cannot_see_fails_a_dataframe_run_clearly(runs: DriverRuns) -> None:
    error = runs.steps["hidden_dataframe"]["error"]
    assert error is not None and "has 3000 rows but 0 reached" in error and str(runs.store) in error
    assert _rows(runs.work, "hiddendf") == (0, 0)


def test_once_the_storage_is_fixed_the_failed_package_loads_once(runs: DriverRuns) -> None:
    assert runs.steps["resume"]["error"] is None
    assert _rows(runs.work, "hidden") == (2000, 2000)


def test_a_failed_task_and_a_killed_python_worker_leave_no_duplicate_rows(
    cluster: Cluster, runs: DriverRuns
) -> None:
    assert runs.steps["faults"]["error"] is None
    fault_markers = (cluster.shared / "fault-raise", cluster.shared / "fault-kill")
    assert not any(marker.exists() for marker in fault_markers)  # both faults happened
    assert _rows(runs.work, "faults") == (3000, 3000)
    with duckdb.connect(str(runs.work / "faults.duckdb"), read_only=True) as db:
        tags = db.execute("select count(*) from faults_dataset.events__tags").fetchone()
    assert tags == (6000,)


def test_packages_on_s3_load_every_row_once_with_tasks_on_both_executors(runs: DriverRuns) -> None:
    on_s3 = runs.steps["s3"]
    assert on_s3["error"] is None
    assert _rows(runs.work, "ons3") == (3000, 3000)
    assert len(_executors(on_s3["normalize"])) == 2
    assert "driver" not in _executors(on_s3["normalize"])
    # a glob of three objects (one gzipped): every object's chunks ran on the executors
    inputs = {chunk["input"] for chunk in on_s3["normalize"]["chunks"]}
    assert inputs == {
        f"s3://{runs.bucket_name}/inbox/{key}"
        for key in ("2024-01/a.jsonl", "2024-02/b.jsonl.gz", "2024-02/c.jsonl")
    }
    assert not runs.bucket.find(f"{runs.bucket_name}/packages")  # loaded packages leave no data
    # DataFrame input onto s3 (executors write it, mapInArrow): test_package_storage.py


def test_spark_connect_normalizes_jsonl_and_dataframe_input(
    children: Preloaded, cluster: Cluster, tmp_path: Path
) -> None:
    source = write_events(cluster.shared / "connect-events.jsonl", 3000, start=10_000)
    env = cluster.driver_env(SPARK__REMOTE=cluster.connect_url, NORMALIZE__CHUNK_BYTES=CHUNK_BYTES)
    del env["SPARK__MASTER"]
    steps: list[Step] = [
        {"mode": "jsonl", "pipeline": "connect", "source": str(source)},
        {"mode": "dataframe", "pipeline": "connect", "rows": 4000},
    ]
    results = _driver(children, cluster, env, tmp_path, steps)
    assert [step["rows"]["events"] for step in results] == [3000, 4000]
    assert _rows(tmp_path, "connect") == (7000, 7000)
    for step in results:
        trace = step["normalize"]
        assert trace["engine"] == "spark" and trace["remote"] == cluster.connect_url
        assert trace["master"] is None and len(trace["chunks"]) > 1


@pytest.fixture(scope="module")
def connect_loads(
    children: Preloaded, connect_server: ConnectServer, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """The Spark destination over Spark Connect: what its two client processes
    (``spark_connect_child.py``) did and read through the server, one killed with SIGKILL
    half way through a ``merge``, then one that reruns it and loads an ``append`` and a
    ``replace`` table."""
    work = tmp_path_factory.mktemp("spark_connect")
    args = [str(work), connect_server.url]
    crashed = _program(children, CONNECT_CHILD, ["crash", *args], dict(os.environ), work)
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr[-3000:]
    done = _program(children, CONNECT_CHILD, ["loads", *args], dict(os.environ), work)
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(json.loads((work / "loads.json").read_text(encoding="utf-8")))


@pytest.mark.spark
def test_a_load_killed_mid_way_is_not_recorded_and_shows_no_nested_rows_over_spark_connect(
    connect_loads: dict[str, Any],
) -> None:
    """The root table's files were in, the nested table's old ones set aside, no loads row."""
    killed = connect_loads["killed"]
    assert killed["items"] == [[1], [2], [3]]
    assert killed["items__tags"] == []
    assert len(killed["_dlt_loads"]) == 1


@pytest.mark.spark
def test_the_rerun_finishes_the_killed_merge_exactly_once_over_spark_connect(
    connect_loads: dict[str, Any],
) -> None:
    assert connect_loads["rerun_packages"] == 1
    assert len(connect_loads["merged_loads"]) == 2
    assert connect_loads["merged"] == [[1, "c"], [2, "b"], [3, "d"]]


@pytest.mark.spark
def test_merge_replaces_the_nested_rows_of_replaced_parents_over_spark_connect(
    connect_loads: dict[str, Any],
) -> None:
    """Key 1's list shrank from a, b, c to z: none of its old elements stays."""
    assert connect_loads["merged_tags"] == [["q"], ["y"], ["z"]]


@pytest.mark.spark
def test_append_adds_the_second_load_to_the_first_over_spark_connect(
    connect_loads: dict[str, Any],
) -> None:
    assert connect_loads["events"] == [[1], [2], [3]]
    assert connect_loads["dataset"] == [1, 2, 3]
    assert len(connect_loads["mixed_loads"]) == 2


@pytest.mark.spark
def test_replace_keeps_only_the_last_load_in_root_and_nested_tables_over_spark_connect(
    connect_loads: dict[str, Any],
) -> None:
    """The last load's time of day was rewritten as text by the server's Python workers."""
    assert connect_loads["stock"] == [["b", "01:02:03.000004"]]
    assert connect_loads["bins"] == [["z"]]


@pytest.mark.spark
def test_the_connect_servers_in_memory_catalog_is_refused_saying_how_to_start_the_server(
    connect_loads: dict[str, Any],
) -> None:
    error = connect_loads["in_memory_error"]
    assert error is not None and error.startswith("InMemoryCatalog: the Spark Connect server")
    assert "--conf spark.sql.catalogImplementation=hive" in error
