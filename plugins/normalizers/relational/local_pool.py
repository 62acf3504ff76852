"""Every local core without a JVM: a pool of worker processes that run the chunk engine.

A Spark task and a pool worker run the same :func:`~.engine.run_chunk` on the same
:class:`~.task.Chunk` and hand back the same facts, so the driver's settle/decide logic
never knows which of them ran a chunk, and a package normalized by the pool is identical to
one normalized sequentially (the chunk-split property tests cover both).

Why processes, not threads: the engine holds the GIL for everything but Parquet writing.
Why ``fork``: a worker then starts in milliseconds with the engine, orjson and pyarrow
already imported, where ``spawn`` re-imports them (about half a second per worker); workers
only run the engine, never the parent's threads (DuckDB, Spark's gateway), so nothing they
inherit is used. Where ``fork`` does not exist the pool uses ``spawn``.

Memory stays bounded as in the driver: a worker holds the rows of one chunk at a time.

A worker never outlives its driver (:func:`loadstone.parent_watch.exit_with_parent`): a
driver killed mid-package leaves no orphan behind, and a forked worker holds no copy of the
pipeline's lock (the lock closes its descriptor in every forked child).
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import attrs

from loadstone.exceptions import NormalizeError
from loadstone.parent_watch import exit_with_parent
from loadstone.plugins.normalizers.relational.engine import run_chunk
from loadstone.plugins.normalizers.relational.facts import ChunkFacts, Forced
from loadstone.plugins.normalizers.relational.task import Chunk, EngineConfig
from loadstone.plugins.normalizers.relational.worker_memory import keep_between_chunks


@attrs.frozen
class WorkerRun:
    """One chunk's facts and where and how long it ran (for the trace)."""

    facts: ChunkFacts
    pid: int
    cpu_seconds: float
    wall_seconds: float
    #: Unix times the chunk began and ended in the worker (the run report's timeline)
    started_at: float | None = None
    ended_at: float | None = None


def run_in_worker(config: EngineConfig, chunk: Chunk, forced: Forced, attempt: int) -> WorkerRun:
    """:func:`run_chunk` in a worker process, timed there (its CPU is not the driver's)."""
    started_at = time.time()
    cpu, wall = time.process_time(), time.perf_counter()
    facts = run_chunk(config, chunk, forced, attempt)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return WorkerRun(facts, os.getpid(), cpu, wall, started_at, time.time())


def start_worker(driver_pid: int) -> None:
    """A worker's first act: die with its driver, skip pyarrow's pandas probe, and keep the
    memory one chunk frees for the next (:mod:`.worker_memory`)."""
    exit_with_parent(driver_pid)
    skip_pandas_probe()
    keep_between_chunks()


def skip_pandas_probe() -> None:
    """Tell this worker's pyarrow, before its first ``pa.array``, that pandas is absent.

    pyarrow imports pandas on its first ``pa.array`` call, only to check whether the values
    are pandas objects; the engine hands it lists, never pandas objects, and the import
    costs every worker 0.3-0.4 s of CPU per run (more than a 27 MB chunk's parse on a busy
    machine). pyarrow remembers a failed probe for ``pa.array`` but tries again wherever
    pandas is asked for by name (``to_pandas``), so nothing is lost if a worker ever needs it.
    A worker forked from a driver that already imported pandas has it for free: no-op there.
    """
    if "pandas" in sys.modules:
        return
    import pyarrow as pa  # not at the top: loading the plugin must not import pyarrow

    hide = _HidePandas()
    sys.meta_path.insert(0, hide)
    try:
        pa.array([0])
    finally:
        sys.meta_path.remove(hide)


class _HidePandas:
    """An import finder for which pandas does not exist (see :func:`skip_pandas_probe`)."""

    def find_spec(self, name: str, *_args: object) -> None:
        if name == "pandas":
            raise ModuleNotFoundError("pandas hidden from pyarrow's probe", name=name)


def default_workers() -> int:
    """The cores this process may run on (its CPU affinity, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux: no affinity call
        return max(1, os.cpu_count() or 1)


class LocalPool:
    """Worker processes for one normalize call, started on first use, stopped by :meth:`close`.

    Settle rounds re-run chunks through the same pool, so a package pays for starting the
    workers once.
    """

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ValueError(f"a pool needs at least one worker, not {workers}")
        self.workers = workers
        #: whether any chunk ran in a worker (a package of one chunk never starts the pool)
        self.used = False
        self._executor: ProcessPoolExecutor | None = None
        self._frozen = False

    def __enter__(self) -> LocalPool:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _started(self) -> ProcessPoolExecutor:
        self.used = True
        if self._executor is None:
            method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
            if method == "fork":
                # the workers' Parquet writer, imported once for all of them (the plugin
                # does not import it: a driver that writes no Parquet never pays for it)
                import pyarrow.parquet  # noqa: F401  # imported for the workers to inherit

                # the driver's objects go to the collector's permanent generation before the
                # fork, so no worker's collection walks (and copies) the pages it shares
                # with the driver (a late full collection cost a 20k-event run 50 ms)
                gc.freeze()
                self._frozen = True
            self._executor = ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=multiprocessing.get_context(method),
                initializer=start_worker,
                initargs=(os.getpid(),),
            )
        return self._executor

    def run(
        self,
        config: EngineConfig,
        chunks: Sequence[Chunk],
        forced: Mapping[int, Forced],
        attempt: int,
        on_done: Callable[[int], None] | None = None,
        on_facts: Callable[[ChunkFacts], None] | None = None,
    ) -> list[WorkerRun]:
        """Facts of ``chunks`` in chunk order, up to the first malformed line.

        As in a sequential run, the chunks after the first one with a malformed line do not
        count. Tasks are handed out in chunk order, at most two per worker ahead of the
        oldest unfinished one, so a malformed line stops the work about where it is found
        (as in one process) instead of after the whole package. The call returns only once
        every worker has stopped writing (the caller then discards the output).
        ``on_facts`` hears each chunk's facts here, in chunk order, as soon as they are in.
        """
        executor = self._started()
        done = _Counter(on_done)
        todo = iter(chunks)
        running: deque[Future[WorkerRun]] = deque()

        def hand_out() -> None:
            chunk = next(todo, None)
            if chunk is not None:
                future = executor.submit(
                    run_in_worker, config, chunk, forced.get(chunk.index, {}), attempt
                )
                future.add_done_callback(done.finished)
                running.append(future)

        for _ in range(2 * self.workers):
            hand_out()
        facts: list[WorkerRun] = []
        try:
            while running:
                facts.append(running.popleft().result())
                if on_facts is not None:
                    on_facts(facts[-1].facts)
                if facts[-1].facts.is_bad_record:
                    break
                hand_out()
        except BrokenProcessPool as exc:
            self.close()
            raise NormalizeError(
                f"a normalize worker process died while normalizing "
                f"{chunks[len(facts)].display} (killed, or out of memory?); nothing was "
                f"loaded: {exc}"
            ) from exc
        finally:
            for future in running:
                future.cancel()
            self._drain(running)
        return facts

    @staticmethod
    def _drain(futures: Sequence[Future[WorkerRun]]) -> None:
        """Wait for running tasks to end, so none writes after the caller cleans up."""
        for future in futures:
            if not future.cancelled():
                try:
                    future.result()
                except BaseException:  # only waiting here: the caller raises the first error
                    pass

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None
        if self._frozen:  # the driver's objects are collectable again
            gc.unfreeze()
            self._frozen = False


class _Counter:
    """Calls ``on_done`` with the number of finished tasks each time one finishes."""

    def __init__(self, on_done: Callable[[int], None] | None) -> None:
        self.on_done = on_done
        self.count = 0
        self._lock = threading.Lock()

    def finished(self, future: Future[WorkerRun]) -> None:
        if future.cancelled() or self.on_done is None:
            return
        with self._lock:
            self.count += 1
            count = self.count
        self.on_done(count)
