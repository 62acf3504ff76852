"""Where chunks run: in this process, on the local worker processes, or as Spark tasks.

``normalize.engine`` decides (see :meth:`ChunkDispatch.run`); wherever a chunk runs, the
same :func:`~.engine.run_chunk` gives the same facts, so the driver's settle logic never
knows. Each run is reported (``NormalizeContext.on_chunk``) with where and how long it ran,
and progress counts chunks finished anywhere.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import attrs

from loadstone import config as loadstone_config
from loadstone import spark_session
from loadstone.exceptions import NormalizeError
from loadstone.normalizers.contract import ChunkRun, EngineChoice, NormalizeContext
from loadstone.plugins.normalizers.relational import spark_tasks
from loadstone.plugins.normalizers.relational.chunk_plan import chunk_size
from loadstone.plugins.normalizers.relational.engine import run_chunk
from loadstone.plugins.normalizers.relational.facts import ChunkFacts, Forced
from loadstone.plugins.normalizers.relational.local_pool import LocalPool
from loadstone.plugins.normalizers.relational.settings import (
    engine_setting,
    executor_wait_seconds,
    min_executors,
    native_ran,
    native_setting,
    spark_min_bytes,
)
from loadstone.plugins.normalizers.relational.task import Chunk, EngineConfig

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from loadstone.spark_session import SparkTarget


@attrs.frozen
class DispatchOptions:
    """The normalizer's own choices about where chunks run."""

    #: a lone chunk runs in this process even when a Spark session is at hand
    inline_single_chunk: bool = True
    #: on a local master, a session not started yet starts only for inputs this large
    lazy_spark_bytes: int = 0


def announce(context: NormalizeContext, engine: str, target: SparkTarget | None) -> None:
    """Tell the caller where the chunks run (``NormalizeContext.on_engine``)."""
    if context.on_engine is not None:
        master = None if target is None else target.master
        remote = None if target is None else target.remote
        context.on_engine(EngineChoice(engine, master, remote))


@attrs.define
class ChunkDispatch:
    """Runs chunks here, on the local worker processes or on Spark, counting progress.

    One per batch of chunks: ``done`` counts the chunks finished so far wherever they ran,
    so progress reports stay in order when Spark takes over.
    """

    pool: LocalPool
    options: DispatchOptions
    context: NormalizeContext
    config: EngineConfig
    forced: Mapping[int, Forced]
    attempt: int
    total: int
    done: int = 0
    #: hears each chunk's facts in chunk order as they come in, where chunks run here or on
    #: the local workers (:mod:`.finished_chunks`: the files a load may take early)
    on_facts: Callable[[ChunkFacts], None] | None = None

    def run(self, chunks: list[Chunk]) -> list[ChunkFacts]:
        """Facts of every chunk, in chunk order, computed where ``normalize.engine`` says.

        * ``local``, or no Spark: in this process;
        * ``spark``: every chunk as a Spark task, once executors registered;
        * ``auto``: a session handed in runs all chunks but a lone one; a configured
          cluster or Connect remote runs them all; on a local master, a lazy session (a
          callable) starts only when the input is worth a JVM (``lazy_spark_bytes``),
          in the background, while this process starts on the chunks, and takes over the
          chunks not yet begun. Small packages never pay for a JVM start.
        """
        engine = engine_setting()
        if not chunks:
            return []
        spark = self.context.spark
        lone = len(chunks) == 1 and self.options.inline_single_chunk
        if engine == "spark" and spark is None:
            raise NormalizeError("normalize.engine = spark, but no Spark session was given")
        if engine == "local" or spark is None:
            return self.on_every_core(chunks)
        if engine == "spark":
            return self.on_spark(spark() if callable(spark) else spark, chunks)
        if not callable(spark):
            return self.in_order(chunks) if lone else self.on_spark(spark, chunks)
        if not spark_session.configured_target().is_local:
            return self.on_spark(spark(), chunks)
        if lone:
            return self.in_order(chunks)
        min_bytes = spark_min_bytes(self.options.lazy_spark_bytes)
        if sum(chunk_size(c, self.config.remote) for c in chunks) < min_bytes:
            return self.on_every_core(chunks)
        return self.overlapped(spark, chunks)

    def overlapped(
        self, start_session: Callable[[], SparkSession], chunks: list[Chunk]
    ) -> list[ChunkFacts]:
        """Chunks here while a local session starts; Spark takes the rest once it is up."""
        started: list[SparkSession] = []
        failed: list[BaseException] = []

        def start() -> None:
            try:
                started.append(start_session())
            except BaseException as exc:  # reported in the driver thread below
                failed.append(exc)

        thread = threading.Thread(target=start, name="loadstone-spark-start", daemon=True)
        thread.start()
        results: dict[int, ChunkFacts] = {}
        remaining = list(chunks)
        while remaining and thread.is_alive():
            chunk = remaining.pop(0)
            results[chunk.index] = self.local(chunk)
            if results[chunk.index].is_bad_record:
                return list(results.values())  # the first bad line: no need for Spark
        if remaining:
            thread.join()
            if failed:
                raise failed[0]
            for fact in self.on_spark(started[0], remaining):
                results[fact.chunk] = fact
        return [results[c.index] for c in chunks]

    def report(self, done: int) -> None:
        if self.context.progress is not None:
            self.context.progress(min(done, self.total), self.total)

    def report_more(self, finished_elsewhere: int) -> None:
        """Progress of a batch running elsewhere: ``finished_elsewhere`` on top of ``done``."""
        self.report(self.done + finished_elsewhere)

    def local(self, chunk: Chunk) -> ChunkFacts:
        """One chunk in this process, timed and reported."""
        started_at = time.time()
        cpu, wall = time.process_time(), time.perf_counter()
        fact = run_chunk(self.config, chunk, self.forced.get(chunk.index, {}), self.attempt)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        self.done += 1
        self.report(self.done)
        if self.context.on_chunk is not None:
            native = native_ran(self.config)
            run = ChunkRun(
                chunk.index,
                "driver",
                native,
                None,
                cpu,
                wall,
                self.attempt,
                started_at,
                started_at + wall,
                chunk.display,
            )
            self.context.on_chunk(run)
        return fact

    def on_spark(self, spark: SparkSession, todo: list[Chunk]) -> list[ChunkFacts]:
        """One Spark task per chunk (:mod:`.spark_tasks`); only the facts come back."""
        target = spark_session.session_target(spark)
        announce(self.context, "spark", target)
        if not target.is_local and target.remote is None:
            spark_tasks.wait_for_executors(
                spark, min_executors(), executor_wait_seconds(), target.url
            )
        options = spark_tasks.TaskOptions(
            native_required=native_setting() == "required",
            fault=_fault_setting(),
        )
        reports = spark_tasks.run_on_spark(
            spark, self.config, todo, self.forced, self.attempt, options, self.report_more
        )
        if self.context.on_chunk is not None:
            inputs = {chunk.index: chunk.display for chunk in todo}
            for task in reports:
                self.context.on_chunk(task.chunk_run(self.attempt, inputs.get(task.chunk)))
        return [task.facts for task in reports]

    def on_every_core(self, todo: list[Chunk]) -> list[ChunkFacts]:
        """``in_order``'s result, from the local worker processes when there are several."""
        pool = self.pool
        if pool.workers < 2 or len(todo) < 2:
            return self.in_order(todo)
        announce(self.context, "local", None)
        runs = pool.run(
            self.config, todo, self.forced, self.attempt, self.report_more, self.on_facts
        )
        self.done += len(runs)
        if self.context.on_chunk is not None:
            for chunk, run in zip(todo, runs, strict=False):
                self.context.on_chunk(
                    ChunkRun(
                        chunk.index,
                        f"local worker {run.pid}",
                        native_ran(self.config),
                        None,
                        run.cpu_seconds,
                        run.wall_seconds,
                        self.attempt,
                        run.started_at,
                        run.ended_at,
                        chunk.display,
                    )
                )
        return [run.facts for run in runs]

    def in_order(self, todo: list[Chunk]) -> list[ChunkFacts]:
        """Chunks one after another here, stopping at the first malformed line.

        Every chunk before it has passed, so it is the package's first bad line: report
        it now rather than after normalizing the rest (a contract failure may still be
        undone by a re-run with the global types, so those chunks go on).
        """
        announce(self.context, "local", None)
        facts: list[ChunkFacts] = []
        for chunk in todo:
            fact = self.local(chunk)
            facts.append(fact)
            if self.on_facts is not None:
                self.on_facts(fact)
            if fact.is_bad_record:
                break
        return facts


def _fault_setting() -> str | None:
    """``normalize.fault`` (tests only): faults injected into Spark tasks."""
    value = loadstone_config.resolve("normalize.fault", default=None)
    return None if value is None else str(value)
