"""The relational normalizer: plan chunks, run them, merge schema facts, re-run guesses.

Flow of :meth:`RelationalNormalizer.normalize`:

1. split the package's extracted files into chunks (:mod:`.chunk_plan`: byte ranges aligned
   to newlines; a ``.gz`` file is one chunk);
2. run every chunk where ``normalize.engine`` says (:mod:`.dispatch`: this process, the
   local worker processes, or Spark tasks, :mod:`.spark_tasks`); each task normalizes its
   lines with :mod:`.engine` and writes its own Parquet files straight into the package's
   storage; only *schema facts* travel back to the driver (first positions and types of
   new columns, tables, row counts, bad lines), never rows;
3. decide every new column's type from its globally first value, re-run only the tasks whose
   local guess differed (their earlier files are deleted; :mod:`.settle`), then build the
   evolved schema with columns in order of first appearance (:mod:`.schema_updates`),
   exactly as a sequential run would.

A single chunk runs in the driver process: there is nothing to parallelize and a Python
worker start costs more than the work.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from loadstone import spark_session
from loadstone.extract.arrow_items import is_arrow_file
from loadstone.normalizers.contract import (
    BAD_RECORDS_TABLE,
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
from loadstone.plugins.normalizers.relational.bad_records import write_bad_records
from loadstone.plugins.normalizers.relational.chunk_plan import DEFAULT_CHUNK_BYTES, plan_chunks
from loadstone.plugins.normalizers.relational.dispatch import ChunkDispatch, DispatchOptions
from loadstone.plugins.normalizers.relational.facts import ChunkFacts, Forced, decide
from loadstone.plugins.normalizers.relational.finished_chunks import FinishedChunks
from loadstone.plugins.normalizers.relational.folders import safe_folder
from loadstone.plugins.normalizers.relational.local_pool import LocalPool
from loadstone.plugins.normalizers.relational.schema_updates import (
    RootPlan,
    TableHints,
    TableSummary,
    add_bad_records_table,
    apply_facts,
    check_collisions,
    known_decimals,
    known_types,
    plan_root,
    with_materialized,
)
from loadstone.plugins.normalizers.relational.settings import (
    DEFAULT_LAZY_SPARK_BYTES,
    cluster_slots,
    configured_workers,
    engine_core,
    engine_core_setting,
    engine_setting,
    min_executors,
    native_enabled,
    native_setting,
    spark_min_bytes,
)
from loadstone.plugins.normalizers.relational.settle import raise_failures, settle
from loadstone.plugins.normalizers.relational.task import Chunk, EngineConfig
from loadstone.schema import Schema
from loadstone.schema.settings import compile_preferred

if TYPE_CHECKING:
    pass

__all__ = ["DEFAULT_CHUNK_BYTES", "RelationalNormalizer"]


def _working_schema(schema: Schema) -> Schema:
    """The schema this package evolves: a copy, so a failed package changes nothing."""
    if not isinstance(schema, Schema):
        raise TypeError(f"a normalizer evolves a Schema, got {type(schema).__name__}")
    return schema.copy()


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
        if engine_setting() != "local":  # a cluster it may run on must answer (issue 36)
            spark_session.check_reachable()
        native_setting()
        engine_core_setting()
        configured_workers()
        spark_min_bytes(self.lazy_spark_bytes)
        min_executors()
        arrow_settings()

    def normalize(
        self,
        package: PackageToNormalize,
        schema: Schema,
        context: NormalizeContext,
    ) -> NormalizeResult:
        working = _working_schema(schema)
        out_dir = Path(package.normalized_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        # one pool per call: settle rounds re-run chunks through the workers already started
        self._pool = LocalPool(self.workers or configured_workers())
        try:
            result = self._normalize(package, working, context, out_dir)
            if context.storage is not None:  # what this process wrote joins the tasks' output
                context.storage.publish_tree(out_dir)
        except BaseException:
            _empty(out_dir)
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
        hints_by_source: Mapping[str, TableHints] = (
            hints_source() if callable(hints_source) else (hints_source or {})
        )
        every_file = list(package.extracted_files())
        arrow_files = [f for f in every_file if is_arrow_file(f.path)]
        files = [f for f in every_file if not is_arrow_file(f.path)]
        existing_before = frozenset(schema.tables)
        # a table asked for with materialize_table_schema() exists even without data
        materialize = [n for n, h in hints_by_source.items() if (h or {}).get("x-materialize")]
        filled = [*(f.table_name for f in every_file), *materialize]
        # in extract order (the package's hints keep it): dlt adds a run's roots in that order
        sources = dict.fromkeys([*(s for s in hints_by_source if s in filled), *filled])
        plans = {
            source: plan_root(
                schema,
                source,
                hints_by_source.get(source) or {},
                context.naming,
                context.capabilities,
            )
            for source in sources
        }
        config = self._engine_config(schema, context, plans, existing_before, package, out_dir)
        slots = cluster_slots()
        workers = slots if slots > 1 else self._pool.workers
        chunks = plan_chunks(files, self.chunk_bytes, workers, context.storage)
        finished = FinishedChunks(schema, plans, context.on_files) if context.on_files else None
        first_round: dict[int, Forced] = {c.index: {} for c in chunks}
        facts = self._run(context, config, chunks, first_round, 0, finished)

        def rerun(
            todo: list[Chunk], forced: Mapping[int, Forced], attempt: int
        ) -> list[ChunkFacts]:
            return self._run(context, config, todo, forced, attempt)

        facts, reruns = settle(rerun, chunks, facts)
        spark_tasks.sweep_attempts(config.out_dir, facts, context.storage)
        raise_failures(facts, chunks, schema.name)
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

    def _engine_config(
        self,
        schema: Schema,
        context: NormalizeContext,
        plans: Mapping[str, RootPlan],
        existing_tables: frozenset[str],
        package: PackageToNormalize,
        out_dir: Path,
    ) -> EngineConfig:
        """What every chunk task gets: the schema's rules and each source table's spec."""
        return EngineConfig(
            naming=context.naming,
            load_id=str(package.load_id),
            out_dir=str(out_dir),
            specs={source: plan.spec for source, plan in plans.items()},
            known=known_types(schema, list(plans.values())),
            decimals=known_decimals(schema, list(plans.values())),
            existing_tables=existing_tables,
            detections=schema.settings.detections,
            preferred=compile_preferred(schema.settings.preferred_types),
            use_break_path=schema.use_break_path_on_normalize,
            on_bad_record=context.on_bad_record,
            flush_rows=self.flush_rows,
            native=native_enabled() if self.native is None else self.native,
            engine_core=engine_core(),
            remote=context.storage,
        )

    def _run(
        self,
        context: NormalizeContext,
        config: EngineConfig,
        chunks: list[Chunk],
        forced: Mapping[int, Forced],
        attempt: int,
        finished: FinishedChunks | None = None,
    ) -> list[ChunkFacts]:
        """Facts of every chunk, in chunk order, computed where ``normalize.engine`` says
        (see :meth:`.dispatch.ChunkDispatch.run`); ``finished`` hears the first round's."""
        options = DispatchOptions(self.inline_single_chunk, self.lazy_spark_bytes)
        dispatch = ChunkDispatch(self._pool, options, context, config, forced, attempt, len(chunks))
        if finished is not None:
            dispatch.on_facts = finished.chunk_done
        return dispatch.run(chunks)

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
            outputs[BAD_RECORDS_TABLE] = write_bad_records(quarantined, chunks, out_dir)
            if add_bad_records_table(schema):
                new_tables.append(BAD_RECORDS_TABLE)
        return NormalizeResult(
            schema=schema,
            tables=outputs,
            bad_records=sum(f.bad_count for f in facts),
            new_tables=tuple(new_tables),
            new_columns=new_columns,
        )


def _empty(out_dir: Path) -> None:
    """Remove what a failed package wrote (the folder itself stays)."""
    for child in out_dir.iterdir():
        if child.is_dir():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)
