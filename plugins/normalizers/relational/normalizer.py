"""The relational normalizer on Spark: plan chunks, run them, merge schema facts, re-run guesses.

Flow of :meth:`RelationalNormalizer.normalize`:

1. split the package's extracted files into chunks (byte ranges aligned to newlines; a
   ``.gz`` file is one chunk);
2. run every chunk in this process or as one Spark task (``normalize.engine``; the Spark
   side, DataFrame API only, is :mod:`.spark_tasks`); each task normalizes its lines with
   :mod:`.engine` and writes its own Parquet files straight into the package's storage; only
   *schema facts* travel back to the driver (first positions and types of new columns,
   tables, row counts, bad lines), never rows;
3. decide every new column's type from its globally first value, re-run only the tasks whose
   local guess differed (their earlier files are deleted), then build the evolved schema with
   columns in order of first appearance, exactly as a sequential run would.

A single chunk runs in the driver process: there is nothing to parallelize and a Python
worker start costs more than the work.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from loadstone import config as loadstone_config
from loadstone import spark_session
from loadstone.exceptions import (
    BadRecordError,
    CannotCoerceNullException,
    ContractViolation,
    NormalizeError,
)
from loadstone.extract.arrow_items import is_arrow_file
from loadstone.normalize.contract import (
    BAD_RECORDS_TABLE,
    ChunkRun,
    EngineChoice,
    ExtractedInput,
    NormalizeContext,
    NormalizeResult,
    PackageToNormalize,
    TableOutput,
)
from loadstone.plugins.normalizers.relational import spark_tasks
from loadstone.plugins.normalizers.relational.arrow_tables import (
    arrow_settings,
    normalize_arrow,
    with_arrow_outcome,
)
from loadstone.plugins.normalizers.relational.engine import (
    NATIVE_AVAILABLE,
    Chunk,
    EngineConfig,
    run_chunk,
)
from loadstone.plugins.normalizers.relational.facts import (
    ChunkFacts,
    Decisions,
    Forced,
    decide,
    forced_types,
    misguessed,
)
from loadstone.plugins.normalizers.relational.folders import safe_folder
from loadstone.plugins.normalizers.relational.local_pool import LocalPool, default_workers
from loadstone.plugins.normalizers.relational.schema_updates import (
    RootPlan,
    TableSummary,
    add_bad_records_table,
    apply_facts,
    check_collisions,
    known_types,
    plan_root,
    with_materialized,
)
from loadstone.schema import Schema
from loadstone.schema.detections import DEFAULT_DETECTIONS
from loadstone.schema.settings import compile_preferred

#: Plain files larger than this are split into chunks of about this size.
DEFAULT_CHUNK_BYTES = 32 * 1024 * 1024

#: On a local master, with a session not started yet, inputs smaller than this run on the
#: local worker processes. Spark's local Python workers run the same engine on the same
#: cores, plus a JVM, so on one machine Spark never wins: measured on 2 cores, end to end,
#: 1.35 GB of GitHub events took 17.7 s on the pool and 30.6 s through Spark (normalize 11.0
#: vs 22.8 s; a chunk costs 0.50 s of CPU either way); with the line scan in C, 27.1 CPU s
#: on the pool against 39.8 through Spark (0.42 vs 0.43 s a chunk). Hence 1 TiB: on a local master the
#: pool does it all unless this is set lower; a cluster or Connect remote always uses Spark.
DEFAULT_LAZY_SPARK_BYTES = 1024**4


def _native_setting() -> str:
    """``normalize.native``: ``true`` (default), ``false`` or ``required``.

    True runs the engine's C hot path where it is built (the Python loops elsewhere); false
    runs the pure-Python reference loops, e.g. to rule the C path out when chasing a
    difference (the output is the same either way); ``required`` fails the run where the C
    extension is missing (on the driver, or in any Spark task) instead of running slowly.
    """
    found = loadstone_config.locate("normalize.native", default=True)
    if str(found.value).strip().lower() == "required":
        return "required"
    native = loadstone_config.parse_bool(found.value, "normalize.native", found.origin)
    return "true" if native else "false"


def _native_enabled() -> bool:
    setting = _native_setting()
    if setting == "required" and not NATIVE_AVAILABLE:
        raise NormalizeError(
            "normalize.native = required, but loadstone's C extension is not importable in "
            "the driver: reinstall loadstone with a C compiler present"
        )
    return setting != "false"


def _native_ran(config: EngineConfig) -> bool:
    return bool(config.native and NATIVE_AVAILABLE)


#: ``normalize.engine`` values: where chunks run.
ENGINES = ("auto", "local", "spark")


def _configured_workers() -> int:
    """``normalize.workers``: local worker processes (default: the cores this process may use)."""
    return loadstone_config.get_int("normalize.workers", default_workers(), minimum=1)


def _engine_setting() -> str:
    """``normalize.engine`` (env ``NORMALIZE__ENGINE``, CLI ``--engine``), default auto."""
    value = loadstone_config.get_str("normalize.engine", "auto").strip().lower()
    if value not in ENGINES:
        raise NormalizeError(f"normalize.engine must be one of {', '.join(ENGINES)}, not {value!r}")
    return value


def _announce(context: NormalizeContext, engine: str, target: Any) -> None:
    if context.on_engine is not None:
        master = None if target is None else target.master
        remote = None if target is None else target.remote
        context.on_engine(EngineChoice(engine, master, remote))


def _first_line(message: str) -> str:
    """An error's one-line cause (a disk full while writing Parquet says so in plain words)."""
    if "No space left on device" in message:
        return "no space left on the device (disk full) while writing normalized files"
    lines = message.strip().splitlines()
    return lines[0] if lines else message


def balanced_chunk_bytes(size: int, chunk_bytes: int, workers: int) -> int:
    """At most ``chunk_bytes`` per chunk, in a number of chunks that ``workers`` divides.

    Chunks are handed out in order and cost about the same per byte, so with a multiple of
    the workers they all finish together: 269 MB in 32 MiB chunks is 8 full chunks and a
    small one, which leaves one core idle for most of a chunk at the end; 10 chunks of
    27 MB do not. A file that fits one chunk stays one chunk.
    """
    if size <= chunk_bytes or workers < 2:
        return chunk_bytes
    count = -(-size // chunk_bytes)
    count = -(-count // workers) * workers
    return -(-size // count)


def plan_chunks(
    files: Sequence[ExtractedInput], chunk_bytes: int, workers: int = 1, remote: Any = None
) -> list[Chunk]:
    """Chunks of the extracted files, in source order (file, then byte offset).

    A file larger than ``chunk_bytes`` is split evenly for ``workers`` (see
    :func:`balanced_chunk_bytes`): the local worker processes, or on a cluster the
    executors loadstone waits for (:func:`_cluster_slots`).
    ``remote`` (``package_storage.RemoteData``): the files are objects of that storage.
    """
    chunks: list[Chunk] = []
    opener: Any = open if remote is None else (lambda path, mode: remote.open_read(path))
    for file_index, extracted in enumerate(files):
        path = str(extracted.path)
        display = extracted.source or path
        first_line = extracted.first_line
        size = _file_size(path, remote)
        step = balanced_chunk_bytes(size, chunk_bytes, workers)
        if path.endswith(".gz") or size <= chunk_bytes:
            chunks.append(
                Chunk(
                    len(chunks), file_index, path, extracted.table_name, 0, -1, display, first_line
                )
            )
            continue
        start = 0
        with opener(path, "rb") as handle:
            while start < size:
                target = start + step
                if target >= size:
                    end = size
                else:
                    handle.seek(target)
                    handle.readline()
                    end = min(handle.tell(), size)
                chunks.append(
                    Chunk(
                        len(chunks),
                        file_index,
                        path,
                        extracted.table_name,
                        start,
                        end,
                        display,
                        first_line,
                    )
                )
                start = end
    return chunks


def _cluster_slots() -> int:
    """Tasks a configured cluster runs at once, as far as loadstone knows: the executors
    it waits for (``normalize.min_executors``); 1 on a local master or with ``local``."""
    if _engine_setting() == "local" or spark_session.configured_target().is_local:
        return 1
    return max(1, _min_executors())


def _min_executors() -> int:
    """``normalize.min_executors``: executors to wait for on a cluster (default 1)."""
    return loadstone_config.get_int("normalize.min_executors", 1, minimum=0)


def _file_size(path: str, remote: Any = None) -> int:
    try:
        return os.path.getsize(path) if remote is None else int(remote.size(path))
    except OSError:
        raise
    except Exception as exc:  # botocore / aiohttp: the storage, named
        raise OSError(remote.storage_error("read", path, exc)) from exc


def _chunk_size(chunk: Chunk, remote: Any = None) -> int:
    if chunk.end >= 0:
        return chunk.end - chunk.start
    size = _file_size(chunk.path, remote)
    return size * 5 if chunk.path.endswith(".gz") else size


def chunk_first_lines(chunks: Sequence[Chunk]) -> dict[int, int]:
    """Absolute line number of each chunk's first line (only computed when needed)."""
    result: dict[int, int] = {}
    by_file: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        by_file.setdefault(chunk.path, []).append(chunk)
    for path, parts in by_file.items():
        line = parts[0].first_line
        if len(parts) == 1:
            result[parts[0].index] = line
            continue
        with open(path, "rb") as handle:
            for chunk in parts:
                result[chunk.index] = line
                if chunk.end < 0:
                    break
                handle.seek(chunk.start)
                line += handle.read(chunk.end - chunk.start).count(b"\n")
    return result


def _working_schema(schema: Schema | Mapping[str, Any] | None) -> Schema:
    """The schema this package evolves: a copy, so a failed package changes nothing.

    A stored dict (tests, third-party callers) is read with a new schema's defaults for the
    settings it leaves out (``iso_timestamp`` detection); the result is then a dict again.
    """
    if isinstance(schema, Schema):
        return schema.copy()
    data = dict(schema or {})
    settings = dict(data.get("settings") or {})
    settings.setdefault("detections", list(DEFAULT_DETECTIONS))
    data["settings"] = settings
    data.setdefault("name", "normalized")
    return Schema.from_dict(data, bump_version=False)


class RelationalNormalizer:
    """dlt's relational normalization, run as Spark tasks that write Parquet directly."""

    def __init__(
        self,
        chunk_bytes: int = DEFAULT_CHUNK_BYTES,
        flush_rows: int = 20000,
        inline_single_chunk: bool = True,
        lazy_spark_bytes: int = DEFAULT_LAZY_SPARK_BYTES,
        native: bool | None = None,
        workers: int | None = None,
    ) -> None:
        self.chunk_bytes = chunk_bytes
        #: local worker processes for chunks not sent to Spark: None follows
        #: ``normalize.workers`` (default: the cores this process may use)
        self.workers = workers
        self._pool = LocalPool(1)
        #: the engine's C hot path: None follows ``normalize.native`` (default on)
        self.native = native
        self.lazy_spark_bytes = lazy_spark_bytes
        self.flush_rows = flush_rows
        self.inline_single_chunk = inline_single_chunk
        #: figures of the last run: chunks planned and chunks re-run (for tests and benchmarks)
        self.last_stats: dict[str, int] = {}

    # -- public -----------------------------------------------------------------------------
    def check_settings(self) -> None:
        """Parse every setting this normalizer reads; the pipeline calls it before a run does
        any work, so a bad value fails in one line before anything is extracted (issue 22)."""
        _engine_setting()
        _native_setting()
        _configured_workers()
        self._spark_min_bytes()
        _min_executors()
        arrow_settings()

    def _spark_min_bytes(self) -> int:
        """``normalize.spark_min_bytes``: below it a local session is not worth starting."""
        return loadstone_config.get_size("normalize.spark_min_bytes", self.lazy_spark_bytes)

    def normalize(
        self,
        package: PackageToNormalize,
        schema: Schema | Mapping[str, Any] | None,
        context: NormalizeContext,
    ) -> NormalizeResult:
        working = _working_schema(schema)
        out_dir = Path(package.normalized_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        # one pool per call: settle rounds re-run chunks through the workers already started
        self._pool = LocalPool(self.workers or _configured_workers())
        try:
            result = self._normalize(package, working, context, out_dir)
            if context.storage is not None:  # what this process wrote joins the tasks' output
                context.storage.publish_tree(out_dir)
        except BaseException:
            for child in out_dir.iterdir():
                if child.is_dir():
                    shutil.rmtree(child, ignore_errors=True)
                else:
                    child.unlink(missing_ok=True)
            if context.storage is not None:
                with contextlib.suppress(Exception):  # the error being raised says more
                    context.storage.remove_tree(out_dir)
            raise
        finally:
            self._pool.close()
        if isinstance(schema, Schema):
            return result
        return attrs.evolve(result, schema=dict(working.to_dict(bump_version=False)))

    # -- steps ------------------------------------------------------------------------------
    def _normalize(
        self, package: PackageToNormalize, schema: Schema, context: NormalizeContext, out_dir: Path
    ) -> NormalizeResult:
        """Plan roots from code hints, run the chunks, settle types, apply the facts."""
        hints_source = package.table_hints
        hints_by_source: Mapping[str, Any] = (
            hints_source() if callable(hints_source) else (hints_source or {})
        )
        every_file = list(package.extracted_files())
        arrow_files = [f for f in every_file if is_arrow_file(f.path)]
        files = [f for f in every_file if not is_arrow_file(f.path)]
        existing_before = frozenset(schema.tables)
        # a table asked for with materialize_table_schema() exists even without data
        materialize = [n for n, h in hints_by_source.items() if (h or {}).get("x-materialize")]
        sources = dict.fromkeys([*(f.table_name for f in every_file), *materialize])
        plans = {
            source: plan_root(schema, source, hints_by_source.get(source) or {}, context.naming)
            for source in sources
        }
        config = EngineConfig(
            naming=context.naming,
            load_id=str(package.load_id),
            out_dir=str(out_dir),
            specs={source: plan.spec for source, plan in plans.items()},
            known=known_types(schema, list(plans.values())),
            existing_tables=existing_before,
            detections=schema.settings.detections,
            preferred=compile_preferred(schema.settings.preferred_types),
            use_break_path=schema.use_break_path_on_normalize,
            on_bad_record=context.on_bad_record,
            flush_rows=self.flush_rows,
            native=_native_enabled() if self.native is None else self.native,
            remote=context.storage,
        )
        slots = _cluster_slots()
        workers = slots if slots > 1 else self._pool.workers
        chunks = plan_chunks(files, self.chunk_bytes, workers, context.storage)
        facts = self._run(context, config, chunks, {c.index: {} for c in chunks}, 0)
        facts, reruns = self._settle(context, config, chunks, facts)
        spark_tasks.sweep_attempts(config.out_dir, facts, context.storage)
        self._raise_failures(facts, chunks)
        self.last_stats = {
            "chunks": len(chunks),
            "reruns": reruns,
            "workers": self._pool.workers if self._pool.used else 1,
        }
        result = self._finish(schema, context, facts, chunks, plans, out_dir)
        if not arrow_files:
            return result
        arrow = normalize_arrow(schema, arrow_files, plans, context, str(package.load_id), out_dir)
        return with_arrow_outcome(result, arrow)

    def _run(
        self,
        context: NormalizeContext,
        config: EngineConfig,
        chunks: list[Chunk],
        forced: Mapping[int, Forced],
        attempt: int,
    ) -> list[ChunkFacts]:
        """Facts of every chunk, in chunk order, computed where ``normalize.engine`` says.

        * ``local``, or no Spark: in this process;
        * ``spark``: every chunk as a Spark task, once executors registered;
        * ``auto``: a session handed in runs all chunks but a lone one; a configured
          cluster or Connect remote runs them all; on a local master, a lazy session (a
          callable) starts only when the input is worth a JVM (``lazy_spark_bytes``),
          in the background, while this process starts on the chunks, and takes over the
          chunks not yet begun. Small packages never pay for a JVM start.
        """
        engine = _engine_setting()
        run = _ChunkDispatch(self, context, config, forced, attempt, len(chunks))
        in_order, on_every_core, on_spark = run.in_order, run.on_every_core, run.on_spark
        if not chunks:
            return []
        spark = context.spark
        if engine == "spark" and spark is None:
            raise NormalizeError("normalize.engine = spark, but no Spark session was given")
        if engine == "local" or spark is None:
            return on_every_core(chunks)
        if engine == "spark":
            return on_spark(spark() if callable(spark) else spark, chunks)
        if not callable(spark):
            if len(chunks) == 1 and self.inline_single_chunk:
                return in_order(chunks)
            return on_spark(spark, chunks)
        if not spark_session.configured_target().is_local:
            return on_spark(spark(), chunks)
        if len(chunks) == 1 and self.inline_single_chunk:
            return in_order(chunks)
        min_bytes = self._spark_min_bytes()
        if sum(_chunk_size(c, config.remote) for c in chunks) < min_bytes:
            return on_every_core(chunks)
        return self._overlapped(spark, chunks, run.local, on_spark)

    @staticmethod
    def _overlapped(
        start_session: Callable[[], Any],
        chunks: list[Chunk],
        local: Callable[[Chunk], ChunkFacts],
        on_spark: Callable[[Any, list[Chunk]], list[ChunkFacts]],
    ) -> list[ChunkFacts]:
        """Chunks here while a local session starts; Spark takes the rest once it is up."""
        started: dict[str, Any] = {}

        def start() -> None:
            try:
                started["session"] = start_session()
            except BaseException as exc:  # reported in the driver thread below
                started["error"] = exc

        thread = threading.Thread(target=start, name="loadstone-spark-start", daemon=True)
        thread.start()
        results: dict[int, ChunkFacts] = {}
        remaining = list(chunks)
        while remaining and thread.is_alive():
            chunk = remaining.pop(0)
            results[chunk.index] = local(chunk)
            if results[chunk.index].is_bad_record:
                return list(results.values())  # the first bad line: no need for Spark
        if remaining:
            thread.join()
            if "error" in started:
                raise started["error"]
            for fact in on_spark(started["session"], remaining):
                results[fact.chunk] = fact
        return [results[c.index] for c in chunks]

    @staticmethod
    def _on_spark(
        context: NormalizeContext,
        spark: Any,
        config: EngineConfig,
        chunks: list[Chunk],
        forced: Mapping[int, Forced],
        attempt: int,
        on_done: Callable[[int], None] | None = None,
    ) -> list[ChunkFacts]:
        """One Spark task per chunk (:mod:`.spark_tasks`); only the facts come back."""
        target = spark_session.session_target(spark)
        _announce(context, "spark", target)
        if not target.is_local and target.remote is None:
            spark_tasks.wait_for_executors(
                spark,
                _min_executors(),
                float(loadstone_config.get("normalize.executor_wait_seconds", 120)),
                target.url,
            )
        options = spark_tasks.TaskOptions(
            native_required=_native_setting() == "required",
            fault=loadstone_config.get("normalize.fault", None),
        )
        reports = spark_tasks.run_on_spark(spark, config, chunks, forced, attempt, options, on_done)
        inputs = {chunk.index: chunk.display for chunk in chunks}
        for task in reports:
            if context.on_chunk is not None:
                context.on_chunk(
                    ChunkRun(
                        task.chunk,
                        task.executor,
                        task.native,
                        task.host,
                        task.cpu_seconds,
                        task.wall_seconds,
                        attempt,
                        task.started_at,
                        task.ended_at,
                        inputs.get(task.chunk),
                    )
                )
        return [task.facts for task in reports]

    def _settle(
        self,
        context: NormalizeContext,
        config: EngineConfig,
        chunks: list[Chunk],
        facts: list[ChunkFacts],
    ) -> tuple[list[ChunkFacts], int]:
        """Re-run chunks until their output is the sequential one; returns facts and re-runs.

        A chunk types a column it meets first by its own first value. Where an earlier chunk
        met the column first, that guess is overturned, and everything the chunk did with it
        may differ: its values' columns, and its contract failures (a ``freeze`` judged by
        the wrong type fails where a sequential run passes, or passes where it fails). So:

        * the earliest failure counts only when every chunk before it guessed right; the
          chunks before it finished, so their facts give the global types of all they saw;
        * the failed chunk itself stopped early: it is judged, and re-run, only with the
          types of columns that chunks before it met first (it meets its own first);
        * with no failure, every chunk that guessed wrong runs again with the global types.

        A re-run is forced to exact types, so each round makes the chunks it re-runs exact;
        the loop ends when a round finds nothing to re-run.
        """
        by_chunk = {fact.chunk: fact for fact in facts}
        rerun: set[int] = set()
        for _round in range(len(chunks) + 1):
            ordered = [by_chunk[i] for i in sorted(by_chunk)]
            todo = self._to_rerun(ordered)
            if not todo:
                return ordered, len(rerun)
            for index in todo:
                for paths in by_chunk[index].files.values():
                    for path in paths:
                        Path(path).unlink(missing_ok=True)
            for fact in self._run(context, config, [chunks[i] for i in sorted(todo)], todo, 1):
                by_chunk[fact.chunk] = fact
            rerun.update(todo)
        # each round makes the chunks it re-runs exact, so this is never reached
        raise NormalizeError("normalizing did not settle on one type per column")

    @staticmethod
    def _to_rerun(ordered: list[ChunkFacts]) -> dict[int, Forced]:
        """Chunk index -> the types its re-run must use (see :meth:`_settle`)."""
        failed = [f.chunk for f in ordered if f.error is not None]
        first_failed = failed[0] if failed else None
        decisions = decide(ordered)
        todo: dict[int, Forced] = {}
        for fact in ordered:
            known: Decisions = decisions
            if fact.chunk == first_failed:
                assert fact.error is not None
                if fact.error.kind != "contract":
                    break  # a malformed line is no matter of types
                known = {k: d for k, d in decisions.items() if d.first[0] < fact.chunk}
            if misguessed(fact, known):
                todo[fact.chunk] = forced_types(known)
            if fact.chunk == first_failed:
                break
        return todo

    @staticmethod
    def _raise_failures(facts: Sequence[ChunkFacts], chunks: Sequence[Chunk]) -> None:
        failures = sorted((f for f in facts if f.error is not None), key=lambda f: f.chunk)
        if not failures:
            return
        fact = failures[0]
        error = fact.error
        assert error is not None
        chunk = chunks[fact.chunk]
        if error.kind == "contract":
            assert error.table is not None and error.entity is not None  # set by the engine
            raise ContractViolation(
                schema_name=None,
                table=error.table,
                column=error.column,
                entity=error.entity,
                mode=error.mode,
                value=error.value,
            )
        if error.kind == "not_null":
            assert error.table is not None and error.column is not None  # set by the engine
            raise CannotCoerceNullException(None, error.table, error.column)
        first = chunk_first_lines([c for c in chunks if c.path == chunk.path])[chunk.index]
        line = first + (error.line or 1) - 1
        if error.kind == "bad_record":
            raise BadRecordError(chunk.display, line, error.message)
        cause = _first_line(error.message)
        near = "" if "disk full" in cause else f" near line {line}"
        failure = NormalizeError(f"normalizing {chunk.display} failed{near}: {cause}")
        failure.details = error.traceback  # for a bug report; not shown to users
        raise failure

    def _finish(
        self,
        schema: Schema,
        context: NormalizeContext,
        facts: Sequence[ChunkFacts],
        chunks: Sequence[Chunk],
        plans: Mapping[str, RootPlan],
        out_dir: Path,
    ) -> NormalizeResult:
        """Apply the settled facts to the schema; name the outputs per table."""
        summary, decisions = with_materialized(
            TableSummary.of(facts), decide(list(facts)), list(plans.values())
        )
        check_collisions(context, schema, summary, decisions)
        by_root = {plan.spec.root: plan for plan in plans.values()}
        new_tables, new_columns = apply_facts(schema, summary, decisions, by_root)
        outputs: dict[str, TableOutput] = {
            name: TableOutput(
                out_dir / safe_folder(name),
                summary.rows.get(name, 0),
                tuple(Path(p) for p in summary.files.get(name, ())),
            )
            for name in summary.order
        }
        quarantined = [(f.chunk, b) for f in facts for b in f.bad]
        if quarantined:
            outputs[BAD_RECORDS_TABLE] = self._write_bad_records(quarantined, chunks, out_dir)
            if add_bad_records_table(schema):
                new_tables.append(BAD_RECORDS_TABLE)
        return NormalizeResult(
            schema=schema,
            tables=outputs,
            bad_records=sum(f.bad_count for f in facts),
            new_tables=tuple(new_tables),
            new_columns=new_columns,
        )

    @staticmethod
    def _write_bad_records(
        quarantined: list[tuple[int, tuple[int, str, str]]], chunks: Sequence[Chunk], out_dir: Path
    ) -> TableOutput:
        import pyarrow as pa
        import pyarrow.parquet as pq

        firsts = chunk_first_lines(chunks)
        rows_file = [chunks[i].display for i, _ in quarantined]
        rows_line = [firsts[i] + b[0] - 1 for i, b in quarantined]
        table = pa.table(
            {
                "file": pa.array(rows_file, pa.string()),
                "line": pa.array(rows_line, pa.int64()),
                "error": pa.array([b[1] for _, b in quarantined], pa.string()),
                "raw": pa.array([b[2] for _, b in quarantined], pa.string()),
            }
        )
        folder = out_dir / safe_folder(BAD_RECORDS_TABLE)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "bad-records.parquet"
        pq.write_table(table, path)
        return TableOutput(folder, len(quarantined), (path,))


@attrs.define
class _ChunkDispatch:
    """Runs chunks here, on the local worker processes or on Spark, counting progress.

    One per ``RelationalNormalizer._run`` call: ``done`` counts the chunks finished so far
    wherever they ran, so progress reports stay in order when Spark takes over.
    """

    normalizer: RelationalNormalizer
    context: NormalizeContext
    config: EngineConfig
    forced: Mapping[int, Forced]
    attempt: int
    total: int
    done: int = 0

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
            native = _native_ran(self.config)
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

    def on_spark(self, spark: Any, todo: list[Chunk]) -> list[ChunkFacts]:
        return self.normalizer._on_spark(
            self.context,
            spark,
            self.config,
            todo,
            self.forced,
            self.attempt,
            self.report_more,
        )

    def on_every_core(self, todo: list[Chunk]) -> list[ChunkFacts]:
        """``in_order``'s result, from the local worker processes when there are several."""
        pool = self.normalizer._pool
        if pool.workers < 2 or len(todo) < 2:
            return self.in_order(todo)
        _announce(self.context, "local", None)
        runs = pool.run(self.config, todo, self.forced, self.attempt, self.report_more)
        self.done += len(runs)
        if self.context.on_chunk is not None:
            for chunk, run in zip(todo, runs, strict=False):
                self.context.on_chunk(
                    ChunkRun(
                        chunk.index,
                        f"local worker {run.pid}",
                        _native_ran(self.config),
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
        _announce(self.context, "local", None)
        facts: list[ChunkFacts] = []
        for chunk in todo:
            fact = self.local(chunk)
            facts.append(fact)
            if fact.is_bad_record:
                break
        return facts
