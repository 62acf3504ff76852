"""The chunk driver: source items -> typed rows of root and nested tables, in one worker.

Runs inside a Spark task, a local worker process, or the driver, over one chunk of one
extracted file (:func:`run_chunk`). Every row goes through dict operations that pyarrow or
Spark SQL cannot express (flattening with per-key naming, variant columns). The two loops
that touch every value (flattening an item: :mod:`.rows`; placing each value into its
column: :mod:`.row_typing`) also exist in C (``_speedups``, :mod:`.native`): the Python
loops are their reference, the default path runs the C ones, and
``EngineConfig.native = False`` (config ``normalize.native``) runs the reference.

A chunk's state is split by concern, each part owned by one small class: the names met
(:class:`~.names.ColumnNames`), the column types known and decided
(:class:`~.column_types.ColumnTypes`), the tables met (:class:`~.rows.TablesMet`), the
position in the chunk (:class:`~.row_typing.Cursor`), the rows not written yet
(:class:`~.table_buffers.TableBuffers`) and the bad lines (:class:`~.bad_records.BadRecords`).

Sequential semantics in parallel: a column not in the schema gets its type from the first
non-None value *this task* sees (unless the driver forces the type). Which column a value
goes to is a pure function of (column type, value), so the task's rows equal the sequential
result iff each of its local decisions equals the decision of the globally first value. The
task reports, per new column, the position of its first value ``(chunk, line, visit)`` and
the type; the driver compares and re-runs only the tasks that guessed differently.
"""

from __future__ import annotations

import gc
import traceback
from collections.abc import Mapping

import attrs

from loadstone.plugins.normalizers.relational import native_core
from loadstone.plugins.normalizers.relational.bad_records import BadRecords
from loadstone.plugins.normalizers.relational.column_types import ColumnTypes
from loadstone.plugins.normalizers.relational.facts import ChunkFacts, TableFact, TaskError
from loadstone.plugins.normalizers.relational.json_lines import (
    BadLine,
    is_blank,
    iter_lines,
    parse_line,
    scan_line,
)
from loadstone.plugins.normalizers.relational.names import ColumnNames
from loadstone.plugins.normalizers.relational.native import native_loops
from loadstone.plugins.normalizers.relational.native_core import NativeHooks
from loadstone.plugins.normalizers.relational.row_typing import Cursor, RowTyper
from loadstone.plugins.normalizers.relational.rows import RowFlattener, TablesMet
from loadstone.plugins.normalizers.relational.table_buffers import TableBuffers
from loadstone.plugins.normalizers.relational.task import (
    Chunk,
    EngineConfig,
    TaskFailure,
)


class ChunkEngine:
    """Normalizes the items of one chunk and writes its Parquet files."""

    def __init__(
        self,
        config: EngineConfig,
        chunk: Chunk,
        forced: Mapping[str, Mapping[str, str]],
        attempt: int,
    ) -> None:
        self.chunk = chunk
        self.attempt = attempt
        self.config_spec = config.specs[chunk.table_name]
        self.native = native_loops(config.native)
        self.cursor = Cursor()
        self.names = ColumnNames(config.naming, config.use_break_path)
        self.types = ColumnTypes(config, forced, self.names)
        self.tables = TablesMet()
        self.buffers = TableBuffers(config, chunk, attempt, self.types.by_table, self.native)
        self.bad = BadRecords(config.on_bad_record)
        self.typer = RowTyper(
            chunk.index,
            config.flush_rows,
            self.types,
            self.names,
            self.buffers,
            self.cursor,
            self.native,
        )
        self.rows = RowFlattener(
            config, chunk.index, self.names, self.typer, self.tables, self.cursor, self.native
        )

    def native_hooks(self) -> NativeHooks:
        """What the native core asks of this engine's state (:mod:`.native_core`)."""
        return NativeHooks(
            self.chunk,
            self.config_spec,
            self.names,
            self.types,
            self.tables,
            self.rows,
            self.cursor,
        )

    def facts(self, error: TaskError | None = None) -> ChunkFacts:
        """What this chunk reports to the driver (see :mod:`.facts`)."""
        tables = self.tables
        row_counts = self.buffers.row_counts
        return ChunkFacts(
            chunk=self.chunk.index,
            attempt=self.attempt,
            tables={
                t: TableFact(tables.first[t], tables.parents[t], row_counts.get(t, 0))
                for t in tables.parents
            },
            table_sources=dict(self.names.table_source),
            columns=dict(self.types.new_columns),
            files={t: tuple(paths) for t, paths in self.buffers.files.items()},
            bad=tuple(self.bad.lines),
            bad_count=self.bad.count,
            discarded_rows=tables.refused_rows + self.typer.discarded_rows,
            error=error,
        )


def run_chunk(
    config: EngineConfig, chunk: Chunk, forced: Mapping[str, Mapping[str, str]], attempt: int
) -> ChunkFacts:
    """Normalize one chunk; failures of the data come back as data, storage errors raise.

    With ``engine_core = "native"`` the native core (:mod:`.native_core`) tries the chunk
    first; what it hands back runs here, whole, through the Python engine.
    """
    if config.engine_core != "native":
        return _run_python(config, chunk, forced, attempt)
    skipped = native_core.skip_reason(config, chunk)
    if skipped is not None:
        facts = _run_python(config, chunk, forced, attempt)
        return attrs.evolve(facts, core=f"native skipped: {skipped}")
    engine = ChunkEngine(config, chunk, forced, attempt)
    collecting = gc.isenabled()
    gc.disable()  # as below: the callbacks' few objects hold no cycles
    try:
        fell_back = native_core.run_native(config, chunk, engine.native_hooks(), engine.buffers)
    except OSError:
        raise
    except Exception as exc:  # writing the core's tables: reported as the Python engine does
        return engine.facts(_internal_error(engine, exc))
    finally:
        if collecting:
            gc.enable()
    if fell_back is None:
        return attrs.evolve(engine.facts(), core=native_core.NATIVE)
    facts = _run_python(config, chunk, forced, attempt)
    return attrs.evolve(facts, core=f"native fallback: {fell_back}")


def _internal_error(engine: ChunkEngine, exc: Exception) -> TaskError:
    return TaskError(
        "internal",
        line=engine.cursor.line,
        message=f"{type(exc).__name__}: {exc}",
        traceback=traceback.format_exc(),
    )


def _run_python(
    config: EngineConfig, chunk: Chunk, forced: Mapping[str, Mapping[str, str]], attempt: int
) -> ChunkFacts:
    """The chunk through the Python engine (the reference)."""
    engine = ChunkEngine(config, chunk, forced, attempt)
    spec = config.specs[chunk.table_name]
    process = engine.rows.process_item
    record_bad = engine.bad.record
    scan = scan_line if engine.native is None else engine.native.scan_line
    collecting = gc.isenabled()
    gc.disable()  # a chunk's items hold no cycles; collecting them cost 1-2% of its CPU
    try:
        for number, raw in iter_lines(chunk, config.remote):
            if not raw:
                continue
            try:
                item = parse_line(raw, scan)
            except BadLine as exc:
                if not is_blank(raw):  # checked here: whitespace-only lines are rare
                    record_bad(number, exc, bytes(raw))
                continue
            process(item, spec, number)
        engine.buffers.flush_all()
    except TaskFailure as failure:
        return engine.facts(failure.error)
    except OSError:
        raise  # storage, not data: the caller reports it with the path (and Spark retries)
    except Exception as exc:
        return engine.facts(_internal_error(engine, exc))
    finally:
        if collecting:
            gc.enable()
    return engine.facts()
