"""A real Spark cluster on loopback for the cluster tests, started once for their module.

* a standalone master and two one-core workers, from pyspark's own ``bin/spark-class``;
  each worker runs in its own mount namespace (``unshare -m``) with a tmpfs over the
  driver's folders (``hidden``), as on a machine that does not share the driver's disk;
* a Spark Connect server (``SparkSubmit --class ...SparkConnectServer``) on ``local[2]``.

The drivers run in subprocesses (``cluster_driver.py``, which runs the command line
in-process too, and Spark Connect clients), since a process holds one classic SparkSession
and the rest of the suite uses a local one.
Missing set-up (Java, ``unshare``, root) is an error saying what to install, never a skip.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs
import jvm_options
import pyspark

SPARK_HOME = Path(pyspark.__file__).parent
SPARK_CLASS = SPARK_HOME / "bin" / "spark-class"
CONNECT_SERVER = "org.apache.spark.sql.connect.service.SparkConnectServer"
CONNECT_SERVICE = "org.apache.spark.sql.connect.service.SparkConnectService"


class ClusterSetupError(RuntimeError):
    """The machine cannot run the cluster tests (says what to install)."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _require_setup() -> None:
    if shutil.which("java") is None:
        raise ClusterSetupError("cluster tests need Java 17+: apt-get install openjdk-17-jre")
    if shutil.which("unshare") is None or shutil.which("nsenter") is None:
        raise ClusterSetupError("cluster tests need unshare/nsenter: apt-get install util-linux")
    if os.geteuid() != 0:
        raise ClusterSetupError("cluster tests hide the driver's disk with unshare -m: run as root")


def _spark_env(base: Path) -> dict[str, str]:
    jvm_options.refresh()
    env = dict(os.environ)
    env.update(
        SPARK_HOME=str(SPARK_HOME),
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_LOCAL_DIRS=str(base / "spark-local"),
        SPARK_LOG_DIR=str(base / "logs"),
        PYSPARK_PYTHON=sys.executable,
    )
    return env


def _started_port(service: str, process: subprocess.Popen[bytes], log: Path, timeout: float) -> int:
    """The port a Spark process's ``service`` bound, read from its own log.

    A port picked free beforehand can be taken by another process before Spark binds it
    (the pytest workers start Spark applications at the same time), and Spark then retries
    the next ports; a connection to the port would succeed against the other process. The
    log line is the process's own word for where it listens.
    """
    found = re.compile(rf"Successfully started service '{re.escape(service)}' on port (\d+)")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        match = found.search(log.read_text(errors="replace")) if log.exists() else None
        if match:
            return int(match.group(1))
        if process.poll() is not None:
            raise ClusterSetupError(f"a Spark process exited early; see {log}")
        time.sleep(0.3)
    raise ClusterSetupError(f"{service} did not start after {timeout:g} s; see {log}")


@attrs.define
class Cluster:
    """The running processes and the folders the tests use."""

    base: Path
    master_url: str
    connect_url: str
    #: folders the workers cannot see (the driver's pipelines folder, flaky storage)
    hidden: tuple[Path, ...]
    shared: Path
    processes: list[subprocess.Popen[bytes]] = attrs.field(factory=list)
    workers: list[subprocess.Popen[bytes]] = attrs.field(factory=list)

    @property
    def pipelines_dir(self) -> Path:
        return self.hidden[0]

    @property
    def flaky(self) -> Path:
        """Storage hidden from the workers until :meth:`reveal` (then it is shared)."""
        return self.hidden[1]

    def reveal(self, folder: Path) -> None:
        """Unmount the tmpfs over ``folder`` in every worker: the storage is fixed."""
        reveal([worker.pid for worker in self.workers], folder)

    def driver_env(self, **config: str) -> dict[str, str]:
        """Environment of a driver subprocess on the standalone master (config as env)."""
        jvm_options.refresh()
        env = dict(os.environ)
        env.update(
            SPARK__MASTER=self.master_url,
            SPARK__DRIVER__HOST="127.0.0.1",
            SPARK__DRIVER__BINDADDRESS="127.0.0.1",
            SPARK__PYSPARK__PYTHON=sys.executable,
            SPARK__EXECUTOR__MEMORY="512m",
            SPARK__CORES__MAX="2",
            NORMALIZE__MIN_EXECUTORS="2",
            NORMALIZE__ENGINE="auto",
            SPARK_LOCAL_IP="127.0.0.1",
            PYTHONPATH=str(Path(__file__).resolve().parent),
        )
        env.update(config)
        env["LOADSTONE_TEST_WORKER_PIDS"] = ",".join(str(w.pid) for w in self.workers)
        return env

    def stop(self) -> None:
        for process in reversed(self.processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def reveal(worker_pids: Sequence[int], folder: Path) -> None:
    """Unmount the tmpfs over ``folder`` in the workers' mount namespaces (a driver process
    can call this too: ``cluster_driver.py``'s ``reveal`` step)."""
    for worker in worker_pids:
        for pid in _descendants(worker):
            subprocess.run(
                ["nsenter", "-t", str(pid), "-m", "umount", str(folder)],
                check=False,
                capture_output=True,
            )


def _descendants(pid: int) -> list[int]:
    found = [pid]
    for child in Path("/proc").iterdir():
        if not child.name.isdigit():
            continue
        try:
            ppid = int((child / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pid:
            found.extend(_descendants(int(child.name)))
    return found


def _spawn(args: Sequence[str], env: Mapping[str, str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "ab") as out:
        return subprocess.Popen(
            list(args), env=dict(env), stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


@attrs.define
class ConnectServer:
    """A Spark Connect server on ``local[2]`` (its executors see this machine's disk)."""

    url: str
    process: subprocess.Popen[bytes]

    def stop(self) -> None:
        Cluster(Path(), "", self.url, (), Path(), [self.process]).stop()


def start_connect_server(base: Path) -> ConnectServer:
    """One Connect server alone: what the Connect tests need, without a master and workers."""
    _require_setup()
    for name in ("logs", "spark-local"):
        (base / name).mkdir(parents=True, exist_ok=True)
    process, bound = _start_connect(base, _spark_env(base), free_port())
    return ConnectServer(f"sc://127.0.0.1:{bound}", process)


def start_cluster(base: Path, connect: bool = True) -> Cluster:
    """Master, two hidden-disk workers and (``connect``) a Connect server; stopped by
    ``Cluster.stop``. The benchmark starts one too (``bench/benchmark.py --start-cluster``)."""
    _require_setup()
    for name in ("logs", "spark-local", "pipelines", "flaky", "shared", "work"):
        (base / name).mkdir(parents=True, exist_ok=True)
    env = _spark_env(base)
    port, connect_port = free_port(), free_port()
    cluster = Cluster(
        base,
        f"spark://127.0.0.1:{port}",
        f"sc://127.0.0.1:{connect_port}",
        (base / "pipelines", base / "flaky"),
        base / "shared",
    )
    try:
        log = base / "logs" / "master.log"
        master = _spawn(
            [
                str(SPARK_CLASS),
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--webui-port",
                str(free_port()),
            ],
            env,
            log,
        )
        cluster.processes.append(master)
        cluster.master_url = f"spark://127.0.0.1:{_started_port('sparkMaster', master, log, 120)}"
        for index in range(2):
            cluster.workers.append(_start_worker(cluster, env, index))
        cluster.processes.extend(cluster.workers)
        if connect:
            connect_process, bound = _start_connect(base, env, connect_port)
            cluster.processes.append(connect_process)
            cluster.connect_url = f"sc://127.0.0.1:{bound}"
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _start_worker(cluster: Cluster, env: Mapping[str, str], index: int) -> subprocess.Popen[bytes]:
    mounts = " && ".join(f"mount -t tmpfs tmpfs {folder}" for folder in cluster.hidden)
    work = cluster.base / "work" / f"w{index}"
    work.mkdir(parents=True, exist_ok=True)
    command = (
        f"{mounts} && exec {SPARK_CLASS} org.apache.spark.deploy.worker.Worker "
        f"--host 127.0.0.1 --cores 1 --memory 1g --webui-port {free_port()} "
        f"--work-dir {work} {cluster.master_url}"
    )
    return _spawn(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", command],
        env,
        cluster.base / "logs" / f"worker{index}.log",
    )


def _start_connect(
    base: Path, env: Mapping[str, str], port: int
) -> tuple[subprocess.Popen[bytes], int]:
    log = base / "logs" / "connect.log"
    process = _spawn(
        [
            str(SPARK_CLASS),
            "org.apache.spark.deploy.SparkSubmit",
            "--master",
            "local[2]",
            "--class",
            CONNECT_SERVER,
            "--conf",
            f"spark.connect.grpc.binding.port={port}",
            "--conf",
            "spark.connect.grpc.port.maxRetries=16",
            "--conf",
            "spark.connect.grpc.binding.address=127.0.0.1",
            "--conf",
            "spark.ui.enabled=false",
            "--conf",
            "spark.sql.session.timeZone=UTC",
            # local[2]: 2 partitions after a shuffle, not Spark's 200 (the loads' MERGEs and
            # read-backs shuffle a few rows)
            "--conf",
            "spark.sql.shuffle.partitions=2",
            # the serial collector: the server's queries (the Spark destination's loads)
            # took 40.4 CPU-s with it and 45.8 with G1 (the default), means of 4 and 7 runs
            # alternated; its work is one short-lived query after another on a small heap
            "--driver-java-options",
            "-XX:+UseSerialGC",
            "--conf",
            f"spark.pyspark.python={sys.executable}",
            "--name",
            "loadstone-connect-test",
            "spark-internal",
        ],
        env,
        log,
    )
    return process, _started_port(CONNECT_SERVICE, process, log, 180)


def write_events(path: Path, count: int, start: int = 0) -> Path:
    """``count`` nested JSON lines with ids ``start ..``, about 300 bytes each."""
    import json

    with open(path, "w", encoding="utf-8") as handle:
        for number in range(start, start + count):
            item = {
                "id": number,
                "name": f"event {number}",
                "payload": {"size": number % 97, "text": "x" * 120},
                "tags": [{"tag": f"t{number % 5}"}, {"tag": "all"}],
            }
            handle.write(json.dumps(item) + "\n")
    return path


def table_rows(cwd: Path, pipeline: str, table: str = "events") -> tuple[int, int]:
    """(rows, distinct ids) of the pipeline's table in its DuckDB file under ``cwd``; (0, 0)
    if there is none (the test reads it, and so does ``cluster_driver.py`` between runs)."""
    import duckdb

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
