"""The pipeline: extract -> normalize -> load, with state, schemas and crash recovery.

``loadstone.pipeline(...)`` mirrors ``dlt.pipeline(...)``. A pipeline owns a working folder
``<pipelines_dir>/<pipeline_name>/`` with its state, its schemas, its load packages and the
trace of its last run. Every step works package by package and records its end in the
package's state (see :mod:`loadstone.storage.load_package`), so a run killed at any moment is
finished by the next one: normalize again what was extracted, load what was normalized, and
skip what the destination already committed (its ``_dlt_loads`` row is written last, in the
same transaction as the data). Write dispositions, staging and merge are the destination's
work; the pipeline passes hints through.

:class:`Pipeline` is a facade: the public API, delegating to the steps (``extract/step.py``,
``normalize/step.py``, ``load/step.py``: each given a small frozen context, not the
pipeline), the ``WorkingFolder`` (state, schemas, lock) and ``recovery`` (what a crash left).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import time
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

from loadstone import current
from loadstone.config import one_reading
from loadstone.destinations.contract import Capabilities, Destination
from loadstone.exceptions import (
    CannotRestorePipelineException,
)
from loadstone.extract.resource_hints import TableHints, check_file_format
from loadstone.extract.step import ExtractContext, ExtractStep
from loadstone.load.step import LoadContext, LoadStep
from loadstone.normalize.step import NormalizeStep, NormalizeStepContext
from loadstone.pipelines import overlap, recovery, run_settings
from loadstone.pipelines.boundary import StepBoundary
from loadstone.pipelines.packages import PipelinePackages
from loadstone.pipelines.pipeline_config import (
    check_pipeline_name,
    default_pipeline_name,
    pipeline_configuration,
)
from loadstone.pipelines.staging import check_staging, destinations_of
from loadstone.pipelines.state_view import PipelineStateView
from loadstone.pipelines.step_calls import PipelineSteps, as_schema, record_run_infos
from loadstone.runtime.load_info import LoadInfo
from loadstone.runtime.progress_displays import progress_callback
from loadstone.runtime.recorder import ProgressCallback, StepRecorder
from loadstone.runtime.refresh import check_refresh
from loadstone.runtime.target import (
    DestinationTarget,
    normalized_dataset_name,
    resolve_destination,
)
from loadstone.runtime.working_folder import (
    WorkingFolder,
    default_pipelines_dir,
    stored_destination,
)
from loadstone.schema import Schema
from loadstone.storage import state as state_module
from loadstone.storage.pipeline_lock import configured_timeout
from loadstone.typing import (
    TAnySchemaColumns,
    TColumnNames,
    TDataItems,
    TLoaderFileFormat,
    TRefreshMode,
    TSchemaContract,
    TTableFormat,
    TWriteDispositionConfig,
)

if TYPE_CHECKING:
    from loadstone.destinations.dataset import Dataset
    from loadstone.destinations.sql_client import SqlClient
    from loadstone.naming import NamingConvention

DEFAULT_NORMALIZER = run_settings.DEFAULT_NORMALIZER
#: the ``_local`` state key a dev-mode pipeline leaves in its folder
DEV_MODE_MARK = "dev_mode"

__all__ = [
    "Pipeline",
    "ProgressCallback",
    "attach",
    "pipeline",
]

#: a destination as the public API takes it: a name (``"duckdb"``) or a destination object
TDestination = str | Destination
_R = TypeVar("_R")


class Pipeline(PipelineStateView, PipelinePackages, PipelineSteps):
    """A named pipeline: its destination and dataset, state, schemas and packages."""

    def __init__(
        self,
        pipeline_name: str,
        destination: TDestination | None = None,
        dataset_name: str | None = None,
        *,
        dev_mode: bool = False,
        pipelines_dir: str | Path | None = None,
        import_schema_path: str | Path | None = None,
        export_schema_path: str | Path | None = None,
        progress: ProgressCallback | None = None,
        lock_timeout: float | None = None,
        refresh: TRefreshMode | None = None,
        spark: object = None,
        pipeline_salt: str | None = None,
        staging: object = None,
    ) -> None:
        check_pipeline_name(pipeline_name)
        self.pipeline_name = pipeline_name
        self._pipelines_path = (
            Path(pipelines_dir).absolute() if pipelines_dir else default_pipelines_dir()
        )
        self.dev_mode = dev_mode
        self.config = pipeline_configuration(pipeline_name, pipeline_salt)  # dlt's, the salt
        self.import_schema_path = Path(import_schema_path) if import_schema_path else None
        self.export_schema_path = Path(export_schema_path) if export_schema_path else None
        self.recorder = StepRecorder(progress)
        #: the SparkSession normalize runs on (classic or Connect); None: from configuration
        self.spark = spark
        #: seconds to wait for another run of this pipeline (None: ``pipeline.lock_timeout``)
        self.lock_timeout = lock_timeout
        #: applied to every run that does not pass its own ``refresh=``, as in dlt
        self.refresh = check_refresh(refresh)
        self.boundary = StepBoundary(pipeline_name, self.recorder, self)
        self.folder = WorkingFolder(
            self._pipelines_path,
            pipeline_name,
            import_schema_path=self.import_schema_path,
            export_schema_path=self.export_schema_path,
        )
        # dev mode starts from scratch (no state, schemas, packages); so does the first pipeline
        # after a dev-mode one, as dlt's: the dev run's cursors would skip rows of this dataset
        self.folder.open(wipe=dev_mode, lock_timeout=self._lock_timeout)
        if not dev_mode and self.folder.local_state().get(DEV_MODE_MARK):
            self.folder.open(wipe=True, lock_timeout=self._lock_timeout)
        if dev_mode:
            self.folder.local_state()[DEV_MODE_MARK] = True
        stored = stored_destination(self.state)
        self.destination, self.staging = destinations_of(destination, stored, staging)
        self._explicit_dataset_name = dataset_name
        self._dataset_name: str | None = None
        self._dev_suffix = (
            _dt.datetime.now(tz=_dt.timezone.utc).strftime("%Y%m%d%H%M%S") if dev_mode else None
        )

    # -- names ----------------------------------------------------------------------------
    @property
    def pipelines_dir(self) -> str:
        """The folder of the pipelines' working folders, a string as dlt's (made absolute)."""
        return str(self._pipelines_path)

    @property
    def default_schema(self) -> Schema:
        """The pipeline's default schema (the first one it extracted with)."""
        name = self.default_schema_name
        schemas = self.schemas
        if name is None:
            name = self.pipeline_name
            if name not in schemas:
                schemas[name] = self._target().new_schema(name, name)
        if name not in schemas:
            # its file was deleted (damaged): the next run takes it from the destination
            return self._target().new_schema(name, name)
        return schemas[name]

    @property
    def capabilities(self) -> Capabilities:
        return self.destination.capabilities

    def naming_for(self, schema: Schema) -> NamingConvention:
        """The schema's naming convention sized to the destination's identifier limits."""
        return self._target().naming_for(schema)

    @property
    def naming(self) -> NamingConvention:
        """The default schema's naming convention in this destination (dlt's ``naming``)."""
        return self.naming_for(self.default_schema)

    @property
    def dataset_name(self) -> str:
        """The dataset the pipeline loads into, as given (dev mode adds a time suffix), as
        dlt's; the destination names it through the naming convention
        (:attr:`destination_dataset_name`)."""
        if self._dataset_name is None:
            stored = None if self.dev_mode else self.state.get("dataset_name")
            base = (
                self._explicit_dataset_name
                or stored
                or f"{self.pipeline_name}{self.DEFAULT_DATASET_SUFFIX}"
            )
            self._dataset_name = f"{base}_{self._dev_suffix}" if self._dev_suffix else base
        return self._dataset_name

    @property
    def destination_dataset_name(self) -> str:
        """The dataset's name in the destination: :attr:`dataset_name` through the default
        schema's naming convention, unless configuration switches that off (as dlt)."""
        return normalized_dataset_name(
            self.destination, self.dataset_name, lambda: self.naming_for(self._schema_in_use())
        )

    def _schema_in_use(self) -> Schema:
        """The default schema; before a pipeline has one, a new schema that is not kept (as
        dlt's, a new pipeline's ``schemas`` hold only what its runs made)."""
        if self.default_schema_name is None:
            return self._target().new_schema(self.pipeline_name, self.pipeline_name)
        return self.default_schema

    def _as_pipeline(self) -> Pipeline:
        return self

    # -- the steps' contexts --------------------------------------------------------------
    def _target(self) -> DestinationTarget:
        """The destination and dataset as they are now (``run()`` may change them)."""
        return DestinationTarget(
            self.destination,
            self.pipeline_name,
            lambda: self.destination_dataset_name,
            lambda: self.dataset_name,
        )

    def _extract_step(self) -> ExtractStep:
        return ExtractStep(
            ExtractContext(
                self.folder,
                self._target(),
                self.recorder,
                scope=lambda state, source: current.extract_context(self, state, source),
                on_package=self.boundary.package_started,
            )
        )

    def _normalize_step(self) -> NormalizeStep:
        context = NormalizeStepContext(
            self.folder, self._target(), self.recorder, self.spark, self.boundary.package_started
        )
        return NormalizeStep(context)

    def _load_step(self) -> LoadStep:
        return LoadStep(
            LoadContext(self.folder, self._target(), self.recorder, self.boundary.package_started)
        )

    # -- the lock -------------------------------------------------------------------------
    @property
    def progress(self) -> ProgressCallback | None:
        return self.recorder.progress

    def _lock_timeout(self) -> float:
        return configured_timeout(self.lock_timeout)

    def _locked(self, timeout: float | None = None) -> contextlib.AbstractContextManager[None]:
        """Hold the pipeline's lock (see :mod:`loadstone.storage.pipeline_lock`)."""
        return self.folder.locked(
            self._lock_timeout() if timeout is None else timeout,
            on_wait=lambda message: self.recorder.notice("lock", message),
        )

    # -- run ------------------------------------------------------------------------------
    @one_reading()  # one run reads the configuration files once (see loadstone.config)
    def run(
        self,
        data: TDataItems = None,
        *,
        destination: TDestination | None = None,
        staging: object = None,
        dataset_name: str | None = None,
        credentials: object = None,
        table_name: str | None = None,
        write_disposition: TWriteDispositionConfig | None = None,
        columns: TAnySchemaColumns | None = None,
        primary_key: TColumnNames | None = None,
        schema: Schema | None = None,
        loader_file_format: TLoaderFileFormat | None = None,
        table_format: TTableFormat | None = None,
        schema_contract: TSchemaContract | None = None,
        refresh: TRefreshMode | None = None,
        merge_key: TColumnNames | None = None,
        spark: object = None,
        reload: bool = False,
    ) -> LoadInfo:
        """Finish pending packages, then extract, normalize and load ``data``.

        ``spark``: a SparkSession (classic or Spark Connect) to normalize on, from now on.
        Holds the pipeline's lock throughout. A file input a pending package holds (same
        path, size and mtime) finishes that package; one loaded unchanged before is skipped
        with a note unless ``reload=True`` (CLI ``--reload``), ``refresh`` or ``replace``:
        running a killed command again loads each row once. Settings are parsed before any
        work. A failure raises :class:`PipelineStepFailed` naming the step and package.
        """
        check_refresh(refresh)
        check_file_format(loader_file_format)
        self._configure_run(destination, credentials, dataset_name, spark)
        self._check_staging_and_format(staging, loader_file_format)
        self.recorder.reset()
        started, trace = time.time(), self.folder.trace_path
        first_run = self.first_run
        # parsed here, once: a bad hint fails the extract step before anything is touched
        hints: TableHints = self.boundary.run(
            "extract",
            lambda: TableHints(
                write_disposition=write_disposition,
                columns=columns,
                primary_key=primary_key,
                schema_contract=schema_contract,
                merge_key=merge_key,
                file_format=loader_file_format,
                table_format=table_format,
            ),
        )
        try:
            with self._locked():
                info = self._run_locked(data, table_name, hints, as_schema(schema), refresh, reload)
                record_run_infos(self, first_run)  # dlt's trace holds the step infos
        except BaseException as error:
            self.recorder.save_trace(trace, self.pipeline_name, started, error=error)
            raise
        self.recorder.save_trace(trace, self.pipeline_name, started, info=info)
        return info

    def _check_staging_and_format(
        self, staging: object, loader_file_format: TLoaderFileFormat | None
    ) -> None:
        """A refused ``staging=`` (not kept) or ``loader_file_format=`` fails before any work."""
        self.staging = check_staging(self.destination, staging, self.staging)
        self.destination.capabilities.check_loader_file_format(
            self.destination.name, loader_file_format
        )

    def _configure_run(
        self, destination: object, credentials: object, dataset_name: str | None, spark: object
    ) -> None:
        """What ``run()`` arguments change for this and later runs; fails early without a
        loader or with a bad setting (all are parsed here, before any work)."""
        self.boundary.run("extract", lambda: run_settings.check_all(self.lock_timeout))
        if spark is not None:
            self.spark = spark
        self._retarget(destination, credentials, dataset_name)
        self.destination.require_loader()
        self.boundary.run("extract", self.destination.check_settings)

    def _run_locked(
        self,
        data: TDataItems,
        table_name: str | None,
        hints: TableHints,
        schema: Schema | None,
        refresh: str | None,
        reload: bool = False,
    ) -> LoadInfo:
        self.boundary.run("sync", self._restore_from_destination)
        recovery.drop_incomplete_extracts(self.folder)
        self.folder.adopt_package_state()
        data = recovery.without_extracted_inputs(self.folder, data, self.recorder)
        if not (reload or self._replaces(table_name, hints, refresh)):
            data = recovery.without_loaded_inputs(self.folder, data, self.recorder)
        # work left behind (a crash, or extract()/normalize() called alone) is finished and the
        # run returns, as dlt's does: the data it was given is not extracted (run again)
        self.boundary.run("normalize", self._renormalize_damaged)
        if recovery.has_normalized(self.folder):
            info = self.boundary.run("load", lambda: self._load_step().load_pending())
            if data is not None:
                self.recorder.notice("load", recovery.PENDING_FIRST)
        elif data is not None:
            self.boundary.run(
                "extract", lambda: self._extract_hinted(data, table_name, hints, schema, refresh)
            )
            # the load may begin while normalize runs (``load.overlap_normalize``)
            info = overlap.normalize_and_load(
                self._normalize_step(), self._load_step(), self.boundary
            )
        else:
            info = self._load_step().new_info()
        info.steps = dict(self.recorder.steps)
        info.pipeline = self
        return info

    def _replaces(self, table_name: str | None, hints: TableHints, refresh: str | None) -> bool:
        """Whether the run replaces what its inputs loaded before (then they load again)."""
        if refresh is not None or self.refresh is not None:
            return True
        disposition = hints.stored().get("write_disposition")
        if disposition is None and table_name is not None and self.default_schema_name:
            table = self.default_schema.tables.get(table_name)
            disposition = table.write_disposition if table is not None else None
        return bool(disposition == "replace")

    def _restore_from_destination(self) -> None:
        """Without a local folder, take state and schemas from the destination (if any)."""
        if self.dev_mode:
            return
        target = self._target()
        if recovery.restore_from_destination(self.folder, target, self._schema_in_use):
            self._dataset_name = None
            self.folder.save_state(target)

    def _retarget(self, destination: object, credentials: object, dataset_name: str | None) -> None:
        """Take a new destination, credentials or dataset name (None: keep the current)."""
        if destination is not None:
            self.destination = resolve_destination(destination)
        if credentials is not None:
            self.destination = self.destination.configured(credentials=credentials)
        if dataset_name is not None:
            self._explicit_dataset_name = dataset_name
            self._dataset_name = None

    def sync_destination(
        self, destination: object = None, staging: object = None, dataset_name: str | None = None
    ) -> None:
        """dlt's: switch to the arguments' destination, staging and dataset, then take the
        destination's state and schemas (when newer) and save the state naming them."""
        from loadstone.pipelines.staging import check_staging

        self._retarget(destination, None, dataset_name)
        self.staging = check_staging(self.destination, staging, self.staging)
        with self._locked():
            self.folder.had_local_state = False
            self._restore_from_destination()
            self.folder.save_state(self._target())

    def drop(self, pipeline_name: str | None = None) -> Pipeline:
        """Delete the local working folder (state, schemas, packages, trace) and start again
        from nothing, as dlt's ``drop``: this pipeline, or (``pipeline_name``, another name) a
        new one configured as this one. The destination keeps what was loaded."""
        self._drop_folder()
        if pipeline_name not in (None, self.pipeline_name):
            return Pipeline(
                str(pipeline_name),
                self._destination_here(),
                self._explicit_dataset_name,
                pipelines_dir=self._pipelines_path,
                import_schema_path=self.import_schema_path,
                export_schema_path=self.export_schema_path,
                lock_timeout=self.lock_timeout,
                refresh=cast("TRefreshMode | None", self.refresh),
                spark=self.spark,
                staging=self.staging,
            )
        self.folder = WorkingFolder(
            self._pipelines_path,
            self.pipeline_name,
            import_schema_path=self.import_schema_path,
            export_schema_path=self.export_schema_path,
        )
        self.folder.open(wipe=False, lock_timeout=self._lock_timeout)
        self._dataset_name = None
        return self

    def _destination_here(self) -> Destination:
        """The destination bound to where this pipeline's data is (its DuckDB file), as dlt's."""
        stored = self.destination.stored_at(self.pipeline_name)
        if stored is None:
            return self.destination
        return self.destination.configured(credentials=stored.location)

    def dataset(
        self, schema: Schema | str | None = None, *, dataset_name: str | None = None
    ) -> Dataset:
        """Query what was loaded (``schema``: a Schema or a schema's name, as dlt's)."""
        from loadstone.destinations.dataset import Dataset, SchemaOwner

        name = dataset_name or self.destination_dataset_name
        if schema is None:  # the other schemas' tables are listed too, as dlt's
            others = [s for n, s in self.schemas.items() if n != self.default_schema_name]
            return Dataset(self, name, others)
        named = schema if isinstance(schema, Schema) else self.schemas.get(schema) or Schema(schema)
        return Dataset(SchemaOwner(self, named), name)

    def sql_client(self) -> SqlClient:
        """A SQL client on the pipeline's dataset (context manager, like dlt's)."""
        from loadstone.destinations.sql_client import SqlClient

        return SqlClient(self, self.destination_dataset_name)

    def __repr__(self) -> str:
        return (
            f"Pipeline(pipeline_name={self.pipeline_name!r}, destination="
            f"{self.destination.name!r}, dataset_name={self.dataset_name!r})"
        )


def pipeline(
    pipeline_name: str | None = None,
    pipelines_dir: str | Path | None = None,
    pipeline_salt: str | None = None,
    destination: TDestination | None = None,
    staging: object = None,
    dataset_name: str | None = None,
    import_schema_path: str | Path | None = None,
    export_schema_path: str | Path | None = None,
    full_refresh: bool | None = None,
    dev_mode: bool = False,
    refresh: TRefreshMode | None = None,
    progress: ProgressCallback | str | None = None,
    lock_timeout: float | None = None,
    spark: object = None,
) -> Pipeline:
    """Make (or reopen) the pipeline ``pipeline_name``, like ``dlt.pipeline``; without any
    argument, the pipeline made last (dlt's active one), if any.

    Without a name the pipeline is ``dlt_<script file name>``, as dlt names it, so a ported
    script opens the same folder and database. ``full_refresh`` is dlt's old name of
    ``dev_mode``. A progress *name* (``"log"``, ``"tqdm"``...) selects dlt's display
    libraries (:mod:`loadstone.runtime.progress_displays`); a callable gets loadstone's events.
    """
    given = (pipeline_name, pipelines_dir, pipeline_salt, destination, staging, dataset_name)
    others = (import_schema_path, export_schema_path, full_refresh, refresh, progress, spark)
    if not dev_mode and lock_timeout is None and all(v is None for v in (*given, *others)):
        if (active := current.active()) is not None:
            return cast(Pipeline, active)
    if pipeline_name is None:
        pipeline_name = default_pipeline_name()
    made = Pipeline(
        pipeline_name,
        destination,
        dataset_name,
        dev_mode=bool(dev_mode or full_refresh),
        pipelines_dir=pipelines_dir,
        import_schema_path=import_schema_path,
        export_schema_path=export_schema_path,
        progress=progress_callback(progress, pipeline_name),
        lock_timeout=lock_timeout,
        refresh=refresh,
        spark=spark,
        pipeline_salt=pipeline_salt,
        staging=staging,
    )
    made.activate()  # dlt's active pipeline: the one made last
    return made


def run(
    data: TDataItems,
    *,
    destination: TDestination | None = None,
    staging: object = None,
    dataset_name: str | None = None,
    credentials: object = None,
    table_name: str | None = None,
    write_disposition: TWriteDispositionConfig | None = None,
    columns: TAnySchemaColumns | None = None,
    schema: Schema | None = None,
    loader_file_format: TLoaderFileFormat | None = None,
    schema_contract: TSchemaContract | None = None,
    refresh: TRefreshMode | None = None,
) -> LoadInfo:
    """``loadstone.run(data, destination=...)``: dlt's ``dlt.run``, the default pipeline's
    :meth:`Pipeline.run` (the pipeline named after the running script)."""
    return pipeline().run(
        data,
        destination=destination,
        staging=staging,
        dataset_name=dataset_name,
        credentials=credentials,
        table_name=table_name,
        write_disposition=write_disposition,
        columns=columns,
        schema=schema,
        loader_file_format=loader_file_format,
        schema_contract=schema_contract,
        refresh=refresh,
    )


def attach(
    pipeline_name: str | None = None,
    pipelines_dir: str | Path | None = None,
    pipeline_salt: str | None = None,
    destination: TDestination | None = None,
    staging: object = None,
    progress: ProgressCallback | str | None = None,
    dataset_name: str | None = None,
) -> Pipeline:
    """Open an existing pipeline from its working folder (``dlt.attach``); error if none."""
    name = pipeline_name or default_pipeline_name()
    base = Path(pipelines_dir).absolute() if pipelines_dir else default_pipelines_dir()
    if state_module.load_local(base / name) is None:
        raise CannotRestorePipelineException(name, base)
    attached = Pipeline(
        name,
        destination,
        dataset_name,
        pipelines_dir=base,
        progress=progress_callback(progress, name),
        pipeline_salt=pipeline_salt,
        staging=staging,
    )
    attached.activate()
    return attached
