"""Loadstone on a real Spark cluster and a Spark Connect server, all on loopback.

The workers cannot see the driver's pipelines folder (a tmpfs over it in their own mount
namespace), as on machines that do not share a disk: packages keep their data files on
``packages.storage_url``, a folder both sides see. Each driver is a subprocess (the CLI, or
``cluster_driver.py`` for the API), configured through the environment only.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest
from cluster_support import Cluster, run_driver, write_events
from s3_support import S3Server, s3_server  # noqa: F401 - the fixture is used by name

from loadstone.storage.filesystem import open_filesystem

pytestmark = pytest.mark.cluster

DRIVER = Path(__file__).with_name("cluster_driver.py")
LOADSTONE = Path(sys.executable).with_name("loadstone")
#: small chunks, so that a small input still makes several tasks
CHUNK_BYTES = "200000"


def _rows(cwd: Path, pipeline: str, table: str = "events") -> tuple[int, int]:
    """(rows, distinct ids) of the pipeline's table in its DuckDB file; (0, 0) if none."""
    path = cwd / f"{pipeline}.duckdb"
    if not path.exists():
        return (0, 0)
    with duckdb.connect(str(path), read_only=True) as db:
        found = db.execute(
            "select count(*) from information_schema.tables "
            f"where table_schema = '{pipeline}_dataset' and table_name = '{table}'"
        ).fetchone()
        if not found or not found[0]:
            return (0, 0)
        row = db.execute(f"select count(*), count(distinct id) from {pipeline}_dataset.{table}")
        count, distinct = row.fetchone()  # type: ignore[misc]
        return int(count), int(distinct)


def _trace(cluster: Cluster, cwd: Path, pipeline: str) -> dict[str, Any]:
    result = run_driver(
        [
            str(LOADSTONE),
            "pipeline",
            pipeline,
            "trace",
            "--json",
            "--pipelines-dir",
            str(cluster.pipelines_dir),
        ],
        cluster.driver_env(),
        cwd,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _check(result: Any) -> None:
    assert result.returncode == 0, f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"


def test_cli_and_api_load_every_row_once_with_tasks_on_both_executors(
    cluster: Cluster, tmp_path: Path
) -> None:
    source = write_events(cluster.shared / "cli-events.jsonl", 4000)
    env = cluster.driver_env(
        PACKAGES__STORAGE_URL=str(cluster.shared / "store"), NORMALIZE__CHUNK_BYTES=CHUNK_BYTES
    )
    args = [str(LOADSTONE), "run", str(source), "-t", "events", "-p", "viacli", "-q"]
    cli = run_driver([*args, "--engine", "spark", "--pipelines-dir", str(cluster.pipelines_dir)],
                     env, tmp_path)  # fmt: skip
    _check(cli)
    assert _rows(tmp_path, "viacli") == (4000, 4000)
    trace = _trace(cluster, tmp_path, "viacli")["normalize"]
    assert trace["engine"] == "spark" and trace["master"] == cluster.master_url
    assert len({chunk["executor"] for chunk in trace["chunks"]}) == 2
    assert all(chunk["native"] for chunk in trace["chunks"])
    assert "driver" not in {chunk["executor"] for chunk in trace["chunks"]}

    api_source = write_events(cluster.shared / "api-events.jsonl", 3000, start=10_000)
    for mode, argument, expected in (("jsonl", str(api_source), 3000), ("dataframe", "5000", 8000)):
        _check(run_driver([sys.executable, str(DRIVER), mode, str(cluster.pipelines_dir),
                           "viaapi", argument], env, tmp_path))  # fmt: skip
        assert _rows(tmp_path, "viaapi") == (expected, expected)
    chunks = _trace(cluster, tmp_path, "viaapi")["normalize"]["chunks"]
    assert len({chunk["executor"] for chunk in chunks}) == 2


def test_storage_the_executors_cannot_see_fails_clearly_and_loads_once_fixed(
    cluster: Cluster, tmp_path: Path
) -> None:
    source = write_events(cluster.shared / "hidden-events.jsonl", 2000)
    store = cluster.flaky / "store"
    env = cluster.driver_env(
        PACKAGES__STORAGE_URL=str(store),
        NORMALIZE__CHUNK_BYTES=CHUNK_BYTES,
        SPARK__TASK__MAXFAILURES="2",
    )
    args = [str(LOADSTONE), "run", str(source), "-t", "events", "-p", "hidden", "-q"]
    args += ["--pipelines-dir", str(cluster.pipelines_dir)]
    failed = run_driver(args, env, tmp_path)
    assert failed.returncode != 0
    error = failed.stderr.strip().splitlines()[-1]
    assert error.startswith("error: ")
    assert "cannot read its input" in error and str(store) in error and "executor" in error
    assert _rows(tmp_path, "hidden") == (0, 0)
    frame = run_driver([sys.executable, str(DRIVER), "dataframe", str(cluster.pipelines_dir),
                        "hiddendf", "3000"], env, tmp_path)  # fmt: skip
    assert frame.returncode == 1
    assert "has 3000 rows but 0 reached" in frame.stderr and str(store) in frame.stderr
    assert _rows(tmp_path, "hiddendf") == (0, 0)

    cluster.reveal(cluster.flaky)  # the storage is fixed: the workers see it now
    resumed = run_driver([sys.executable, str(DRIVER), "resume", str(cluster.pipelines_dir),
                          "hidden"], env, tmp_path)  # fmt: skip
    _check(resumed)
    assert _rows(tmp_path, "hidden") == (2000, 2000)


def test_packages_on_s3_load_every_row_once_with_tasks_on_both_executors(
    cluster: Cluster,
    s3_server: S3Server,  # noqa: F811 - the fixture imported above
    tmp_path: Path,
) -> None:
    bucket = s3_server.new_bucket()
    fs, _ = open_filesystem(f"s3://{bucket}", s3_server.credentials)
    fs.put_file(str(write_events(tmp_path / "in.jsonl", 3000)), f"{bucket}/inbox/events.jsonl")
    env = cluster.driver_env(
        PACKAGES__STORAGE_URL=f"s3://{bucket}/packages",
        NORMALIZE__CHUNK_BYTES=CHUNK_BYTES,
        **{f"PACKAGES__CREDENTIALS__{k.upper()}": v for k, v in s3_server.credentials.items()},
    )
    source = f"s3://{bucket}/inbox/events.jsonl"  # read where it is, by the executors
    args = [str(LOADSTONE), "run", source, "-t", "events", "-p", "ons3", "-q", "--engine", "spark"]
    _check(run_driver([*args, "--pipelines-dir", str(cluster.pipelines_dir)], env, tmp_path))
    assert _rows(tmp_path, "ons3") == (3000, 3000)
    chunks = _trace(cluster, tmp_path, "ons3")["normalize"]["chunks"]
    assert len({chunk["executor"] for chunk in chunks}) == 2
    assert "driver" not in {chunk["executor"] for chunk in chunks}
    assert not fs.find(f"{bucket}/packages")  # loaded packages leave no data behind
    # DataFrame input onto s3 (executors write it, mapInArrow): test_package_storage.py


def test_a_failed_task_and_a_killed_python_worker_leave_no_duplicate_rows(
    cluster: Cluster, tmp_path: Path
) -> None:
    source = write_events(cluster.shared / "fault-events.jsonl", 3000)
    raise_marker, kill_marker = cluster.shared / "fault-raise", cluster.shared / "fault-kill"
    raise_marker.touch()
    kill_marker.touch()
    env = cluster.driver_env(
        PACKAGES__STORAGE_URL=str(cluster.shared / "store"),
        NORMALIZE__CHUNK_BYTES=CHUNK_BYTES,
        NORMALIZE__FAULT=f"raise:{raise_marker},kill:{kill_marker}",
    )
    result = run_driver([sys.executable, str(DRIVER), "jsonl", str(cluster.pipelines_dir),
                         "faults", str(source)], env, tmp_path)  # fmt: skip
    _check(result)
    assert not raise_marker.exists() and not kill_marker.exists()  # both faults happened
    assert _rows(tmp_path, "faults") == (3000, 3000)
    with duckdb.connect(str(tmp_path / "faults.duckdb"), read_only=True) as db:
        tags = db.execute("select count(*) from faults_dataset.events__tags").fetchone()
    assert tags == (6000,)


def test_spark_connect_normalizes_jsonl_and_dataframe_input(
    cluster: Cluster, tmp_path: Path
) -> None:
    source = write_events(cluster.shared / "connect-events.jsonl", 3000, start=10_000)
    env = cluster.driver_env(SPARK__REMOTE=cluster.connect_url, NORMALIZE__CHUNK_BYTES=CHUNK_BYTES)
    del env["SPARK__MASTER"]
    for mode, argument, expected in (("jsonl", str(source), 3000), ("dataframe", "4000", 7000)):
        _check(run_driver([sys.executable, str(DRIVER), mode, str(cluster.pipelines_dir),
                           "connect", argument], env, tmp_path))  # fmt: skip
        assert _rows(tmp_path, "connect") == (expected, expected)
        trace = _trace(cluster, tmp_path, "connect")["normalize"]
        assert trace["engine"] == "spark" and trace["remote"] == cluster.connect_url
        assert trace["master"] is None and len(trace["chunks"]) > 1
