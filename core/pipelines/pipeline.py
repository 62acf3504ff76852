"""The pipeline: extract -> normalize -> load, with state, schemas and crash recovery.

``loadstone.pipeline(...)`` mirrors ``dlt.pipeline(...)``. A pipeline owns a working folder
``<pipelines_dir>/<pipeline_name>/`` with its state, its schemas, its load packages and the
trace of its last run. Every step works package by package and records its end in the
package's state (see :mod:`loadstone.storage.load_package`), so a run killed at any moment is
finished by the next one: normalize again what was extracted, load what was normalized, and
skip what the destination already committed (its ``_dlt_loads`` row is written last, in the
same transaction as the data). Write dispositions, staging and merge are the destination's
work; the pipeline passes hints through.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import os
import shutil
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import attrs

from loadstone import config, current
from loadstone.destinations.contract import Destination
from loadstone.exceptions import (
    BadRecordError,
    CannotRestorePipelineException,
    CorruptFileError,
    ExtractError,
    LoadstoneError,
    NormalizeError,
    PackageDataError,
    PipelineConfigError,
    PipelineStepFailed,
    one_line,
    os_error_text,
)
from loadstone.extract.decorators import is_source_factory
from loadstone.extract.extractor import ExtractResult, input_files_of
from loadstone.extract.extractor import extract as extract_data
from loadstone.extract.resource_hints import TableHints, check_file_format
from loadstone.extract.source import Source
from loadstone.normalize.checks import check_bound_columns
from loadstone.normalize.contract import NormalizeContext, NormalizeResult
from loadstone.pipelines import run_settings
from loadstone.pipelines.load_info import LoadInfo, PackageInfo, PipelineTrace, StepInfo
from loadstone.pipelines.recorder import ProgressCallback, StepRecorder
from loadstone.pipelines.refresh import (
    apply_to_destination,
    check_refresh,
    plan_refresh,
    reset_state,
    resource_tables,
)
from loadstone.schema import Schema, Table
from loadstone.storage import package_storage
from loadstone.storage import state as state_module
from loadstone.storage.json_files import read_json_object, write_json_atomic

if TYPE_CHECKING:
    from loadstone.naming import NamingConvention

from loadstone.exceptions import PackageIntegrityError
from loadstone.storage.load_package import (
    EXTRACTED,
    EXTRACTING,
    LOADED,
    NORMALIZED,
    InputFingerprint,
    LoadPackage,
    iter_pending,
    list_packages,
)
from loadstone.storage.loaded_inputs import LoadedInputs
from loadstone.storage.pipeline_lock import (
    LockStatus,
    PipelineLock,
    configured_timeout,
    lock_status,
    read_holder,
)

DEFAULT_DESTINATION = "duckdb"
DEFAULT_NORMALIZER = run_settings.DEFAULT_NORMALIZER
TRACE_FILE = "trace.json"
#: ``package.json`` key of a package set aside: why it could not be normalized
FAILURE_KEY = "failure"

__all__ = [
    "Pipeline",
    "ProgressCallback",
    "attach",
    "pipeline",
]


_Method = TypeVar("_Method", bound=Callable[..., Any])


def step_boundary(step: str) -> Callable[[_Method], _Method]:
    """Make a public step method (``extract``/``normalize``/``load``) raise
    :class:`PipelineStepFailed` for any failure, as dlt's do when called one by one."""

    def decorate(method: _Method) -> _Method:
        @functools.wraps(method)
        def wrapped(self: Pipeline, *args: Any, **kwargs: Any) -> Any:
            return self._step(step, lambda: method(self, *args, **kwargs))

        return wrapped  # type: ignore[return-value]

    return decorate


# --------------------------------------------------------------------------------------
# schemas
# --------------------------------------------------------------------------------------
def _new_schema(name: str, naming: str | None) -> Schema:
    return Schema(name) if naming is None else Schema(name, naming=naming)


def _schema_naming_name(schema: Schema) -> str | None:
    """The naming convention a schema fixes: any it names once it has data tables, else a
    non-default one (``Schema(naming=...)`` in code). None leaves the choice to config and
    the destination's preference.
    """
    name = schema.naming_name
    if schema.data_tables(include_incomplete=True) or name != "snake_case":
        return name
    return None


# --------------------------------------------------------------------------------------
# the pipeline
# --------------------------------------------------------------------------------------
#: how dlt names a destination's type in the pipeline state
DESTINATION_TYPE_PREFIX = "dlt.destinations."


def _stored_destination(state: Mapping[str, Any]) -> str | None:
    """The destination a saved state names (its type; older states named it directly)."""
    stored = state.get("destination_type") or state.get("destination_name")
    if isinstance(stored, str):
        return stored.removeprefix(DESTINATION_TYPE_PREFIX)
    return None


def _add_state_table(schema: Any) -> None:
    """``_dlt_pipeline_state`` belongs to the schema (and the copy stored in ``_dlt_version``)
    from the first load on, with ``seen-data``, as dlt records it: every load writes its row."""
    import attrs

    from loadstone.schema.schema import state_table

    name = schema.state_table_name
    if schema.has_table(name):
        return
    table = state_table(name)
    schema.update_table(
        attrs.evolve(table, extra={**table.extra, "x-normalizer": {"seen-data": True}})
    )


def _evolved_schema(result: NormalizeResult) -> Schema:
    """The schema a normalizer evolved: ours return the ``Schema`` they were given; a stored
    dict from a third-party normalizer is read once, here, so the pipeline holds no dict."""
    schema = result.schema
    return schema if isinstance(schema, Schema) else Schema.from_dict(schema)


def _naming_configured(source_name: str | None) -> bool:
    """True when configuration (env or config.toml) names a convention for this source."""
    candidates: list[tuple[str, ...]] = [("schema", "naming")]
    if source_name:
        candidates.insert(0, ("sources", source_name, "schema", "naming"))
    return config.resolve(*candidates, default=None) is not None


#: what a run that found pending packages says (it loads them and returns, as dlt's run)
PENDING_FIRST = (
    "pending load packages were loaded first and the run stopped there, as dlt's run does: "
    "the data given to this run was not extracted; run again to load it"
)


def _replaced_without_data(package: LoadPackage, schema: Any) -> dict[str, list[str]]:
    """Root tables a ``replace`` resource of the package fills that got no rows this time:
    loaded with no files, so they are emptied, as dlt empties them."""
    from loadstone.schema.hints import disposition_of

    naming = schema.naming
    empty: dict[str, list[str]] = {}
    for source_name, hints in package.table_hints().items():
        name = naming.normalize_tables_path(source_name)
        table = schema.tables.get(name)
        if table is None or table.parent is not None:
            continue
        if (disposition_of(hints)[0] or table.write_disposition) == "replace":
            empty[name] = []
    return empty


def _replaces_a_table(package: LoadPackage) -> bool:
    from loadstone.schema.hints import disposition_of

    return any(disposition_of(h)[0] == "replace" for h in package.table_hints().values())


def _row_counts(tables: Mapping[str, Any]) -> dict[str, int]:
    return {name: info["row_count"] for name, info in tables.items()}


def _state_row_count(package: LoadPackage, schema: Any) -> dict[str, int]:
    """The state row a package carries, counted as dlt counts it (one row, or none)."""
    if not package.meta.get("carries_state", True):
        return {}
    return {schema.state_table_name: 1}


def _switch_naming(schema: Schema, naming: NamingConvention) -> None:
    """Move a schema to a newly configured naming convention.

    Fails (:class:`~loadstone.schema.naming_change.NamingChangeError`, naming the tables and
    identifiers) when tables that already hold data would get other identifiers: that would
    make second tables and columns next to the loaded ones. Tables without data are renamed.
    """
    if schema.naming_name == naming.name():
        return
    from loadstone.schema.naming_change import apply_naming_change

    with_data = [
        table.name for table in schema.data_tables(seen_data_only=True, include_incomplete=True)
    ]
    apply_naming_change(schema, naming, with_data)


def default_pipelines_dir() -> Path:
    """``$LOADSTONE_HOME/pipelines`` (default ``~/.loadstone/pipelines``)."""
    return config.home_dir() / "pipelines"


def _resolve_destination(destination: Any) -> Any:
    from loadstone.plugin_manager import get_destination

    if destination is None:
        destination = DEFAULT_DESTINATION
    if isinstance(destination, str):
        return get_destination(destination)
    if isinstance(destination, Destination):
        return destination
    raise PipelineConfigError(
        f"destination must be a name (e.g. 'duckdb') or a destination object, got {destination!r}"
    )


class Pipeline:
    """A named pipeline: its destination and dataset, state, schemas and packages."""

    def __init__(
        self,
        pipeline_name: str,
        destination: Any = None,
        dataset_name: str | None = None,
        *,
        dev_mode: bool = False,
        pipelines_dir: str | Path | None = None,
        import_schema_path: str | Path | None = None,
        export_schema_path: str | Path | None = None,
        progress: ProgressCallback | None = None,
        lock_timeout: float | None = None,
        refresh: str | None = None,
        spark: Any = None,
    ) -> None:
        if not pipeline_name or not isinstance(pipeline_name, str):
            raise PipelineConfigError("pipeline_name must be a non-empty string")
        if "/" in pipeline_name or "\\" in pipeline_name or pipeline_name in (".", ".."):
            raise PipelineConfigError(
                f"pipeline_name {pipeline_name!r} cannot contain path separators"
            )
        self.pipeline_name = pipeline_name
        self.pipelines_dir = (
            Path(pipelines_dir).absolute() if pipelines_dir else default_pipelines_dir()
        )
        self.working_dir = self.pipelines_dir / pipeline_name
        self.dev_mode = dev_mode
        self.import_schema_path = Path(import_schema_path) if import_schema_path else None
        self.export_schema_path = Path(export_schema_path) if export_schema_path else None
        self.recorder = StepRecorder(progress)
        #: the SparkSession normalize runs on (classic or Connect); None: from configuration
        self.spark = spark
        self._lock = PipelineLock(self.pipelines_dir, pipeline_name)
        #: seconds to wait for another run of this pipeline (None: ``pipeline.lock_timeout``)
        self.lock_timeout = lock_timeout
        #: applied to every run that does not pass its own ``refresh=``, as in dlt
        self.refresh = check_refresh(refresh)
        self._active_load_id: str | None = None
        if dev_mode and self.working_dir.exists():
            # dev mode starts from scratch: no state, no schemas, no pending packages
            self._lock.acquire(self._lock_timeout())
            try:
                shutil.rmtree(self.working_dir)
            finally:
                self._lock.release()
        loaded = state_module.load_local(self.working_dir)
        self._had_local_state = loaded is not None
        self._state: dict[str, Any] = loaded or state_module.new_state(pipeline_name)
        self.schemas: dict[str, Any] = {}
        self._load_local_schemas()
        self._seen_on_disk = self._disk_signature()

        self.destination = _resolve_destination(
            destination if destination is not None else _stored_destination(self._state)
        )
        self._explicit_dataset_name = dataset_name
        self._dataset_name: str | None = None
        self._dev_suffix = (
            _dt.datetime.now(tz=_dt.timezone.utc).strftime("%Y%m%d%H%M%S") if dev_mode else None
        )

    # -- names ----------------------------------------------------------------------------
    @property
    def state(self) -> dict[str, Any]:
        return self._state

    @property
    def first_run(self) -> bool:
        return bool(self._state.get("_local", {}).get("first_run", True))

    @property
    def schema_names(self) -> list[str]:
        """Names of the pipeline's schemas, the default first (dlt's ``schema_names``)."""
        return list(self._state.get("schema_names") or [])

    @property
    def default_schema_name(self) -> str | None:
        return self._state.get("default_schema_name")

    @property
    def default_schema(self) -> Any:
        """The pipeline's default schema (the first one it extracted with)."""
        name = self.default_schema_name
        if name is None:
            name = self.pipeline_name
            if name not in self.schemas:
                self.schemas[name] = _new_schema(name, self._resolve_naming_name(name, None))
        if name not in self.schemas:
            # its file was deleted (damaged): the next run takes it from the destination
            return _new_schema(name, self._resolve_naming_name(name, None))
        return self.schemas[name]

    @property
    def capabilities(self) -> Any:
        return self.destination.capabilities

    def _resolve_naming_name(self, source_name: str | None, schema: Any) -> str:
        """Code (the destination factory) first, then configuration, then the schema's own
        convention (a schema keeps the one it was created with), then the destination's."""
        explicit = self.destination.naming_convention
        if explicit is None and schema is not None and not _naming_configured(source_name):
            explicit = _schema_naming_name(schema)
        return config.resolve_naming(
            source_name,
            explicit=explicit,
            destination_preferred=self.capabilities.preferred_naming,
        )

    def naming_for(self, schema: Schema) -> NamingConvention:
        """The schema's naming convention sized to the destination's identifier limits."""
        from loadstone.plugin_manager import naming_convention

        name = self._resolve_naming_name(schema.name, schema)
        return naming_convention(name, max_length=self.capabilities.max_identifier_length)

    @property
    def dataset_name(self) -> str:
        """The dataset the pipeline loads into (normalized; dev mode adds a time suffix)."""
        if self._dataset_name is None:
            base = (
                self._explicit_dataset_name
                or (None if self.dev_mode else self._state.get("dataset_name"))
                or f"{self.pipeline_name}_dataset"
            )
            if self._dataset_name_normalization():
                naming = self.naming_for(self.default_schema)
                base = naming.normalize_table_identifier(base)
            if self._dev_suffix:
                base = f"{base}_{self._dev_suffix}"
            self._dataset_name = base
        return self._dataset_name

    def _dataset_name_normalization(self) -> bool:
        return config.get_bool(
            [
                f"destination.{self.destination.name}.enable_dataset_name_normalization",
                "destination.enable_dataset_name_normalization",
            ],
            True,
        )

    @property
    def packages_dir(self) -> Path:
        return self.working_dir / "packages"

    @property
    def schemas_dir(self) -> Path:
        return self.working_dir / "schemas"

    # -- local persistence ----------------------------------------------------------------
    def _load_local_schemas(self) -> None:
        if not self.schemas_dir.is_dir():
            return
        repair = (
            "delete it: the next run takes the schema from the destination (or from a "
            "pending package)"
        )
        for path in sorted(self.schemas_dir.glob("*.schema.json")):
            data = read_json_object(path, repair=repair, required=("name",))
            try:
                self.schemas[data["name"]] = Schema.from_dict(data)
            except (LoadstoneError, ValueError, KeyError, TypeError) as error:
                raise CorruptFileError(path, one_line(error), repair) from None

    def _save_schema(self, schema: Schema) -> None:
        self.schemas_dir.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.schemas_dir / f"{schema.name}.schema.json", schema.to_dict())
        self.schemas[schema.name] = schema
        names = list(self._state.get("schema_names") or [])
        if schema.name not in names:
            names.append(schema.name)
            self._state["schema_names"] = names
        if not self._state.get("default_schema_name"):
            self._state["default_schema_name"] = schema.name
        if self.export_schema_path is not None:
            from loadstone.schema.files import export_schema

            self.export_schema_path.mkdir(parents=True, exist_ok=True)
            export_schema(schema, self.export_schema_path)

    def _seed_import_schema(self, package: LoadPackage, schema: Schema) -> None:
        """An empty import folder gets the schema of the first extract, as dlt writes it for
        the user to edit: the tables the package fills, with their resource and disposition
        (no columns yet). It is read back only while the pipeline has no tables."""
        from loadstone.schema.files import export_schema
        from loadstone.schema.hints import disposition_of

        folder = self.import_schema_path
        if folder is None or self._imported_schema(schema.name) is not None:
            return
        seed = schema.copy()
        naming = seed.naming
        for source_name, hints in package.table_hints().items():
            name = naming.normalize_tables_path(source_name)
            if not seed.has_table(name):
                disposition = disposition_of(hints)[0] or "append"
                seed.update_table(Table(name, write_disposition=disposition, resource=source_name))
        _add_state_table(seed)
        folder.mkdir(parents=True, exist_ok=True)
        export_schema(seed, folder)

    def _stamp_state(self) -> None:
        """Name the pipeline, destination and dataset in the state as dlt does (the destination
        by its type, ``dlt.destinations.<name>``; ``destination_name`` is a custom name, None
        here) and bump its version when the content changed."""
        self._state["pipeline_name"] = self.pipeline_name
        self._state["destination_type"] = f"{DESTINATION_TYPE_PREFIX}{self.destination.name}"
        self._state["destination_name"] = None
        self._state["dataset_name"] = self.dataset_name
        if not self._state.get("sources"):
            self._state.pop("sources", None)
        state_module.bump_version(self._state)

    def _after_extract(self, package: LoadPackage, schema: Schema, state_key: str) -> None:
        """Stamp the state an extract reached (dlt resets a replaced resource's state, so its
        source has a state, maybe empty, from the first replace on); seed the import folder."""
        if _replaces_a_table(package):
            self._state.setdefault("sources", {}).setdefault(state_key, {})
        self._stamp_state()
        self._seed_import_schema(package, schema)

    def _state_changed_since_extract(self) -> bool:
        """Whether a new package carries the state to the destination: as dlt, only when it
        changed since the last package that did (``_local._last_extracted_hash``)."""
        local = self._state.setdefault("_local", {})
        changed = local.get("_last_extracted_hash") != self._state.get("_version_hash")
        local["_last_extracted_hash"] = self._state.get("_version_hash")
        return changed

    def _register_schema(self, schema: Any) -> None:
        """Name a schema in the state (before the state is stamped: one version per run)."""
        name = schema.name
        self.schemas[name] = schema
        names = list(self._state.get("schema_names") or [])
        if name not in names:
            self._state["schema_names"] = [*names, name]
        if not self._state.get("default_schema_name"):
            self._state["default_schema_name"] = name

    def _save_state(self) -> None:
        self._stamp_state()
        state_module.save_local(self.working_dir, self._state)

    def _adopt_package_state(self) -> None:
        """Take the state a pending package carries when it is newer than the local state."""
        for package in iter_pending(self.packages_dir):
            carried = package.meta.get("pipeline_state")
            if carried and int(carried.get("_state_version", 0)) > int(
                self._state.get("_state_version", 0)
            ):
                local = self._state.get("_local", {})
                self._state = dict(carried)
                self._state["_local"] = {**carried.get("_local", {}), **local}
                state_module.save_local(self.working_dir, self._state)

    # -- schema for a package ---------------------------------------------------------------
    def _imported_schema(self, name: str) -> Any | None:
        """``<import_schema_path>/<name>.schema.yaml`` when the pipeline was given that folder."""
        if self.import_schema_path is None:
            return None
        from loadstone.schema.files import import_schema

        return import_schema(name, self.import_schema_path)

    def _schema_for_extract(self, name: str, provided: Any | None) -> Any:
        """The schema a new package of ``name`` uses: stored, imported or from code."""
        stored = self.schemas.get(name)
        imported = self._imported_schema(name)
        if imported is not None and (
            stored is None or not stored.data_tables(include_incomplete=True)
        ):
            stored = imported
        if stored is None:
            schema = provided if provided is not None else _new_schema(name, None)
            naming = self._resolve_naming_name(name, schema)
            if isinstance(schema, Schema) and schema.naming_name != naming:
                schema.set_naming(naming)
            return schema
        if provided is None:
            return stored
        # settings (detections, hints, preferred types) and declared tables come from code;
        # a stored dict given as ``schema=`` is read once, here
        code = provided if isinstance(provided, Schema) else Schema.from_dict(provided)
        return stored.with_code_declarations(code)

    # -- the lock -------------------------------------------------------------------------
    @property
    def progress(self) -> ProgressCallback | None:
        return self.recorder.progress

    def _lock_timeout(self) -> float:
        return configured_timeout(self.lock_timeout)

    @contextlib.contextmanager
    def _locked(self, timeout: float | None = None) -> Iterator[None]:
        """Hold the pipeline's lock (see :mod:`loadstone.storage.pipeline_lock`)."""
        outermost = not self._lock.held
        self._lock.acquire(
            self._lock_timeout() if timeout is None else timeout,
            on_wait=lambda message: self.recorder.notice("lock", message),
        )
        try:
            if outermost:
                self._refresh_from_disk()
            yield
        finally:
            self._lock.release()

    def _refresh_from_disk(self) -> None:
        """Take the state and schemas another process saved since this object read them.

        A run that waited for the lock would otherwise save its stale copy over the newer
        state of the run it waited for.
        """
        if self._disk_signature() == self._seen_on_disk:
            return
        on_disk = state_module.load_local(self.working_dir)
        if on_disk is not None:
            self._state = on_disk
            self._had_local_state = True
        self._load_local_schemas()

    def _disk_signature(self) -> tuple[tuple[str, int, int], ...]:
        """(name, mtime, size) of the state and schema files: changes when anyone saves them."""
        paths = [self.working_dir / state_module.STATE_FILE]
        if self.schemas_dir.is_dir():
            paths += sorted(self.schemas_dir.glob("*.schema.json"))
        found = []
        for path in paths:
            with contextlib.suppress(OSError):
                stat = path.stat()
                found.append((path.name, stat.st_mtime_ns, stat.st_size))
        return tuple(found)

    @property
    def is_running_elsewhere(self) -> bool:
        """Whether another process holds this pipeline's lock right now."""
        return not self._lock.held and self.lock_status.running

    @property
    def lock_status(self) -> LockStatus:
        """Whether the lock is held, and whether its recorded holder is alive."""
        return lock_status(self._lock.path)

    def running_holder(self) -> str:
        holder = read_holder(self._lock.path)
        return holder.describe() if holder else "another process"

    # -- steps ----------------------------------------------------------------------------
    def _step(self, name: str, run_step: Callable[[], Any]) -> Any:
        """Run one step; any failure in it becomes :class:`PipelineStepFailed` (dlt's contract)."""
        self._active_load_id = None
        try:
            return run_step()
        except PipelineStepFailed:
            raise
        except Exception as exc:
            raise PipelineStepFailed.wrap(
                self.pipeline_name, name, self._active_load_id, exc
            ) from exc

    def _package_started(self, step: str, load_id: str) -> None:
        self._active_load_id = load_id  # named by PipelineStepFailed
        self.recorder.emit(step, "package_started", load_id=load_id)

    @step_boundary("extract")
    def extract(
        self,
        data: Any,
        *,
        table_name: str | None = None,
        write_disposition: Any = None,
        columns: Any = None,
        primary_key: Any = None,
        schema: Any = None,
        schema_contract: Any = None,
        merge_key: Any = None,
        loader_file_format: str | None = None,
        table_format: str | None = None,
        refresh: str | None = None,
    ) -> ExtractResult:
        """Write ``data`` into a new load package (state ``extracted``).

        ``refresh`` (default: the pipeline's) first drops or empties what the run replaces
        (see :mod:`loadstone.pipelines.refresh`).
        """
        hints = TableHints(
            write_disposition=write_disposition,
            columns=columns,
            primary_key=primary_key,
            schema_contract=schema_contract,
            merge_key=merge_key,
            file_format=loader_file_format,
            table_format=table_format,
        )
        with self._traced("extract"):
            return self._extract_hinted(data, table_name, hints, schema, refresh)

    def _traced(self, step: str) -> contextlib.AbstractContextManager[None]:
        """A step called on its own is traced (``last_trace``), as dlt traces it."""
        return self.recorder.standalone(step, self.working_dir / TRACE_FILE, self.pipeline_name)

    def _extract_hinted(
        self,
        data: Any,
        table_name: str | None,
        hints: TableHints,
        schema: Any,
        refresh: str | None,
    ) -> ExtractResult:
        """``extract`` with its hints already parsed (``run`` parses them itself)."""
        mode = check_refresh(refresh if refresh is not None else self.refresh)
        with self._locked():
            return self._extract(data, table_name, hints, schema, mode)

    def _extract(
        self,
        data: Any,
        table_name: str | None,
        hints: TableHints,
        schema: Any,
        refresh: str | None = None,
    ) -> ExtractResult:
        step = self.recorder.begin("extract")
        source_name = data.name if isinstance(data, Source) else None
        if is_source_factory(data):
            data = data()
            source_name = data.name
        provided = (
            schema if schema is not None else (data.schema if isinstance(data, Source) else None)
        )
        schema_name = (
            (schema.name if isinstance(schema, Schema) else None)
            or source_name
            or self.default_schema_name
            or self.pipeline_name
        )
        package_schema = self._schema_for_extract(schema_name, provided)
        if isinstance(data, Source):
            _apply_source_defaults(data)
        state_key = source_name or schema_name
        if refresh is not None:
            source_state = self._state.setdefault("sources", {}).setdefault(state_key, {})
            self._refresh(refresh, package_schema, data, table_name, source_state)
        package = self._new_package(schema_name)
        self._package_started("extract", package.load_id)
        result = self._write_package(package, data, table_name, hints, state_key, step)
        # after the extract, which names a missing or unreadable input in its own error
        inputs = [self._fingerprint(path) for path in input_files_of(data)]
        self._publish_extracted(package)
        package.write_schema(package_schema)
        self._register_schema(package_schema)
        self._after_extract(package, package_schema, state_key)
        # the state the sources reached travels with the package, in the same atomic switch:
        # a crash before the local state is saved cannot lose it (see _adopt_package_state)
        package.set_state(
            EXTRACTED,
            extracted_rows=result.items,
            extracted_bytes=result.bytes,
            pipeline_state=self._state,
            carries_state=self._state_changed_since_extract(),
            inputs=[i.asdict() for i in inputs],
        )
        self._save_schema(package_schema)
        self._save_state()
        self.recorder.package_done(
            step,
            package.load_id,
            rows=result.items,
            size=result.bytes,
            files=result.files,
            row_counts={name: t.items for name, t in result.tables.items()},
        )
        self.recorder.finish(step, load_id=package.load_id)
        return result

    def _new_package(self, schema_name: str) -> LoadPackage:
        """A new package, its data files on ``packages.storage_url`` when that is set."""
        return LoadPackage.create(
            self.packages_dir,
            schema_name,
            data_dir=package_storage.data_dir(self.pipeline_name),
            data_url=package_storage.data_url(self.pipeline_name),
        )

    @staticmethod
    def _publish_extracted(package: LoadPackage) -> None:
        """Extracted files onto the package storage; a failure removes the package whole."""
        try:
            package.publish_extracted()
        except BaseException:
            package.delete_data()
            shutil.rmtree(package.root, ignore_errors=True)
            raise

    def _write_package(
        self,
        package: LoadPackage,
        data: Any,
        table_name: str | None,
        hints: TableHints,
        state_key: str,
        step: StepInfo,
    ) -> ExtractResult:
        """Extract ``data`` into ``package``; on any failure the package is removed whole."""

        def on_progress(rows: int, size: int, files: int) -> None:
            self.recorder.emit(
                "extract",
                "progress",
                load_id=package.load_id,
                rows=rows,
                bytes=size,
                files=files,
                elapsed=time.time() - step.started_at,
            )

        sources_state = self._state.setdefault("sources", {})
        existed = state_key in sources_state  # an empty one kept since a replace (as dlt)
        source_state = sources_state.setdefault(state_key, {})
        try:
            with current.extract_context(self, source_state):
                result = extract_data(
                    package, data, table_name=table_name, hints=hints, progress=on_progress
                )
        except BaseException as error:
            package.delete_data()
            shutil.rmtree(package.root, ignore_errors=True)
            if isinstance(error, OSError):
                raise ExtractError(
                    f"extract failed writing package {package.root}: "
                    f"{os_error_text(error)}; nothing was extracted or loaded"
                ) from error
            raise
        if not source_state and not existed:
            sources_state.pop(state_key, None)
        return result

    def _refresh(
        self,
        mode: str,
        schema: Any,
        data: Any,
        table_name: str | None,
        source_state: dict[str, Any],
    ) -> None:
        """Drop or empty the tables the run replaces and reset their state (``refresh=``)."""
        from loadstone.extract.extractor import as_resources

        _, resources = as_resources(data, table_name)
        tables = [
            table_name or res.table_name
            for res in resources
            if isinstance(table_name or res.table_name, str)
        ]
        plan = plan_refresh(mode, schema, [res.name for res in resources], tables)  # type: ignore[arg-type]
        with self._client(schema) as client:
            apply_to_destination(client, plan)
        LoadedInputs(self.working_dir).forget_tables((*plan.drop_tables, *plan.truncate_tables))
        schema.drop_tables(plan.drop_tables)
        reset_state(plan, source_state)

    @step_boundary("normalize")
    def normalize(self) -> list[str]:
        """Normalize every extracted package (oldest first); returns their load ids."""
        with self._traced("normalize"), self._locked():
            return self._normalize_pending()

    def _normalize_pending(self) -> list[str]:
        packages = [p for p in iter_pending(self.packages_dir) if p.state == EXTRACTED]
        if not packages:
            return []
        step = self.recorder.begin(
            "normalize",
            input_rows=sum(int(p.meta.get("extracted_rows") or 0) for p in packages),
            input_bytes=sum(int(p.meta.get("extracted_bytes") or 0) for p in packages),
        )
        done: list[str] = []
        for package in packages:
            self._normalize_package(package, step)
            done.append(package.load_id)
        self.recorder.finish(step)
        return done

    def _normalize_context(self, load_id: str, naming: Any, step: StepInfo) -> Any:
        from loadstone.normalize.contract import NormalizeContext
        from loadstone.spark_session import get_spark_session

        def chunks_done(done: int, parts: int) -> None:
            self.recorder.emit_totals(
                step, "progress", load_id=load_id, parts_done=done, parts=parts
            )

        # a session given to pipeline()/run() is used as is; else it is handed over lazily:
        # the normalizer starts Spark only when it chooses to (``normalize.engine``)
        return NormalizeContext(
            spark=self.spark if self.spark is not None else get_spark_session,
            naming=naming,
            capabilities=self.capabilities,
            on_bad_record=run_settings.on_bad_record(),
            progress=chunks_done,
            on_chunk=self.recorder.record_chunk,
            on_engine=self.recorder.record_engine,
        )

    def _verify_extracted(self, package: LoadPackage) -> None:
        """Stop before normalizing an input that changed or a package that was cut."""
        package.check_inputs()  # an input read in place that changed: the user's to restore
        try:
            package.verify_extracted()
        except PackageIntegrityError as error:
            self._set_aside(package, str(error))
            raise PackageIntegrityError(
                f"{error}; the package was set aside in {self.failed_packages_dir} and nothing "
                f"of it was loaded: run the same input again"
            ) from None

    def _run_normalizer(
        self, package: LoadPackage, schema: Schema, context: NormalizeContext
    ) -> NormalizeResult:
        """The configured normalizer's result; its failures as the pipeline reports them."""
        from loadstone.plugin_manager import get_normalizer

        normalizer = get_normalizer(run_settings.normalizer_name())
        try:
            result = normalizer.normalize(package, schema, context)
            self._check_collisions(result.schema)
        except PackageDataError as error:
            if isinstance(error, BadRecordError):  # the package's copy may be what is damaged
                package.check_copy_line(error.file, error.line)
            # the package's data fails the same way every time: set it aside (kept for a
            # look), so that running again with the fixed input loads it and nothing else
            self._set_aside(package, str(error))
            raise
        except NormalizeError as error:
            if type(error) is not NormalizeError:
                raise  # a contract or naming rule: the message says what to change
            raise PipelineStepFailed(
                self.pipeline_name, "normalize", package.load_id, error
            ) from None
        except LoadstoneError:
            raise
        except Exception as exc:
            raise PipelineStepFailed(self.pipeline_name, "normalize", package.load_id, exc) from exc
        return result

    def _normalize_package(self, package: LoadPackage, step: StepInfo) -> None:
        """Normalize one package and switch it to ``normalized`` with its result."""
        self._package_started("normalize", package.load_id)
        self._verify_extracted(package)
        schema = self._schema_for_package(package)
        naming = self.naming_for(schema)
        _switch_naming(schema, naming)
        context = attrs.evolve(
            self._normalize_context(package.load_id, naming, step), storage=package.remote
        )
        package.reset_normalized()
        result = self._run_normalizer(package, schema, context)
        evolved = _evolved_schema(result)
        tables, figures = _normalized_records(package, result)
        self._check_bound_columns(package, evolved, naming, tables)
        _add_state_table(evolved)
        package.write_schema(evolved)
        self._save_schema(evolved)
        package.set_state(
            NORMALIZED,
            normalized_tables=tables,
            normalized_bytes=figures[2],
            bad_records=int(result.bad_records),
            new_tables=list(result.new_tables),
            new_columns={k: list(v) for k, v in result.new_columns.items()},
        )
        self._save_state()
        rows, files, size = figures
        self.recorder.package_done(
            step,
            package.load_id,
            rows=rows,
            size=size,
            files=files,
            row_counts={**_state_row_count(package, evolved), **_row_counts(tables)},
        )

    def _check_bound_columns(
        self, package: LoadPackage, schema: Schema, naming: Any, tables: dict[str, Any]
    ) -> None:
        """Key columns the data never filled stop the package, which is then set aside."""
        try:
            check_bound_columns(
                schema,
                package.table_hints(),
                naming,
                {
                    name: [package.data_root / f for f in info["files"]]
                    for name, info in tables.items()
                    if info["row_count"]
                },
                package.remote,
            )
        except PackageDataError as error:
            self._set_aside(package, str(error))
            raise

    @property
    def failed_packages_dir(self) -> Path:
        """Packages whose input could not be normalized, kept for inspection, never retried."""
        return self.working_dir / "failed_packages"

    def _set_aside(self, package: LoadPackage, cause: str) -> None:
        """Move a package that can never load out of the way, recording why in it."""
        with contextlib.suppress(LoadstoneError):
            package.update(**{FAILURE_KEY: cause, "failed_at": time.time()})
        self.failed_packages_dir.mkdir(parents=True, exist_ok=True)
        shutil.move(str(package.root), str(self.failed_packages_dir / package.root.name))

    def _forget_schema_changes(self, package: LoadPackage) -> None:
        """Take back the tables and columns a package set aside at load added to the schema.

        They exist nowhere else (the destination rolled the package back), and a column only
        that package brought -- a user key named like dlt's non-nullable ``_dlt_list_idx`` --
        would make every later package fail the same way.
        """
        schema = self.schemas.get(package.schema_name)
        if schema is None:
            return
        meta = package.meta
        schema.drop_tables(meta.get("new_tables") or [])
        for name, added in (meta.get("new_columns") or {}).items():
            if schema.has_table(name):
                table = schema.get_table(name)
                kept = {k: c for k, c in table.columns.items() if k not in added}
                schema.replace_table(attrs.evolve(table, columns=kept))
        self._save_schema(schema)

    def failed_packages(self) -> list[tuple[str, str]]:
        """(load id, cause) of every package set aside, oldest first."""
        found = []
        for package in list_packages(self.failed_packages_dir):
            cause = package.damage or str(package.meta.get(FAILURE_KEY) or "unknown cause")
            found.append((package.root.name, cause))
        return found

    def _schema_for_package(self, package: LoadPackage) -> Any:
        """The newest schema of the package's name: the pipeline's, else the package's."""
        schema = self.schemas.get(package.schema_name)
        if schema is not None:
            return schema
        stored = package.read_schema()
        if stored is None:
            return _new_schema(package.schema_name, self._resolve_naming_name(None, None))
        return stored

    def _check_collisions(self, schema: Any) -> None:
        """Stop before any data moves when identifiers collide in a case-insensitive destination."""
        from loadstone.schema.collisions import check_case_collisions

        check_case_collisions(schema, bool(self.capabilities.has_case_sensitive_identifiers))

    @step_boundary("load")
    def load(self) -> LoadInfo:
        """Load every normalized package (oldest first) into the destination.

        A package whose normalized files are missing or damaged is normalized again from its
        extracted copy first, so that it is never loaded in part.
        """
        self.destination.require_loader()
        with self._traced("load"), self._locked():
            self._renormalize_damaged()
            return self._load_pending()

    def _renormalize_damaged(self) -> None:
        for package in iter_pending(self.packages_dir):
            damage = package.normalized_damage() if package.state == NORMALIZED else None
            if damage is not None:
                self.recorder.notice(
                    "load", f"package {package.load_id}: {damage}; normalizing it again"
                )
                package.set_state(EXTRACTED, normalized_tables={})
        self._normalize_pending()

    def _load_pending(self) -> LoadInfo:
        info = self._new_info()
        packages = [p for p in iter_pending(self.packages_dir) if p.state == NORMALIZED]
        step = self.recorder.begin("load")
        for package in packages:
            info.packages.append(self._load_package(package, step))
        self.recorder.finish(step)
        info.steps = dict(self.recorder.steps)
        return info

    def _client(self, schema: Any) -> Any:
        return self.destination.client(schema, self.dataset_name, pipeline_name=self.pipeline_name)

    def _load_package(self, package: LoadPackage, step: StepInfo) -> PackageInfo:
        self._package_started("load", package.load_id)
        stored = package.read_schema()
        schema = stored if stored is not None else self._schema_for_package(package)
        normalized = package.normalized_tables()
        meta = package.meta
        package_info = PackageInfo(
            load_id=package.load_id,
            schema_name=package.schema_name,
            state=LOADED,
            row_counts={name: t.row_count for name, t in normalized.items()},
            files=[str(f) for t in normalized.values() for f in t.files],
            new_tables=list(meta.get("new_tables", [])),
            new_columns={k: list(v) for k, v in (meta.get("new_columns") or {}).items()},
            state_table=next(iter(_state_row_count(package, schema)), None),
        )
        keep = run_settings.keep_completed_packages()  # read before the commit, not after
        try:
            with package.local_copies():
                package_info.skipped = self._load_into_destination(package, schema)
        except PipelineStepFailed:
            raise
        except PackageDataError as exc:  # refused for its data: it would fail every run
            self._set_aside(package, str(exc))
            self._forget_schema_changes(package)
            raise PipelineStepFailed(self.pipeline_name, "load", package.load_id, exc) from exc
        except Exception as exc:
            raise PipelineStepFailed(self.pipeline_name, "load", package.load_id, exc) from exc
        self._complete(package, skipped=package_info.skipped, keep=keep)
        self.recorder.package_done(
            step,
            package.load_id,
            rows=sum(package_info.row_counts.values()),
            # what was loaded: the normalized files (a package of an older version: its input)
            size=int(meta.get("normalized_bytes", meta.get("extracted_bytes")) or 0),
            files=len(package_info.files),
            row_counts=package_info.row_counts,
        )
        return package_info

    def _complete(self, package: LoadPackage, *, skipped: bool, keep: bool) -> None:
        """After the destination's commit: remember the package's file inputs, then switch
        it to loaded (a kill between the two leaves it pending: see ``loaded_inputs``)."""
        LoadedInputs(self.working_dir).record(package)
        package.set_state(LOADED, loaded_at=time.time(), skipped=skipped)
        if not keep:
            package.delete_data()

    def _load_into_destination(self, package: LoadPackage, schema: Any) -> bool:
        """Load the package in the destination's transaction; True when it was there already."""
        with self._client(schema) as client:
            client.initialize_storage()
            if client.is_package_loaded(package.load_id):
                self.recorder.emit("load", "package_committed", load_id=package.load_id)
                return True
            # load_package applies the schema's changes itself, in the package's transaction:
            # migrating here first would run every migration twice per package
            self._state.setdefault("_local", {})["last_load_id"] = package.load_id
            self._state["_local"]["first_run"] = False
            self._save_state()
            client.load_package(self._load_request(package, schema))
            self.recorder.emit("load", "package_committed", load_id=package.load_id)
        return False

    def _load_request(self, package: LoadPackage, schema: Any) -> Any:
        from loadstone.destinations.contract import LoadRequest, PipelineStateRow

        return LoadRequest(
            load_id=package.load_id,
            schema=schema,
            tables={
                **_replaced_without_data(package, schema),
                **{
                    name: (list(t.files) if t.files else str(t.folder))
                    if t.row_count or t.files
                    else []
                    for name, t in package.normalized_tables().items()
                },
            },
            pipeline_state=None
            if not package.meta.get("carries_state", True)
            else PipelineStateRow(
                pipeline_name=self.pipeline_name,
                state=state_module.shareable(self._state),
                version=int(self._state.get("_state_version", 1)),
                engine_version=state_module.STATE_ENGINE_VERSION,
                version_hash=self._state.get("_version_hash"),
                created_at=_dt.datetime.now(tz=_dt.timezone.utc),
            ),
        )

    def _new_info(self) -> LoadInfo:
        return LoadInfo(
            pipeline_name=self.pipeline_name,
            destination_name=self.destination.name,
            dataset_name=self.dataset_name,
            destination_location=self._destination_location(),
            first_run=self.first_run,  # read before the load: True until a load succeeded
        )

    def _destination_location(self) -> str | None:
        config_ = self.destination.config
        credentials = config_.get("credentials")
        if isinstance(credentials, (str, Path)):
            return _without_password(str(credentials))
        if self.destination.name == "duckdb":
            return str(Path.cwd() / f"{self.pipeline_name}.duckdb")
        return None

    # -- run ------------------------------------------------------------------------------
    def run(
        self,
        data: Any = None,
        *,
        destination: Any = None,
        staging: Any = None,
        dataset_name: str | None = None,
        credentials: Any = None,
        table_name: str | None = None,
        write_disposition: Any = None,
        columns: Any = None,
        primary_key: Any = None,
        schema: Any = None,
        loader_file_format: str | None = None,
        table_format: str | None = None,
        schema_contract: Any = None,
        refresh: str | None = None,
        merge_key: Any = None,
        spark: Any = None,
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
        if staging is not None:
            raise TypeError("run(staging=...) is not supported by loadstone")
        check_refresh(refresh)
        check_file_format(loader_file_format)
        self._configure_run(destination, credentials, dataset_name, spark)
        self.recorder.reset()
        started, trace = time.time(), self.working_dir / TRACE_FILE
        # parsed here, once: a bad hint fails the extract step before anything is touched
        hints: TableHints = self._step(
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
                info = self._run_locked(data, table_name, hints, schema, refresh, reload)
        except BaseException as error:
            self.recorder.save_trace(trace, self.pipeline_name, started, error=error)
            raise
        self.recorder.save_trace(trace, self.pipeline_name, started, info=info)
        return info

    def _configure_run(
        self, destination: Any, credentials: Any, dataset_name: str | None, spark: Any
    ) -> None:
        """What ``run()`` arguments change for this and later runs; fails early without a
        loader or with a bad setting (all are parsed here, before any work)."""
        self._step("extract", lambda: run_settings.check_all(self.lock_timeout))
        if spark is not None:
            self.spark = spark
        if destination is not None:
            self.destination = _resolve_destination(destination)
        if credentials is not None:
            self.destination = self.destination.configured(credentials=credentials)
        if dataset_name is not None:
            self._explicit_dataset_name = dataset_name
            self._dataset_name = None
        self.destination.require_loader()

    def _run_locked(
        self,
        data: Any,
        table_name: str | None,
        hints: TableHints,
        schema: Any,
        refresh: str | None,
        reload: bool = False,
    ) -> LoadInfo:
        self._step("sync", self._restore_from_destination)
        self._drop_incomplete_extracts()
        self._adopt_package_state()
        data = self._without_extracted_inputs(data)
        if not (reload or self._replaces(table_name, hints, refresh)):
            data = self._without_loaded_inputs(data)
        # work left behind (a crash, or extract()/normalize() called alone) is finished and the
        # run returns, as dlt's does: the data it was given is not extracted (run again)
        self._step("normalize", self._renormalize_damaged)
        if self._has_normalized():
            info = self._step("load", self._load_pending)
            if data is not None:
                self.recorder.notice("load", PENDING_FIRST)
        elif data is not None:
            self._step(
                "extract", lambda: self._extract_hinted(data, table_name, hints, schema, refresh)
            )
            self._step("normalize", self._normalize_pending)
            info = self._step("load", self._load_pending)
        else:
            info = self._new_info()
        info.steps = dict(self.recorder.steps)
        return info

    def _without_extracted_inputs(self, data: Any) -> Any:
        """``data`` without the input files a pending package already holds (None if all)."""
        files = input_files_of(data)
        if not files:
            return data
        held = {
            fingerprint: package.load_id
            for package in iter_pending(self.packages_dir)
            for fingerprint in package.inputs()
        }
        remaining: list[Path | str] = []
        for path in files:
            fingerprint = self._held_fingerprint(path) if held else None
            load_id = held.get(fingerprint) if fingerprint is not None else None
            if load_id is None:
                remaining.append(path)
            else:
                self.recorder.notice(
                    "extract",
                    f"{path} was extracted into package {load_id} by an interrupted run: "
                    "finishing that package instead of extracting it again",
                )
        if len(remaining) == len(files):
            return data
        if not remaining:
            return None
        return remaining if len(remaining) > 1 else remaining[0]

    def _replaces(self, table_name: str | None, hints: TableHints, refresh: str | None) -> bool:
        """Whether the run replaces what its inputs loaded before (then they load again)."""
        if refresh is not None or self.refresh is not None:
            return True
        disposition = hints.stored().get("write_disposition")
        if disposition is None and table_name is not None and self.default_schema_name:
            table = self.default_schema.tables.get(table_name)
            disposition = table.write_disposition if table is not None else None
        return disposition == "replace"

    def _without_loaded_inputs(self, data: Any) -> Any:
        """``data`` without the input files already loaded unchanged (None if all).

        Running the same command again after it finished -- or after a kill in its last
        instant, when the load had committed -- must not load the same rows twice.
        """
        files = input_files_of(data)
        if not files:
            return data
        loaded = LoadedInputs(self.working_dir)
        remaining: list[Path | str] = []
        skipped: list[str] = []
        for path in files:
            fingerprint = self._held_fingerprint(path)
            found = loaded.find(fingerprint) if fingerprint is not None else None
            if found is None:
                remaining.append(path)
            else:
                skipped.append(f"{path} (package {found.load_id})")
        if not skipped:
            return data
        more = f" and {len(skipped) - 1} more" if len(skipped) > 1 else ""
        self.recorder.notice(
            "extract",
            f"{skipped[0]}{more} already loaded unchanged: not loaded again (`--reload` or "
            "run(reload=True) loads it again)",
        )
        if not remaining:
            return None
        return remaining if len(remaining) > 1 else remaining[0]

    def _held_fingerprint(self, path: Path | str) -> InputFingerprint | None:
        """The fingerprint to look up, or None where the input cannot be read (the extract
        step then says why, naming it)."""
        try:
            return self._fingerprint(path)
        except Exception:  # a missing file or unreachable store: reported by the extract
            return None

    def _fingerprint(self, path: Path | str) -> InputFingerprint:
        """A local file's size and mtime, or an object's size and etag (read where it is)."""
        if isinstance(path, Path):
            return InputFingerprint.of(path)
        size, etag = package_storage.object_fingerprint(self.pipeline_name, path)
        return InputFingerprint.of_object(path, size, etag)

    def _drop_incomplete_extracts(self) -> None:
        """A package still ``extracting`` was cut off mid-write: its data never counted."""
        for package in list_packages(self.packages_dir):
            if package.damage is None and package.state == EXTRACTING:
                package.delete_data()
                shutil.rmtree(package.root, ignore_errors=True)

    def _has_normalized(self) -> bool:
        return any(p.state == NORMALIZED for p in iter_pending(self.packages_dir))

    @property
    def last_trace(self) -> PipelineTrace | None:
        """The trace of the last run (also saved as ``trace.json`` in the working folder)."""
        if self.recorder.last_trace is None:
            path = self.working_dir / TRACE_FILE
            if path.exists():
                repair = "delete it: it only describes the last run"
                self.recorder.last_trace = PipelineTrace(read_json_object(path, repair=repair))
        return self.recorder.last_trace

    def _restore_from_destination(self) -> None:
        """Without a local folder, take state and schemas from the destination (if any).

        A schema the state names but the folder lacks (deleted because it was damaged) is
        taken from the destination too.
        """
        if self.dev_mode:
            return
        missing = [n for n in self._state.get("schema_names") or [] if n not in self.schemas]
        if self._had_local_state and not missing:
            return
        with self._client(self.default_schema) as client:
            if not self._had_local_state:
                self._had_local_state = True  # ask once per pipeline object
                restored = client.get_stored_state(self.pipeline_name)
                if not restored:
                    return
                self._state = state_module.merge_restored(self._state, restored)
                self._state.setdefault("_local", {})["first_run"] = False
                self._state["_local"]["restored_from_destination"] = True
                missing = list(self._state.get("schema_names") or [])
            for name in missing:
                stored = client.get_stored_schema(name)
                if stored:
                    self._save_schema(Schema.from_dict(stored))
        self._dataset_name = None
        self._save_state()

    def sync_destination(self) -> None:
        """Take state and schemas from the destination (dlt's ``sync_destination``)."""
        with self._locked():
            self._had_local_state = False
            self._restore_from_destination()

    # -- inspection -----------------------------------------------------------------------
    def list_pending_packages(self) -> list[LoadPackage]:
        """Packages a crash or failure left between extract and load."""
        return list(iter_pending(self.packages_dir))

    @property
    def has_pending_data(self) -> bool:
        return bool(self.list_pending_packages())

    def list_extracted_load_packages(self) -> list[str]:
        """Load ids of packages extracted and not normalized yet (dlt's name)."""
        return [p.load_id for p in self.list_pending_packages() if p.state == EXTRACTED]

    def list_normalized_load_packages(self) -> list[str]:
        """Load ids of packages normalized and not loaded yet (dlt's name)."""
        return [p.load_id for p in self.list_pending_packages() if p.state == NORMALIZED]

    def list_packages(self) -> list[LoadPackage]:
        return list_packages(self.packages_dir)

    def committed_packages(self) -> list[str]:
        """Load ids of pending packages the destination already committed (read only).

        A run killed between the destination's COMMIT and the package's state switch leaves
        a package that looks pending; its ``_dlt_loads`` row says it is loaded. The next run
        (or ``load``) marks it so without loading it again, and does not extract its input
        again either.
        """
        normalized = [
            p for p in iter_pending(self.packages_dir) if p.damage is None and p.state == NORMALIZED
        ]
        if not normalized or not self._destination_reachable():
            return []
        with self._client(self.default_schema) as client:
            return [p.load_id for p in normalized if client.is_package_loaded(p.load_id)]

    def _mark_committed_loaded(self) -> list[str]:
        committed = set(self.committed_packages())
        for package in iter_pending(self.packages_dir):
            if package.load_id in committed:
                self._complete(package, skipped=True, keep=False)
        return sorted(committed)

    def _destination_reachable(self) -> bool:
        return (
            self.destination.name != "duckdb" or Path(self._destination_location() or "").exists()
        )

    def drop_pending_packages(self) -> list[str]:
        """Delete every package that is not loaded (their data will not be loaded).

        Refuses (:class:`PipelineLockedError`) while a run holds the pipeline; a package the
        destination already committed is marked loaded instead of dropped; a package whose
        own metadata is damaged is dropped all the same.
        """
        dropped: list[str] = []
        with self._locked(timeout=0):
            with contextlib.suppress(LoadstoneError, OSError):
                self._mark_committed_loaded()
            for package in list_packages(self.packages_dir):
                if package.is_pending or package.state == EXTRACTING:
                    with contextlib.suppress(LoadstoneError, OSError):
                        package.delete_data()  # its metadata may be damaged
                    shutil.rmtree(package.root, ignore_errors=True)
                    dropped.append(package.root.name)
        return dropped

    def drop_resources(self, resources: Sequence[str] | None = None) -> list[str]:
        """Drop the tables of ``resources`` (all data tables when None) from the destination
        and the schema, and reset their state: the next run loads them from scratch (the CLI's
        ``drop``). Returns the dropped table names."""
        with self._locked():
            return self._drop_resources(resources)

    def _drop_resources(self, resources: Sequence[str] | None) -> list[str]:
        schema = self.default_schema
        if resources is None:
            plan = plan_refresh("drop_sources", schema, [], [])
        else:
            known = {
                t.resource for t in schema.data_tables(include_incomplete=True) if t.parent is None
            }
            unknown = [r for r in resources if r not in known]
            if unknown:
                raise PipelineConfigError(
                    f"schema {schema.name!r} has no resource(s) {', '.join(unknown)}; it has "
                    f"{', '.join(sorted(k for k in known if k)) or 'none'}"
                )
            tables = [t.name for r in resources for t in resource_tables(schema, r)]
            plan = plan_refresh("drop_resources", schema, list(resources), tables)
        with self._client(schema) as client:
            apply_to_destination(client, plan)
            schema.drop_tables(plan.drop_tables)
            client.update_stored_schema(schema)
        LoadedInputs(self.working_dir).forget_tables((*plan.drop_tables, *plan.truncate_tables))
        source_state = (self._state.get("sources") or {}).get(schema.name, {})
        reset_state(plan, source_state)
        self._save_schema(schema)
        self._save_state()
        return list(plan.drop_tables)

    def drop(self) -> None:
        """Delete the local working folder (state, schemas, packages, trace)."""
        with self._locked(timeout=0):
            if self.working_dir.exists():
                shutil.rmtree(self.working_dir)

    def dataset(self, dataset_name: str | None = None) -> Any:
        """Query what was loaded: ``pipeline.dataset()["users"].fetchall()``."""
        from loadstone.destinations.dataset import Dataset

        return Dataset(self, dataset_name or self.dataset_name)

    def sql_client(self) -> Any:
        """A SQL client on the pipeline's dataset (context manager, like dlt's)."""
        from loadstone.destinations.dataset import SqlClient

        return SqlClient(self, self.dataset_name)

    def __repr__(self) -> str:
        return (
            f"Pipeline(pipeline_name={self.pipeline_name!r}, destination="
            f"{self.destination.name!r}, dataset_name={self.dataset_name!r})"
        )


def _apply_source_defaults(data: Source) -> None:
    """A source's nesting, contract and root key settings as defaults of its resources."""
    defaults: dict[str, Any] = {}
    if data.max_table_nesting is not None:
        defaults["max_nesting"] = data.max_table_nesting
    if data.schema_contract is not None:
        defaults["schema_contract"] = data.schema_contract
    if data.root_key:
        defaults["root_key_propagation"] = True
    for res in data.selected_resources.values():
        for key, value in defaults.items():
            if key not in res._hints:
                res._hints[key] = value


def _normalized_records(
    package: LoadPackage, result: Any
) -> tuple[dict[str, Any], tuple[int, int, int]]:
    """The ``normalized_tables`` record of a result, and its (rows, files, bytes)."""
    tables: dict[str, Any] = {}
    rows = files = size = 0
    for table_name, output in result.tables.items():
        folder = Path(output.folder)
        if not folder.is_absolute():
            folder = package.normalized_dir / folder
        table_files = [Path(f) for f in output.files] or [
            p for p in folder.rglob("*.parquet") if not p.name.startswith((".", "_"))
        ]
        tables[table_name] = {
            "folder": os.path.relpath(folder, package.data_root),
            "row_count": int(output.row_count),
            "files": [os.path.relpath(f, package.data_root) for f in table_files],
        }
        rows += int(output.row_count)
        files += len(table_files)
        size += sum(f.stat().st_size for f in table_files if f.exists())
    return tables, (rows, files, size)


def pipeline(
    pipeline_name: str | None = None,
    pipelines_dir: str | Path | None = None,
    pipeline_salt: str | None = None,
    destination: Any = None,
    staging: Any = None,
    dataset_name: str | None = None,
    import_schema_path: str | Path | None = None,
    export_schema_path: str | Path | None = None,
    full_refresh: bool | None = None,
    dev_mode: bool = False,
    refresh: str | None = None,
    progress: ProgressCallback | str | None = None,
    lock_timeout: float | None = None,
    spark: Any = None,
) -> Pipeline:
    """Make (or reopen) the pipeline ``pipeline_name``, like ``dlt.pipeline``.

    Without a name the pipeline is ``dlt_<script file name>``, as dlt names it, so a ported
    script opens the same folder and database. ``full_refresh`` is dlt's old name of
    ``dev_mode``. A progress *name* (``"log"``, ``"tqdm"``...) selects dlt's display
    libraries: loadstone shows no display for it (data is unaffected); pass a callable for
    loadstone's events. ``pipeline_salt`` and ``staging`` raise ``TypeError``.
    """
    for name, value in (("pipeline_salt", pipeline_salt), ("staging", staging)):
        if value is not None:
            raise TypeError(f"pipeline({name}=...) is not supported by loadstone")
    if pipeline_name is None:
        pipeline_name = default_pipeline_name()
    return Pipeline(
        pipeline_name,
        destination,
        dataset_name,
        dev_mode=bool(dev_mode or full_refresh),
        pipelines_dir=pipelines_dir,
        import_schema_path=import_schema_path,
        export_schema_path=export_schema_path,
        progress=progress if callable(progress) else None,
        lock_timeout=lock_timeout,
        refresh=refresh,
        spark=spark,
    )


def default_pipeline_name() -> str:
    """``dlt_<script>``: the name dlt gives a pipeline made without one."""
    import __main__

    script = Path(getattr(__main__, "__file__", "") or "pipeline").stem
    return f"dlt_{script}"


def run(
    data: Any,
    *,
    destination: Any = None,
    staging: Any = None,
    dataset_name: str | None = None,
    credentials: Any = None,
    table_name: str | None = None,
    write_disposition: Any = None,
    columns: Any = None,
    schema: Any = None,
    loader_file_format: str | None = None,
    schema_contract: Any = None,
    refresh: str | None = None,
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
    destination: Any = None,
    staging: Any = None,
    progress: ProgressCallback | str | None = None,
    dataset_name: str | None = None,
) -> Pipeline:
    """Open an existing pipeline from its working folder (``dlt.attach``); error if none."""
    for name, value in (("pipeline_salt", pipeline_salt), ("staging", staging)):
        if value is not None:
            raise TypeError(f"attach({name}=...) is not supported by loadstone")
    name = pipeline_name or default_pipeline_name()
    base = Path(pipelines_dir).absolute() if pipelines_dir else default_pipelines_dir()
    if state_module.load_local(base / name) is None:
        raise CannotRestorePipelineException(name, base)
    return Pipeline(
        name,
        destination,
        dataset_name,
        pipelines_dir=base,
        progress=progress if callable(progress) else None,
    )


def _without_password(location: str) -> str:
    """A connection string as dlt shows it: ``postgresql://user:***@host:5432/db``."""
    parts = urlsplit(location)
    if "://" not in location or parts.password is None:
        return location
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{parts.username}:***@{host}"))
