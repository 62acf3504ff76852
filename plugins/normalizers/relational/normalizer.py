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

import copy
import os
import shutil
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from loadstone import config as loadstone_config
from loadstone import spark_session
from loadstone.normalize.contract import (
    BAD_RECORDS_TABLE,
    BadRecordError,
    ChunkRun,
    EngineChoice,
    NormalizeContext,
    NormalizeError,
    NormalizeResult,
    TableOutput,
)
from loadstone.plugins.normalizers.relational import spark_tasks, type_rules
from loadstone.plugins.normalizers.relational.engine import (
    LIST_IDX,
    LOAD_ID,
    NATIVE_AVAILABLE,
    PARENT_ID,
    ROOT_ID,
    ROW_ID,
    Chunk,
    EngineConfig,
    RootSpec,
    run_chunk,
)
from loadstone.plugins.normalizers.relational.folders import safe_folder
from loadstone.schema.collisions import IdentifierCollisionError, find_identifier_collisions
from loadstone.schema.contracts import ContractViolation

#: Plain files larger than this are split into chunks of about this size.
DEFAULT_CHUNK_BYTES = 32 * 1024 * 1024

#: With a session not started yet, inputs smaller than this run in this process: starting a
#: JVM and Python workers costs more than it saves. Measured on 2 cores with the C engine
#: (GitHub events, end to end): the driver alone took 4.5 s at 270 MB where starting Spark
#: took 5.5-6.6 s, 8.3 s vs 10 s at 540 MB, even at 1.35 GB (17.9 vs 18.8 s), and Spark won
#: from about there (2.7 GB: 35.9 vs 39.2 s). More cores move the break-even down.
DEFAULT_LAZY_SPARK_BYTES = 1024 * 1024 * 1024

_SYSTEM_COLUMNS: Mapping[str, dict[str, Any]] = {
    LOAD_ID: {"data_type": "text", "nullable": False},
    ROW_ID: {"data_type": "text", "nullable": False, "unique": True, "row_key": True},
    PARENT_ID: {"data_type": "text", "nullable": False, "parent_key": True},
    LIST_IDX: {"data_type": "bigint", "nullable": False},
    ROOT_ID: {"data_type": "text", "nullable": False, "root_key": True},
}


def _native_setting() -> str:
    """``normalize.native``: ``true`` (default), ``false`` or ``required``.

    True runs the engine's C hot path where it is built (the Python loops elsewhere); false
    runs the pure-Python reference loops, e.g. to rule the C path out when chasing a
    difference (the output is the same either way); ``required`` fails the run where the C
    extension is missing (on the driver, or in any Spark task) instead of running slowly.
    """
    value = loadstone_config.get("normalize.native", True)
    text = str(value).strip().lower()
    if text in ("true", "1", "yes", "on"):
        return "true"
    if text in ("false", "0", "no", "off"):
        return "false"
    if text == "required":
        return "required"
    raise NormalizeError(f"normalize.native must be true, false or required, not {value!r}")


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


def _engine_setting() -> str:
    """``normalize.engine`` (env ``NORMALIZE__ENGINE``, CLI ``--engine``), default auto."""
    value = str(loadstone_config.get("normalize.engine", "auto")).strip().lower()
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


def _is_bad_record(fact: Mapping[str, Any]) -> bool:
    error = fact.get("error")
    return error is not None and error.get("kind") == "bad_record"


def plan_chunks(files: Sequence[Any], chunk_bytes: int) -> list[Chunk]:
    """Chunks of the extracted files, in source order (file, then byte offset)."""
    chunks: list[Chunk] = []
    for file_index, extracted in enumerate(files):
        path = str(extracted.path)
        display = str(getattr(extracted, "source", None) or path)
        first_line = int(getattr(extracted, "first_line", 1) or 1)
        size = os.path.getsize(path)
        if path.endswith(".gz") or size <= chunk_bytes:
            chunks.append(
                Chunk(
                    len(chunks), file_index, path, extracted.table_name, 0, -1, display, first_line
                )
            )
            continue
        start = 0
        with open(path, "rb") as handle:
            while start < size:
                target = start + chunk_bytes
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


def _chunk_size(chunk: Chunk) -> int:
    if chunk.end >= 0:
        return chunk.end - chunk.start
    size = os.path.getsize(chunk.path)
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


#: dlt's module name for the relational normalizer, as stored in ``normalizers.json``.
_DLT_RELATIONAL = "dlt.common.normalizers.json.relational"


def _record_propagation(data: dict[str, Any], root: str, schema_wide: bool) -> None:
    """Store root key propagation in the schema as dlt does, so the schema file carries it.

    A merge table (or any root asking for it) gets ``propagation.tables.<root>``; a source
    with ``root_key=True`` also sets the schema-wide ``root_key_propagation`` flag, which
    later roots of the schema follow.
    """
    json_section = data.setdefault("normalizers", {}).setdefault("json", {})
    json_section.setdefault("module", _DLT_RELATIONAL)
    config = json_section.setdefault("config", {})
    if schema_wide:
        config["root_key_propagation"] = True
    tables = config.setdefault("propagation", {}).setdefault("tables", {})
    tables[root] = {ROW_ID: ROOT_ID}


def _schema_dict(schema: Any) -> dict[str, Any]:
    if schema is None:
        return {"tables": {}}
    if isinstance(schema, Mapping):
        return copy.deepcopy(dict(schema))
    return copy.deepcopy(schema.to_dict())


def _rebuild_schema(original: Any, data: dict[str, Any]) -> Any:
    if original is None or isinstance(original, Mapping):
        return data
    from_dict = getattr(type(original), "from_dict", None)
    if from_dict is None:
        return data
    return from_dict(data)


def _disposition(hints: Mapping[str, Any]) -> tuple[str, str | None]:
    value = hints.get("write_disposition")
    if isinstance(value, Mapping):
        return str(value.get("disposition") or "append"), value.get("strategy")
    return str(value or "append"), hints.get("x-merge-strategy")


def _as_tuple(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(value)


def _hint_rules(default_hints: Mapping[str, Sequence[str]]) -> Any:
    """A function column name -> the schema's default hints that apply to a new column."""
    rules = [
        (hint, type_rules.compile_preferred({p: hint for p in patterns}))
        for hint, patterns in default_hints.items()
    ]

    def hints_for(column: str) -> list[str]:
        return [hint for hint, compiled in rules if type_rules.preferred_type(column, compiled)]

    return hints_for


class RelationalNormalizer:
    """dlt's relational normalization, run as Spark tasks that write Parquet directly."""

    def __init__(
        self,
        chunk_bytes: int = DEFAULT_CHUNK_BYTES,
        flush_rows: int = 20000,
        inline_single_chunk: bool = True,
        lazy_spark_bytes: int = DEFAULT_LAZY_SPARK_BYTES,
        native: bool | None = None,
    ) -> None:
        self.chunk_bytes = chunk_bytes
        #: the engine's C hot path: None follows ``normalize.native`` (default on)
        self.native = native
        self.lazy_spark_bytes = lazy_spark_bytes
        self.flush_rows = flush_rows
        self.inline_single_chunk = inline_single_chunk
        #: figures of the last run: chunks planned and chunks re-run (for tests and benchmarks)
        self.last_stats: dict[str, int] = {}

    # -- public -----------------------------------------------------------------------------
    def normalize(self, package: Any, schema: Any, context: NormalizeContext) -> NormalizeResult:
        data = _schema_dict(schema)
        out_dir = Path(package.normalized_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        try:
            return self._normalize(package, schema, data, context, out_dir)
        except BaseException:
            for child in out_dir.iterdir():
                if child.is_dir():
                    shutil.rmtree(child, ignore_errors=True)
                else:
                    child.unlink(missing_ok=True)
            raise

    # -- steps ------------------------------------------------------------------------------
    def _normalize(
        self,
        package: Any,
        original: Any,
        data: dict[str, Any],
        context: NormalizeContext,
        out_dir: Path,
    ) -> NormalizeResult:
        naming = context.naming
        tables: dict[str, Any] = data.setdefault("tables", {})
        settings = data.get("settings") or {}
        normalizers = data.get("normalizers") or {}
        use_break_path = normalizers.get("use_break_path_on_normalize", True) is not False
        json_config = dict((normalizers.get("json") or {}).get("config") or {})
        hints_source = package.table_hints
        hints_by_source: Mapping[str, Any] = (
            hints_source() if callable(hints_source) else (hints_source or {})
        )
        files = list(package.extracted_files())
        existing_before = {name for name in tables}

        specs: dict[str, RootSpec] = {}
        hinted_columns: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        root_props: dict[str, dict[str, Any]] = {}
        for source_name in dict.fromkeys(f.table_name for f in files):
            hints = dict(hints_by_source.get(source_name) or {})
            root = (
                naming.normalize_tables_path(source_name)
                if use_break_path
                else naming.normalize_table_identifier(source_name)
            )
            existing = tables.get(root) or {}
            # no disposition in code: an existing table keeps the one it was created with
            explicit_disposition = hints.get("write_disposition") is not None
            disposition, strategy = _disposition(hints if explicit_disposition else existing)
            pk = tuple(naming.normalize_path(k) for k in _as_tuple(hints.get("primary_key")))
            mk = tuple(naming.normalize_path(k) for k in _as_tuple(hints.get("merge_key")))
            x_normalizer = dict(hints.get("x-normalizer") or {})
            max_nesting = hints.get(
                "max_nesting", hints.get("max_table_nesting", x_normalizer.get("max_nesting"))
            )
            if max_nesting is None:
                max_nesting = (existing.get("x-normalizer") or {}).get("max_nesting")
            if max_nesting is None:
                max_nesting = (
                    (normalizers.get("json") or {}).get("config", {}).get("max_nesting", 1000)
                )
            asked = bool(
                hints.get("root_key_propagation") or x_normalizer.get("root_key_propagation")
            )
            propagate = (
                (disposition == "merge" and strategy != "scd2")
                or asked
                or bool(json_config.get("root_key_propagation"))
                or root in (json_config.get("propagation") or {}).get("tables", {})
            )
            if propagate:
                _record_propagation(data, root, schema_wide=asked)
            specs[source_name] = RootSpec(
                source_name=source_name,
                root=root,
                max_nesting=int(max_nesting),
                propagate_root_key=propagate,
                primary_key=pk if strategy in ("upsert", "insert-only") else (),
                row_hash=strategy == "scd2",
                contract=hints.get("schema_contract") or existing.get("schema_contract"),
                existing_table=root in existing_before,
            )
            cols: list[tuple[str, dict[str, Any]]] = []
            if strategy == "scd2":
                # dlt's scd2 validity columns come first; the row hash is a version, not a key
                cols.append(
                    (
                        "_dlt_valid_from",
                        {
                            "name": "_dlt_valid_from",
                            "data_type": "timestamp",
                            "nullable": True,
                            "x-valid-from": True,
                        },
                    )
                )
                cols.append(
                    (
                        "_dlt_valid_to",
                        {
                            "name": "_dlt_valid_to",
                            "data_type": "timestamp",
                            "nullable": True,
                            "x-valid-to": True,
                            "x-active-record-timestamp": None,
                        },
                    )
                )
                cols.append(
                    (
                        ROW_ID,
                        {"name": ROW_ID, "x-row-version": True, "unique": False, "row_key": False},
                    )
                )
            for name, column in (hints.get("columns") or {}).items():
                column = dict(column or {})
                column_name = naming.normalize_path(column.get("name") or name)
                column["name"] = column_name
                cols.append((column_name, column))
            for key in pk + tuple(
                naming.normalize_path(k) for k in _as_tuple(hints.get("primary_key"))
            ):
                if all(c != key for c, _ in cols):
                    cols.append((key, {"name": key}))
            for key in mk:
                if all(c != key for c, _ in cols):
                    cols.append((key, {"name": key}))
            for column_name, column in cols:
                if column_name in pk or column_name in tuple(
                    naming.normalize_path(k) for k in _as_tuple(hints.get("primary_key"))
                ):
                    column["primary_key"] = True
                    column["nullable"] = False
                if column_name in mk:
                    column["merge_key"] = True
            hinted_columns[root] = cols
            props: dict[str, Any] = {"resource": source_name}
            if explicit_disposition or root not in existing_before:
                props["write_disposition"] = disposition
                props["x-merge-strategy"] = strategy  # None drops an earlier strategy
            if hints.get("max_nesting") is not None or hints.get("max_table_nesting") is not None:
                props["x-normalizer"] = {"max_nesting": int(max_nesting)}
            if hints.get("schema_contract") is not None:
                props["schema_contract"] = hints["schema_contract"]
            for key in ("file_format", "table_format"):  # kept in the schema, as dlt does
                if hints.get(key) is not None:
                    props[key] = hints[key]
            root_props[root] = props

        known: dict[str, dict[str, str]] = {}
        for name, table in tables.items():
            known[name] = {
                c: col["data_type"]
                for c, col in (table.get("columns") or {}).items()
                if col.get("data_type")
            }
        for root, cols in hinted_columns.items():
            for column_name, column in cols:
                if column.get("data_type"):
                    known.setdefault(root, {})[column_name] = column["data_type"]

        config = EngineConfig(
            naming=naming,
            load_id=str(package.load_id),
            out_dir=str(out_dir),
            specs=specs,
            known=known,
            existing_tables=frozenset(existing_before),
            detections=tuple(settings.get("detections", ("iso_timestamp",)) or ()),
            preferred=dict(settings.get("preferred_types") or {}),
            use_break_path=use_break_path,
            on_bad_record=context.on_bad_record,
            flush_rows=self.flush_rows,
            native=_native_enabled() if self.native is None else self.native,
        )
        chunks = plan_chunks(files, self.chunk_bytes)
        facts = self._run(context, config, chunks, {c.index: {} for c in chunks}, 0)
        facts, reruns = self._settle(context, config, chunks, facts)
        spark_tasks.sweep_attempts(config.out_dir, facts)
        self._raise_failures(facts, chunks)
        decisions = self._decide(facts)
        self.last_stats = {"chunks": len(chunks), "reruns": reruns}
        return self._finish(
            original,
            data,
            context,
            facts,
            decisions,
            chunks,
            specs,
            hinted_columns,
            root_props,
            existing_before,
            out_dir,
            package,
        )

    def _run(
        self,
        context: NormalizeContext,
        config: EngineConfig,
        chunks: list[Chunk],
        forced: Mapping[int, Any],
        attempt: int,
    ) -> list[dict[str, Any]]:
        """Facts of every chunk, in chunk order, computed where ``normalize.engine`` says.

        * ``local``, or no Spark: in this process;
        * ``spark``: every chunk as a Spark task, once executors registered;
        * ``auto``: a session handed in runs all chunks but a lone one; a configured
          cluster or Connect remote runs them all; on a local master, a lazy session (a
          callable) starts only when the input is worth a JVM (``lazy_spark_bytes``),
          in the background, while this process starts on the chunks, and takes over the
          chunks not yet begun. Small packages never pay for a JVM start.
        """
        total = len(chunks)
        done_here = [0]
        engine = _engine_setting()

        def report(done: int) -> None:
            if context.progress is not None:
                context.progress(min(done, total), total)

        def local(chunk: Chunk) -> dict[str, Any]:
            cpu, wall = time.process_time(), time.perf_counter()
            fact = run_chunk(config, chunk, forced.get(chunk.index, {}), attempt)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            done_here[0] += 1
            report(done_here[0])
            if context.on_chunk is not None:
                native = _native_ran(config)
                run = ChunkRun(chunk.index, "driver", native, None, cpu, wall, attempt)
                context.on_chunk(run)
            return fact

        def on_spark(spark: Any, todo: list[Chunk]) -> list[dict[str, Any]]:
            return self._on_spark(
                context, spark, config, todo, forced, attempt, lambda n: report(done_here[0] + n)
            )

        def in_order(todo: list[Chunk]) -> list[dict[str, Any]]:
            """Chunks one after another here, stopping at the first malformed line.

            Every chunk before it has passed, so it is the package's first bad line: report
            it now rather than after normalizing the rest (a contract failure may still be
            undone by a re-run with the global types, so those chunks go on).
            """
            _announce(context, "local", None)
            facts = []
            for chunk in todo:
                fact = local(chunk)
                facts.append(fact)
                if _is_bad_record(fact):
                    break
            return facts

        if not chunks:
            return []
        spark = context.spark
        if engine == "spark" and spark is None:
            raise NormalizeError("normalize.engine = spark, but no Spark session was given")
        if engine == "local" or spark is None:
            return in_order(chunks)
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
        min_bytes = int(loadstone_config.get("normalize.spark_min_bytes", self.lazy_spark_bytes))
        if sum(_chunk_size(c) for c in chunks) < min_bytes:
            return in_order(chunks)
        return self._overlapped(spark, chunks, local, on_spark)

    @staticmethod
    def _overlapped(
        start_session: Callable[[], Any],
        chunks: list[Chunk],
        local: Callable[[Chunk], dict[str, Any]],
        on_spark: Callable[[Any, list[Chunk]], list[dict[str, Any]]],
    ) -> list[dict[str, Any]]:
        """Chunks here while a local session starts; Spark takes the rest once it is up."""
        started: dict[str, Any] = {}

        def start() -> None:
            try:
                started["session"] = start_session()
            except BaseException as exc:  # reported in the driver thread below
                started["error"] = exc

        thread = threading.Thread(target=start, name="loadstone-spark-start", daemon=True)
        thread.start()
        results: dict[int, dict[str, Any]] = {}
        remaining = list(chunks)
        while remaining and thread.is_alive():
            chunk = remaining.pop(0)
            results[chunk.index] = local(chunk)
            if _is_bad_record(results[chunk.index]):
                return list(results.values())  # the first bad line: no need for Spark
        if remaining:
            thread.join()
            if "error" in started:
                raise started["error"]
            for fact in on_spark(started["session"], remaining):
                results[fact["chunk"]] = fact
        return [results[c.index] for c in chunks]

    @staticmethod
    def _on_spark(
        context: NormalizeContext,
        spark: Any,
        config: EngineConfig,
        chunks: list[Chunk],
        forced: Mapping[int, Any],
        attempt: int,
        on_done: Callable[[int], None] | None = None,
    ) -> list[dict[str, Any]]:
        """One Spark task per chunk (:mod:`.spark_tasks`); only the facts come back."""
        target = spark_session.session_target(spark)
        _announce(context, "spark", target)
        if not target.is_local and target.remote is None:
            spark_tasks.wait_for_executors(
                spark,
                int(loadstone_config.get("normalize.min_executors", 1)),
                float(loadstone_config.get("normalize.executor_wait_seconds", 120)),
                target.url,
            )
        options = spark_tasks.TaskOptions(
            native_required=_native_setting() == "required",
            fault=loadstone_config.get("normalize.fault", None),
        )
        reports = spark_tasks.run_on_spark(spark, config, chunks, forced, attempt, options, on_done)
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
                    )
                )
        return [task.facts for task in reports]

    def _settle(
        self,
        context: NormalizeContext,
        config: EngineConfig,
        chunks: list[Chunk],
        facts: list[dict[str, Any]],
    ) -> tuple[list[dict[str, Any]], int]:
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
        by_chunk = {fact["chunk"]: fact for fact in facts}
        rerun: set[int] = set()
        for _round in range(len(chunks) + 1):
            ordered = [by_chunk[i] for i in sorted(by_chunk)]
            failed = [f["chunk"] for f in ordered if f["error"]]
            first_failed = failed[0] if failed else None
            decisions = self._decide(ordered)
            todo: dict[int, dict[str, dict[str, str]]] = {}
            for fact in ordered:
                index = fact["chunk"]
                known = decisions
                if index == first_failed:
                    if fact["error"]["kind"] != "contract":
                        break  # a malformed line is no matter of types
                    known = {k: d for k, d in decisions.items() if d[0][0] < index}
                if self._misguessed(fact, known):
                    todo[index] = self._forced(known)
                if index == first_failed:
                    break
            if not todo:
                return ordered, len(rerun)
            for index in todo:
                for paths in by_chunk[index]["files"].values():
                    for path in paths:
                        Path(path).unlink(missing_ok=True)
            for fact in self._run(context, config, [chunks[i] for i in sorted(todo)], todo, 1):
                by_chunk[fact["chunk"]] = fact
            rerun.update(todo)
        # each round makes the chunks it re-runs exact, so this is never reached
        raise NormalizeError("normalizing did not settle on one type per column")

    @staticmethod
    def _misguessed(fact: Mapping[str, Any], decisions: Mapping[str, tuple[Any, ...]]) -> bool:
        """Whether the chunk typed a column itself otherwise than ``decisions`` do."""
        for key, (_pos, data_type, variant, local, _src) in fact["columns"].items():
            if local and not variant and key in decisions and decisions[key][1] != data_type:
                return True
        return False

    @staticmethod
    def _raise_failures(facts: Sequence[dict[str, Any]], chunks: Sequence[Chunk]) -> None:
        failures = sorted((f for f in facts if f["error"]), key=lambda f: f["chunk"])
        if not failures:
            return
        fact = failures[0]
        error = fact["error"]
        chunk = chunks[fact["chunk"]]
        kind = error["kind"]
        if kind == "bad_record":
            first = chunk_first_lines([c for c in chunks if c.path == chunk.path])[chunk.index]
            raise BadRecordError(chunk.display, first + error["line"] - 1, error["error"])
        if kind == "contract":
            raise ContractViolation(
                schema_name=None,
                table=error["table"],
                column=error["column"],
                entity=error["entity"],
                mode=error.get("mode", "freeze"),
                value=error["value"],
            )
        first = chunk_first_lines([c for c in chunks if c.path == chunk.path])[chunk.index]
        line = first + int(error.get("line") or 1) - 1
        cause = _first_line(error["message"])
        near = "" if "disk full" in cause else f" near line {line}"
        failure = NormalizeError(f"normalizing {chunk.display} failed{near}: {cause}")
        failure.details = error.get("traceback", "")  # for a bug report; not shown to users
        raise failure

    @staticmethod
    def _decide(
        facts: Sequence[dict[str, Any]],
    ) -> dict[str, tuple[tuple[int, int, int], str, bool, str]]:
        """(table, column) -> (first position, type, is_variant, source) of the globally first value."""
        decisions: dict[str, tuple[tuple[int, int, int], str, bool, str]] = {}
        for fact in facts:
            for key, (pos, data_type, variant, _local, source) in fact["columns"].items():
                pos = tuple(pos)
                current = decisions.get(key)
                if current is None or pos < current[0]:
                    decisions[key] = (pos, data_type, variant, source)
        return decisions

    @staticmethod
    def _forced(decisions: Mapping[str, tuple[Any, str, bool, str]]) -> dict[str, dict[str, str]]:
        forced: dict[str, dict[str, str]] = {}
        for key, (_pos, data_type, variant, _src) in decisions.items():
            if not variant:
                table, column = key.split("\x00", 1)
                forced.setdefault(table, {})[column] = data_type
        return forced

    def _finish(
        self,
        original: Any,
        data: dict[str, Any],
        context: NormalizeContext,
        facts: Sequence[dict[str, Any]],
        decisions: Mapping[str, tuple[Any, str, bool, str]],
        chunks: Sequence[Chunk],
        specs: Mapping[str, RootSpec],
        hinted_columns: Mapping[str, list[tuple[str, dict[str, Any]]]],
        root_props: Mapping[str, dict[str, Any]],
        existing_before: set[str],
        out_dir: Path,
        package: Any,
    ) -> NormalizeResult:
        tables: dict[str, Any] = data["tables"]
        table_first: dict[str, tuple[int, int, int]] = {}
        parents: dict[str, str | None] = {}
        rows: dict[str, int] = {}
        files: dict[str, list[Path]] = {}
        table_sources: dict[str, str] = {}
        for fact in facts:
            table_sources.update(
                {k: v for k, v in fact.get("table_sources", {}).items() if k not in table_sources}
            )
            for name, info in fact["tables"].items():
                pos = tuple(info["first"])
                if name not in table_first or pos < table_first[name]:
                    table_first[name] = pos
                parents[name] = info["parent"]
                rows[name] = rows.get(name, 0) + info["rows"]
            for name, paths in fact["files"].items():
                files.setdefault(name, []).extend(Path(p) for p in paths)

        default_hints = _hint_rules((data.get("settings") or {}).get("default_hints") or {})
        columns_by_table: dict[str, list[tuple[tuple[int, int, int], str, str, bool, str]]] = {}
        for key, (pos, data_type, variant, source) in decisions.items():
            table, column = key.split("\x00", 1)
            columns_by_table.setdefault(table, []).append((pos, column, data_type, variant, source))

        self._check_collisions(context, table_first, columns_by_table, tables, table_sources)

        new_tables: list[str] = []
        new_columns: dict[str, tuple[str, ...]] = {}
        for name in sorted(table_first, key=lambda t: table_first[t]):
            table = tables.get(name)
            if table is None:
                table = {"name": name, "columns": {}}
                parent = parents[name]
                if parent is not None:
                    table["parent"] = parent
                tables[name] = table
                new_tables.append(name)
                for column_name, column in hinted_columns.get(name, []):
                    if column.get("data_type"):
                        table["columns"][column_name] = dict(column)
            if name in root_props:
                for key, value in root_props[name].items():
                    if value is None:
                        table.pop(key, None)
                    elif key == "resource":
                        table.setdefault(key, value)
                    else:
                        table[key] = value
                table.setdefault("x-normalizer", {})
                table["x-normalizer"]["seen-data"] = True
            cols: dict[str, Any] = table.setdefault("columns", {})
            added: list[str] = []
            hinted = dict(hinted_columns.get(name, []))
            # hints from code (primary_key=, merge_key=, columns=) also apply to columns an
            # existing table already has; their data type stays (the column holds data)
            for column_name, column in hinted.items():
                if column_name in cols:
                    updates = {k: v for k, v in column.items() if k != "data_type"}
                    cols[column_name] = {**cols[column_name], **updates}
            for _pos, column, data_type, variant, _src in sorted(columns_by_table.get(name, [])):
                if column in cols:
                    continue
                if column in _SYSTEM_COLUMNS:
                    entry = {"name": column, **_SYSTEM_COLUMNS[column]}
                    entry.update(hinted.get(column, {}))
                else:
                    entry = {"name": column, "data_type": data_type, "nullable": True}
                    if variant:
                        entry["variant"] = True
                        # dlt's exact wording, so schemas compare equal across the two tools
                        entry["description"] = f"Variant of column {column} generated by dlt"
                    for hint in default_hints(column):
                        if hint == "not_null":
                            entry["nullable"] = False
                        else:
                            entry[hint] = True
                    if column in hinted:
                        entry.update({k: v for k, v in hinted[column].items() if k != "data_type"})
                cols[column] = entry
                added.append(column)
            if added:
                new_columns[name] = tuple(added)

        outputs: dict[str, TableOutput] = {}
        for name in sorted(table_first, key=lambda t: table_first[t]):
            outputs[name] = TableOutput(
                out_dir / safe_folder(name), rows.get(name, 0), tuple(files.get(name, ()))
            )

        bad_total = sum(int(f["bad_count"]) for f in facts)
        quarantined = [(f["chunk"], b) for f in facts for b in f["bad"]]
        if quarantined:
            outputs[BAD_RECORDS_TABLE] = self._write_bad_records(quarantined, chunks, out_dir)
            if BAD_RECORDS_TABLE not in tables:
                tables[BAD_RECORDS_TABLE] = {
                    "name": BAD_RECORDS_TABLE,
                    "write_disposition": "append",
                    "columns": {
                        "file": {"name": "file", "data_type": "text", "nullable": False},
                        "line": {"name": "line", "data_type": "bigint", "nullable": False},
                        "error": {"name": "error", "data_type": "text", "nullable": False},
                        "raw": {"name": "raw", "data_type": "text", "nullable": True},
                    },
                }
                new_tables.append(BAD_RECORDS_TABLE)
        return NormalizeResult(
            schema=_rebuild_schema(original, data),
            tables=outputs,
            bad_records=bad_total,
            new_tables=tuple(new_tables),
            new_columns=new_columns,
        )

    @staticmethod
    def _check_collisions(
        context: NormalizeContext,
        table_first: Mapping[str, Any],
        columns_by_table: Mapping[str, list[Any]],
        tables: Mapping[str, Any],
        table_sources: Mapping[str, str],
    ) -> None:
        """A case-sensitive naming on a case-insensitive destination must not merge identifiers.

        Identifiers already in the schema take part, so ``id`` arriving after ``Id`` was
        loaded is caught too. Runs before any output is kept; the files are then discarded.
        """
        caps = context.capabilities
        if caps is None or not getattr(context.naming, "is_case_sensitive", False):
            return
        if getattr(caps, "has_case_sensitive_identifiers", True):
            return
        table_pairs = [(name, name) for name in tables]
        table_pairs += [
            (name, table_sources.get(name, name))
            for name in sorted(table_first, key=lambda t: table_first[t])
            if name not in tables
        ]
        collisions = find_identifier_collisions(table_pairs)
        for table, entries in columns_by_table.items():
            existing = (tables.get(table) or {}).get("columns", {})
            pairs = [(column, column) for column in existing]
            pairs += [
                (column, source)
                for _pos, column, _dt, _variant, source in sorted(entries)
                if column not in existing
            ]
            collisions.extend(find_identifier_collisions(pairs, table=table))
        if collisions:
            raise IdentifierCollisionError(collisions)

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
