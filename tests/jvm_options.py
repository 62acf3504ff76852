"""Options for the suite's Java processes, so that its Spark applications start in less CPU.

The suite starts about forty short-lived JVMs (the shared local session, each Spark
application a test runs as a child process, the cluster's master, workers, executors and
Connect server). On 2 cores their start-up CPU sets the suite's time, so every one of them
gets (through ``JAVA_TOOL_OPTIONS``, which every JVM the suite starts inherits):

* ``-XX:TieredStopAtLevel=1``: the quick JIT only. loadstone already starts a local driver
  this way (``spark_session.py``); a cluster's executors keep the optimizing JIT for long
  jobs, which a test's few seconds of work never repay. A cluster application measured
  22.5 CPU s with the optimizing JIT on its executors and 14.2 without.
* ``-XX:+UseSerialGC``: one collector thread, no concurrent work, for heaps that stay small
  (the Connect server already measured 40.4 CPU-s with it and 45.8 with G1);
* ``-Dspark.sql.codegen.wholeStage=false`` (a ``spark.*`` system property is a default of
  every ``SparkConf``, drivers and servers alike): the tests' queries read a few rows each,
  and compiling generated code for every plan cost more than running it interpreted. The
  Spark destination's module (three Spark applications, about 20 loads) took 134.1 CPU-s,
  129.8 with the serial collector, 118.2 with both (one run each, 2 cores). Whole-stage
  code generation is an optimization Spark falls back from by itself; results are the same;
* a dynamic class-data-sharing archive (``-XX:SharedArchiveFile``, JDK 13+): Spark's classes
  already parsed and verified, mapped instead of loaded. A small local Spark application
  measured 16.5 s without it and 11.5 s with it; a cluster application 17.5 s and 12.7 s.

The archive is built once per machine by one small Spark job (``jvm_archive_job.py``, about
30 s, most of it the JVM writing 200 MB as it exits) and kept in ``~/.cache/loadstone-tests/``,
named by what it depends on (the Java version and pyspark's install). A machine's first run
builds it in the background while the tests that start no JVM run (the Spark modules are
queued after them, see :data:`PENDING_VARIABLE`), and its JVMs take it once it is there
(``refresh`` before each JVM a test starts); later runs have it from the start.
Everything reaches the JVMs through ``JAVA_TOOL_OPTIONS``.
A JVM that cannot use the archive (another class path, such as ``spark-class``'s launcher)
runs as it would without it; its CDS warning is silenced, and JVM warnings go to stderr so
that no JVM writes to a stdout a test reads. These change how fast the JVMs run, never
what they do.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pyspark

JOB = Path(__file__).with_name("jvm_archive_job.py")
#: JVM log output: warnings to stderr (the default is stdout), none about the archive itself
QUIET_LOGS = "-Xlog:disable -Xlog:all=warning,cds*=error:stderr"
#: the quick JIT only, the serial collector, no whole-stage code generation (module docstring)
TEST_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Dspark.sql.codegen.wholeStage=false"
#: the archive's path, found once and inherited by the pytest workers and every child
ARCHIVE_VARIABLE = "LOADSTONE_TEST_JVM_ARCHIVE"
#: ``JAVA_TOOL_OPTIONS`` as the suite found it, before :func:`refresh` added to it
BASE_VARIABLE = "LOADSTONE_TEST_JAVA_TOOL_OPTIONS"


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "loadstone-tests"


def _plain_env() -> dict[str, str]:
    """This environment without JVM options (a JVM prints them, and the job sets its own)."""
    return {k: v for k, v in os.environ.items() if k != "JAVA_TOOL_OPTIONS"}


def _archive_key() -> str:
    """What the archive depends on: the JVM and the Spark jars it was built from."""
    java = subprocess.run(
        ["java", "-version"], env=_plain_env(), capture_output=True, text=True, check=True
    )
    spark_home = Path(pyspark.__file__).parent
    jars = sorted(p.name for p in (spark_home / "jars").glob("*.jar"))
    text = "\n".join([java.stderr, str(spark_home), pyspark.__version__, *jars])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _build(archive: Path) -> None:
    """Run the job; its driver JVM writes the archive as it exits, after the job's Python."""
    partial = archive.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    done = subprocess.run(
        [sys.executable, str(JOB), str(partial)],
        env=_plain_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        raise RuntimeError(f"building the JVM class archive failed:\n{done.stderr[-3000:]}")
    pid = int(re.findall(r"jvm-pid=(\d+)", done.stdout)[-1])
    deadline = time.monotonic() + 300
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    if not partial.exists():
        raise RuntimeError(f"the JVM class archive job's JVM ({pid}) wrote no {partial}")
    partial.replace(archive)


def _archive_path() -> Path:
    """Where this machine's archive is (or will be); the same in every pytest process."""
    known = os.environ.get(ARCHIVE_VARIABLE)
    if not known:
        known = str(_cache_dir() / f"spark-{_archive_key()}.jsa")
        os.environ[ARCHIVE_VARIABLE] = known
    return Path(known)


#: set (inherited by the xdist workers) while this run builds the archive: the workers then
#: queue the Spark modules after the first half of the others (``conftest.py``), so that their
#: JVMs start once it exists
PENDING_VARIABLE = "LOADSTONE_TEST_JVM_ARCHIVE_PENDING"


def start_archive_build() -> None:
    """Build the archive in the background when it is missing (once: a lock held by the
    builder), while the tests that start no JVM run.

    Built before the first test instead, a fresh machine's run (CI's every run) waited 79 s
    with one core idle (489 s in all); built in the background at a low priority with the
    Spark modules first, their first applications started without it (488 s).
    """
    try:
        archive = _archive_path()
        if archive.exists():
            return
        archive.parent.mkdir(parents=True, exist_ok=True)
        with open(archive.parent / "build.log", "ab") as log:
            subprocess.Popen(
                [sys.executable, __file__, str(archive)],
                env=_plain_env(),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # it outlives a short pytest run and finishes anyway
            )
        os.environ[PENDING_VARIABLE] = "1"
    except (OSError, subprocess.CalledProcessError) as error:
        # no Java (the Spark tests then fail saying so) or no writable cache: no archive
        os.environ[ARCHIVE_VARIABLE] = os.devnull + ".jsa"
        print(f"tests run without the JVM class archive: {error}", file=sys.stderr)


def enable() -> None:
    """Make :func:`refresh` work in this process and its children (pytest's configure does;
    the benchmark, which also starts clusters through ``cluster_support``, never does, so its
    JVMs keep their stock options)."""
    os.environ.setdefault(BASE_VARIABLE, os.environ.get("JAVA_TOOL_OPTIONS", ""))
    refresh()


def refresh() -> None:
    """Set ``JAVA_TOOL_OPTIONS`` for the JVMs started from here on: the quick JIT, and the
    archive once it exists (options found by :func:`enable` stay first). Does nothing
    outside the test suite."""
    base = os.environ.get(BASE_VARIABLE)
    ours = f"-XX:SharedArchiveFile={os.environ.get(ARCHIVE_VARIABLE)}"
    if base is None or ours in os.environ.get("JAVA_TOOL_OPTIONS", ""):
        return  # outside the suite, or already final (this runs before every test)
    archive = _archive_path()
    shared = f"-XX:SharedArchiveFile={archive}" if archive.exists() else ""
    options = " ".join(part for part in (base, TEST_JVM_OPTIONS, shared, QUIET_LOGS) if part)
    os.environ["JAVA_TOOL_OPTIONS"] = options


def _build_once(archive: Path) -> None:
    """The builder holds the lock while it builds; a second one (another pytest run at the
    same time) finds the archive there, or the lock taken, and runs without it."""
    with open(archive.parent / "build.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return  # another process is building it
        if not archive.exists():
            _build(archive)


if __name__ == "__main__":
    _build_once(Path(sys.argv[1]))
