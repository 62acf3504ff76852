"""The normalizer's chunks as Spark tasks, through the DataFrame API only.

One code path serves ``local[*]``, a standalone / YARN / Kubernetes master and Spark Connect:
a DataFrame of chunk numbers (``spark.range`` with one partition per chunk) goes through
``mapInArrow``, whose function runs :func:`.engine.run_chunk` on the executor and returns one
row per chunk: who ran it (executor, host), whether the C engine ran, and the engine's facts
*pickled*, so the driver never needs to know their shape (they are the schema logic's
business). No RDD, no SparkContext: a Connect session has neither.

Attempt safety: every task writes its Parquet under a folder named for its own task attempt
(``normalized/_tasks/<attempt id>/``); Spark returns the rows of exactly one successful
attempt per partition, and the driver keeps the files those facts name and deletes the rest
(:func:`sweep_attempts`). A failed, retried, killed or speculative attempt leaves files that
no fact names, so they are never loaded.

Failures that are not about the data (input missing, storage unwritable, the C engine
required but absent) *raise* in the task with the executor, host and path, so that Spark's
own retry applies and the driver's error names the real cause.
"""

from __future__ import annotations

import os
import pickle
import shutil
import socket
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from loadstone.exceptions import NormalizeError
from loadstone.normalizers.contract import ChunkRun
from loadstone.plugins.normalizers.relational.engine import run_chunk
from loadstone.plugins.normalizers.relational.facts import ChunkFacts, Forced
from loadstone.plugins.normalizers.relational.native import NATIVE_AVAILABLE
from loadstone.plugins.normalizers.relational.task import Chunk, EngineConfig

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import SparkSession
    from pyspark.sql.connect.shell.progress import StageInfo

    from loadstone.storage.package_storage import RemoteData

#: the ``mapInArrow`` function: batches of chunk numbers in, batches of result rows out
TaskFunction = Callable[[Iterator["pa.RecordBatch"]], Iterator["pa.RecordBatch"]]

#: Folder of the task attempts' output inside the package's ``normalized/``.
ATTEMPTS_FOLDER = "_tasks"

#: The row each task returns (the facts are pickled: their type is the engine's).
RESULT_SCHEMA = (
    "chunk long, executor string, host string, native boolean, cpu_seconds double, "
    "wall_seconds double, started_at double, ended_at double, facts binary"
)

#: ``normalize.fault`` (tests only): ``raise:<marker>`` fails, ``kill:<marker>`` kills the
#: Python worker, after the task wrote its files, once per marker file it can claim.
FAULT_KINDS = ("raise", "kill")


class ExecutorTaskError(RuntimeError):
    """Raised inside a Spark task: Spark retries it, and the driver's error shows it."""


@attrs.frozen
class TaskOptions:
    """What a task needs besides the engine's configuration."""

    native_required: bool = False
    fault: str | None = None


@attrs.frozen
class TaskReport:
    """One chunk as a Spark task ran it: where, with which engine, and its facts."""

    chunk: int
    executor: str
    host: str
    native: bool
    cpu_seconds: float
    wall_seconds: float
    #: when the task began and ended (Unix time on the executor): the gaps between tasks
    #: and around the job are Spark's overhead (``bench/benchmark.py --compare-cluster``)
    started_at: float
    ended_at: float
    facts: ChunkFacts

    def chunk_run(self, attempt: int, source: str | None) -> ChunkRun:
        """This run as the normalizer reports it (``NormalizeContext.on_chunk``)."""
        return ChunkRun(
            self.chunk,
            self.executor,
            self.native,
            self.host,
            self.cpu_seconds,
            self.wall_seconds,
            attempt,
            self.started_at,
            self.ended_at,
            source,
        )

    def trace(self) -> dict[str, float | str | bool]:
        return {
            "chunk": self.chunk,
            "executor": self.executor,
            "host": self.host,
            "native": self.native,
            "cpu_seconds": round(self.cpu_seconds, 4),
            "wall_seconds": round(self.wall_seconds, 4),
        }


def executor_id() -> str:
    """This Python worker's Spark executor, as ``host:pid`` of the executor's JVM.

    The Python worker is a child of the executor's JVM (through pyspark's daemon), so the
    JVM's pid tells two executors on one host apart. (Python tasks are not told their
    executor id; the task's ``spark.executor.id`` property is the driver's.)
    """
    return os.environ.get("SPARK_EXECUTOR_ID") or f"{socket.gethostname()}:{_jvm_pid()}"


def _jvm_pid() -> int:
    """The pid of the nearest ancestor process that is a JVM (the executor)."""
    pid = os.getppid()
    for _ in range(4):
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
                fields = handle.read().rsplit(")", 1)
            with open(f"/proc/{pid}/comm", encoding="ascii") as handle:
                name = handle.read().strip()
        except OSError:
            return pid
        if name == "java":
            return pid
        pid = int(fields[1].split()[1])
    return os.getppid()


def _attempt_folder(config: EngineConfig) -> str:
    from pyspark import TaskContext

    context = TaskContext.get()
    attempt = context.taskAttemptId() if context is not None else uuid.uuid4().int % 10**9
    return os.path.join(config.out_dir, ATTEMPTS_FOLDER, f"t{attempt}-{uuid.uuid4().hex[:8]}")


def _check_input(chunk: Chunk, where: str, remote: RemoteData | None) -> None:
    try:
        if remote is not None:
            remote.size(chunk.path)
            return
        with open(chunk.path, "rb") as handle:
            handle.read(1)
    except Exception as exc:  # OSError, or botocore's own for an object store
        path = chunk.path if remote is None else remote.where(chunk.path)
        raise ExecutorTaskError(
            f"loadstone task for chunk {chunk.index} on {where} cannot read its input "
            f"{path}: {type(exc).__name__}: {_one_line(exc)}. The executors must reach the "
            "package storage: set packages.storage_url (and packages.credentials) to "
            "storage every executor shares"
        ) from None


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def fact_files(facts: ChunkFacts) -> list[str]:
    """The output files one chunk's facts name: the only place here that reads the facts.

    Everything else passes them on as they are (their content is the engine's and the
    driver's schema logic's business), so a change of their shape touches this function only.
    """
    return [path for paths in facts.files.values() for path in paths]


def _with_files(facts: ChunkFacts, files: Mapping[str, tuple[str, ...]]) -> ChunkFacts:
    """The facts naming ``files`` instead (the other place that knows their shape)."""
    return attrs.evolve(facts, files=files)


def _publish(
    facts: ChunkFacts, local_dir: str, attempt_dir: str, remote: RemoteData, where: str
) -> ChunkFacts:
    """Upload a task's files from its local folder to its attempt folder on the object
    store; the facts then name them by their package names (see ``RemoteData``)."""
    files: dict[str, tuple[str, ...]] = {}
    for table, paths in facts.files.items():
        named = []
        for path in paths:
            target = os.path.join(attempt_dir, os.path.relpath(path, local_dir))
            try:
                remote.upload(path, target)
            except Exception as exc:
                raise ExecutorTaskError(
                    f"loadstone task on {where} cannot write its output "
                    f"{remote.where(target)}: {_one_line(exc)}"
                ) from None
            named.append(target)
        files[table] = tuple(named)
    return _with_files(facts, files)


def _check_output(facts: ChunkFacts, where: str) -> None:
    """The files the facts name exist here (a write that vanished is a storage failure)."""
    for path in fact_files(facts):
        if not os.path.exists(path):
            raise ExecutorTaskError(f"loadstone task on {where} wrote {path}, now missing")


def _inject_fault(fault: str | None, stage: str) -> None:
    """Test hook: fail or die once per marker file (claimed by an atomic rename).

    ``fault`` is a comma-separated list of ``raise:<marker>`` / ``kill:<marker>``.
    """
    for item in (fault or "").split(","):
        kind, _, marker = item.strip().partition(":")
        if kind not in FAULT_KINDS or not marker:
            continue
        try:
            os.rename(marker, f"{marker}.claimed-{uuid.uuid4().hex}")
        except OSError:
            continue  # claimed by another task already, or not there
        if kind == "raise":
            raise ExecutorTaskError(f"loadstone injected fault ({stage}) from {marker}")
        os.kill(os.getpid(), 9)


def run_task(
    config: EngineConfig,
    chunk: Chunk,
    forced: Forced,
    attempt: int,
    options: TaskOptions,
) -> TaskReport:
    """One chunk in a Spark task: checks that make storage failures Spark failures."""
    started_at = time.time()
    executor = executor_id()
    host = socket.gethostname()
    where = f"executor {executor} (host {host})"
    native = bool(config.native and NATIVE_AVAILABLE)
    if options.native_required and not NATIVE_AVAILABLE:
        raise ExecutorTaskError(
            f"normalize.native = required, but loadstone's C extension is not importable on "
            f"{where}: install loadstone built with a C compiler in the executors' Python"
        )
    _check_input(chunk, where, config.remote)
    attempt_dir = _attempt_folder(config)
    # on an object store the engine writes here first; the files are uploaded whole
    local_dir = tempfile.mkdtemp(prefix="loadstone-task-") if config.remote else attempt_dir
    task_config = attrs.evolve(config, out_dir=local_dir)
    cpu, wall = time.process_time(), time.perf_counter()
    try:
        facts = run_chunk(task_config, chunk, forced, attempt)
        if config.remote is not None:
            facts = _publish(facts, local_dir, attempt_dir, config.remote, where)
    except OSError as exc:
        raise ExecutorTaskError(
            f"loadstone task for chunk {chunk.index} on {where} failed on storage "
            f"({attempt_dir}): {type(exc).__name__}: {_one_line(exc)}"
        ) from None
    finally:
        if config.remote is not None:
            shutil.rmtree(local_dir, ignore_errors=True)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    if config.remote is None:
        _check_output(facts, where)
    _inject_fault(options.fault, f"chunk {chunk.index}")
    return TaskReport(
        chunk.index, executor, host, native, cpu, wall, started_at, time.time(), facts
    )


def task_function(
    config: EngineConfig,
    chunks: Sequence[Chunk],
    forced: Mapping[int, Forced],
    attempt: int,
    options: TaskOptions,
) -> TaskFunction:
    """The ``mapInArrow`` function: chunk numbers in, one result row per chunk out."""
    by_index = {chunk.index: chunk for chunk in chunks}

    def normalize_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa

        for batch in batches:
            rows: dict[str, list[object]] = {name: [] for name in _RESULT_FIELDS}
            for number in batch.column(0).to_pylist():
                chunk = by_index[int(number)]
                report = run_task(config, chunk, forced.get(chunk.index, {}), attempt, options)
                for name in _RESULT_FIELDS:
                    value = getattr(report, name)
                    rows[name].append(pickle.dumps(value, 5) if name == "facts" else value)
            yield pa.RecordBatch.from_pydict(rows, schema=_arrow_result_schema())

    return normalize_batches


_RESULT_FIELDS = (
    "chunk",
    "executor",
    "host",
    "native",
    "cpu_seconds",
    "wall_seconds",
    "started_at",
    "ended_at",
    "facts",
)


def _arrow_result_schema() -> pa.Schema:
    import pyarrow as pa

    return pa.schema(
        [
            ("chunk", pa.int64()),
            ("executor", pa.string()),
            ("host", pa.string()),
            ("native", pa.bool_()),
            ("cpu_seconds", pa.float64()),
            ("wall_seconds", pa.float64()),
            ("started_at", pa.float64()),
            ("ended_at", pa.float64()),
            ("facts", pa.binary()),
        ]
    )


def run_on_spark(
    spark: SparkSession,
    config: EngineConfig,
    chunks: Sequence[Chunk],
    forced: Mapping[int, Forced],
    attempt: int,
    options: TaskOptions,
    on_done: Callable[[int], None] | None = None,
) -> list[TaskReport]:
    """One Spark task per chunk (``chunks`` in any order); reports in chunk order."""
    if not chunks:
        return []
    indexes = sorted(chunk.index for chunk in chunks)
    # one row per partition: ``range`` splits evenly, so each chunk is its own task
    frame = spark.range(0, len(indexes), 1, len(indexes)).selectExpr(
        f"element_at(array({', '.join(str(i) for i in indexes)}), cast(id + 1 as int)) as chunk"
    )
    result = frame.mapInArrow(
        task_function(config, chunks, forced, attempt, options), RESULT_SCHEMA
    )
    tag = f"loadstone-normalize-{uuid.uuid4().hex}"
    with _progress(spark, tag, len(indexes), on_done):
        try:
            rows = result.collect()
        except Exception as exc:
            raise NormalizeError(task_failure_message(exc)) from exc
    reports = [
        TaskReport(
            int(row["chunk"]),
            row["executor"],
            row["host"],
            bool(row["native"]),
            float(row["cpu_seconds"]),
            float(row["wall_seconds"]),
            float(row["started_at"]),
            float(row["ended_at"]),
            pickle.loads(row["facts"]),
        )
        for row in rows
    ]
    if sorted(r.chunk for r in reports) != indexes:
        raise NormalizeError(
            f"Spark returned {len(reports)} chunk results for {len(indexes)} chunks"
        )
    return sorted(reports, key=lambda r: r.chunk)


def task_failure_message(exc: BaseException) -> str:
    """One line for a failed Spark job: the task's own error when it raised one.

    Spark wraps a task's exception in the executor's Python traceback and its own retry
    report; the user needs the line that names the executor and the path.
    """
    text = str(exc)
    marker = f"{ExecutorTaskError.__name__}: "
    found = text.rfind(marker)
    if found >= 0:
        return text[found + len(marker) :].splitlines()[0].strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    last = lines[-1] if lines else type(exc).__name__
    return f"normalizing on Spark failed: {last}"


class _progress:
    """Tag the job and report finished tasks while it runs (progress only: never raises).

    A classic session is read through its status tracker (tasks of the tagged job group); a
    Connect session pushes progress to a registered handler. Results themselves only arrive
    when the job ends.
    """

    def __init__(
        self, spark: SparkSession, tag: str, total: int, on_done: Callable[[int], None] | None
    ) -> None:
        self.spark, self.tag, self.total, self.on_done = spark, tag, total, on_done
        self.stop = threading.Event()
        self.watcher: threading.Thread | None = None
        self.handler: Callable[[Iterable[StageInfo] | None, int, str | None, bool], None] | None = (
            None
        )

    def __enter__(self) -> _progress:
        from loadstone.spark_session import is_remote_session

        self.spark.addTag(self.tag)
        if self.on_done is None:
            return self
        if is_remote_session(self.spark):
            self._connect_handler()
        else:
            self.watcher = threading.Thread(
                target=self._watch_classic, name="loadstone-progress", daemon=True
            )
            self.watcher.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.spark.removeTag(self.tag)
        if self.handler is not None:
            try:
                # a plain function serves as a handler: Spark Connect only calls it
                self.spark.removeProgressHandler(self.handler)  # type: ignore[arg-type]
            except Exception:  # progress only
                pass

    def _connect_handler(self) -> None:
        on_done = self.on_done
        assert on_done is not None

        def handler(
            stages: Iterable[StageInfo] | None,
            inflight_tasks: int,
            operation_id: str | None,
            done: bool,
        ) -> None:
            if stages is None:
                return
            try:
                on_done(sum(int(stage.num_completed_tasks) for stage in stages))
            except Exception:  # progress only
                pass

        register = getattr(self.spark, "registerProgressHandler", None)
        if register is not None:
            register(handler)
            self.handler = handler

    def _watch_classic(self) -> None:
        on_done = self.on_done
        assert on_done is not None
        tracker = self.spark.sparkContext.statusTracker()
        jvm_tracker = self.spark._jsc.sc().statusTracker()  # job tags are only there
        reported = -1
        while not self.stop.wait(0.5):
            try:
                done = 0
                for job in jvm_tracker.getJobIdsForTag(self.tag):
                    info = tracker.getJobInfo(int(job))
                    for stage in info.stageIds if info is not None else ():
                        stage_info = tracker.getStageInfo(stage)
                        if stage_info is not None:
                            done += stage_info.numCompletedTasks
            except Exception:  # the session may be stopping
                return
            if done != reported and not self.stop.is_set():
                reported = done
                on_done(min(done, self.total))


def sweep_attempts(
    out_dir: str, reports_facts: Sequence[ChunkFacts], remote: RemoteData | None = None
) -> None:
    """Delete every task attempt's file that no winning fact names (failed, killed, lost).

    Run by the driver once the facts are final, so only the output of the attempts whose
    facts it kept remains. ``remote``: the attempts' files are objects of that storage.
    """
    keep = {os.path.abspath(path) for facts in reports_facts for path in fact_files(facts)}
    root = Path(out_dir) / ATTEMPTS_FOLDER
    if remote is not None:
        remote.remove([p for p in remote.list_files(root) if os.path.abspath(p) not in keep])
    if not root.exists():
        return
    for path in sorted(root.rglob("*"), reverse=True):
        if path.is_file() and os.path.abspath(path) not in keep:
            path.unlink(missing_ok=True)
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()


def wait_for_executors(spark: SparkSession, wanted: int, timeout: float, target: str) -> int:
    """Block until ``wanted`` executors registered (classic sessions on a cluster).

    Tasks submitted before executors register all land on the first one that does (or wait
    in a queue while the driver looks idle), so a cluster run waits for them, bounded.
    """
    from loadstone.spark_session import is_remote_session

    if is_remote_session(spark):
        return 0  # a Connect server schedules on its own cluster
    deadline = time.monotonic() + timeout
    while True:
        # the block managers Spark knows, the driver's included
        count = int(spark._jsc.sc().getExecutorMemoryStatus().size()) - 1
        if count >= wanted:
            return count
        if time.monotonic() >= deadline:
            raise NormalizeError(
                f"no Spark executors registered with {target} within {timeout:g} s "
                f"({count} of {wanted} wanted): is the cluster up, with free cores, and "
                "can its workers reach this driver? (normalize.executor_wait_seconds)"
            )
        time.sleep(0.25)
