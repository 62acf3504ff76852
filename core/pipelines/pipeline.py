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

import datetime as _dt
import json
import os
import shutil
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs

from loadstone import config, current
from loadstone.errors import LoadstoneError
from loadstone.extract.extractor import ExtractResult, run_hints_of
from loadstone.extract.extractor import extract as extract_data
from loadstone.extract.sources import Source
from loadstone.normalize.contract import BadRecordError, ChunkRun, EngineChoice
from loadstone.pipelines.load_info import (
    LoadInfo,
    PackageInfo,
    PipelineTrace,
    ProgressEvent,
    StepInfo,
)
from loadstone.schema import Schema
from loadstone.storage import package_storage
from loadstone.storage import state as state_module
from loadstone.storage.load_package import (
    EXTRACTED,
    EXTRACTING,
    LOADED,
    NORMALIZED,
    LoadPackage,
    iter_pending,
    list_packages,
    write_json_atomic,
)

DEFAULT_DESTINATION = "duckdb"
DEFAULT_NORMALIZER = "relational"
TRACE_FILE = "trace.json"

ProgressCallback = Callable[[ProgressEvent], None]


class PipelineError(LoadstoneError):
    """A pipeline step failed; the message names the step and the package."""

    def __init__(self, pipeline_name: str, step: str, load_id: str | None, cause: BaseException):
        self.pipeline_name = pipeline_name
        self.step = step
        self.load_id = load_id
        self.cause = cause
        where = f" package {load_id}" if load_id else ""
        super().__init__(
            f"pipeline {pipeline_name!r} step {step}{where} failed: {cause}. The package is "
            f"kept; the next run retries it (or `loadstone pipeline {pipeline_name} "
            f"drop-pending-packages` drops it)"
        )


class PipelineConfigError(LoadstoneError):
    """The pipeline's arguments cannot work together (name, dataset, destination)."""


# --------------------------------------------------------------------------------------
# schemas
# --------------------------------------------------------------------------------------
def _schema_to_dict(schema: Schema | Mapping[str, Any]) -> dict[str, Any]:
    """The stored form (a ``schema=`` given to ``run`` may already be a dict)."""
    if isinstance(schema, Mapping):
        return dict(schema)
    return schema.to_dict()


def _new_schema(name: str, naming: str | None) -> Schema:
    return Schema(name) if naming is None else Schema(name, naming=naming)


def _schema_naming_name(schema: Schema) -> str | None:
    """The naming convention a schema fixes: any it names once it has data tables, else a
    non-default one (``Schema(naming=...)`` in code). None leaves the choice to config and
    the destination's preference.
    """
    name = schema.naming_name
    if schema.data_tables() or name != "snake_case":
        return name
    return None


# --------------------------------------------------------------------------------------
# the pipeline
# --------------------------------------------------------------------------------------
def _naming_configured(source_name: str | None) -> bool:
    """True when configuration (env or config.toml) names a convention for this source."""
    candidates: list[tuple[str, ...]] = [("schema", "naming")]
    if source_name:
        candidates.insert(0, ("sources", source_name, "schema", "naming"))
    return config.resolve(*candidates, default=None) is not None


def _switch_naming(schema: Any, naming: Any) -> None:
    """Move a schema to a newly configured naming convention.

    Fails (:class:`~loadstone.schema.naming_change.NamingChangeError`, naming the tables and
    identifiers) when tables that already hold data would get other identifiers: that would
    make second tables and columns next to the loaded ones. Tables without data are renamed.
    """
    current = getattr(schema, "naming_name", None)
    if current is None or current == naming.name():
        return
    from loadstone.schema.naming_change import apply_naming_change

    with_data = [table.name for table in schema.data_tables(seen_data_only=True)]
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
    if hasattr(destination, "capabilities") and hasattr(destination, "name"):
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
        self.progress = progress
        if dev_mode and self.working_dir.exists():
            # dev mode starts from scratch: no state, no schemas, no pending packages
            shutil.rmtree(self.working_dir)
        loaded = state_module.load_local(self.working_dir)
        self._had_local_state = loaded is not None
        self._state: dict[str, Any] = loaded or state_module.new_state(pipeline_name)
        self.schemas: dict[str, Any] = {}
        self._load_local_schemas()

        self.destination = _resolve_destination(
            destination if destination is not None else self._state.get("destination_name")
        )
        self._explicit_dataset_name = dataset_name
        self._dataset_name: str | None = None
        self._dev_suffix = (
            _dt.datetime.now(tz=_dt.timezone.utc).strftime("%Y%m%d%H%M%S") if dev_mode else None
        )
        self._last_trace: PipelineTrace | None = None
        self._steps: dict[str, StepInfo] = {}
        #: the SparkSession normalize runs on (classic or Connect); None: from configuration
        self.spark = spark
        self._normalize_trace: dict[str, Any] = {}

    # -- names ----------------------------------------------------------------------------
    @property
    def state(self) -> dict[str, Any]:
        return self._state

    @property
    def first_run(self) -> bool:
        return bool(self._state.get("_local", {}).get("first_run", True))

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
        return self.schemas[name]

    @property
    def capabilities(self) -> Any:
        return self.destination.capabilities

    def _resolve_naming_name(self, source_name: str | None, schema: Any) -> str:
        """Code (the destination factory) first, then configuration, then the schema's own
        convention (a schema keeps the one it was created with), then the destination's."""
        explicit = getattr(self.destination, "naming_convention", None)
        if explicit is None and schema is not None and not _naming_configured(source_name):
            explicit = _schema_naming_name(schema)
        return config.resolve_naming(
            source_name,
            explicit=explicit,
            destination_preferred=getattr(self.capabilities, "preferred_naming", None),
        )

    def naming_for(self, schema: Any) -> Any:
        """The schema's naming convention sized to the destination's identifier limits."""
        from loadstone.plugin_manager import naming_convention

        name = self._resolve_naming_name(getattr(schema, "name", None), schema)
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
        value = config.get(
            [
                f"destination.{self.destination.name}.enable_dataset_name_normalization",
                "destination.enable_dataset_name_normalization",
            ],
            default=True,
        )
        if isinstance(value, str):
            return value.strip().lower() not in ("false", "0", "no", "off")
        return bool(value)

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
        for path in sorted(self.schemas_dir.glob("*.schema.json")):
            data = json.loads(path.read_text(encoding="utf-8"))
            self.schemas[data["name"]] = Schema.from_dict(data)

    def _save_schema(self, schema: Any) -> None:
        self.schemas_dir.mkdir(parents=True, exist_ok=True)
        data = _schema_to_dict(schema)
        write_json_atomic(self.schemas_dir / f"{data['name']}.schema.json", data)
        self.schemas[data["name"]] = schema
        names = list(self._state.get("schema_names") or [])
        if data["name"] not in names:
            names.append(data["name"])
            self._state["schema_names"] = names
        if not self._state.get("default_schema_name"):
            self._state["default_schema_name"] = data["name"]
        if self.export_schema_path is not None:
            from loadstone.schema.files import export_schema

            self.export_schema_path.mkdir(parents=True, exist_ok=True)
            export_schema(schema, self.export_schema_path)

    def _stamp_state(self) -> None:
        self._state["pipeline_name"] = self.pipeline_name
        self._state["destination_name"] = self.destination.name
        self._state["dataset_name"] = self.dataset_name
        state_module.bump_version(self._state)

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

    def _emit(self, step: str, event: str, **values: Any) -> None:
        if self.progress is not None:
            self.progress(ProgressEvent(step=step, event=event, **values))

    def _emit_step(self, step: StepInfo, event: str, **values: Any) -> None:
        """A progress event carrying the step's running totals (rows, MB, files, elapsed)."""
        elapsed = step.elapsed if step.finished_at is not None else time.time() - step.started_at
        self._emit(
            step.step,
            event,
            rows=step.rows,
            bytes=step.bytes,
            files=step.files,
            tables=len(step.row_counts),
            elapsed=elapsed,
            **values,
        )

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
        if imported is not None and (stored is None or not stored.data_tables()):
            stored = imported
        if stored is None:
            schema = provided if provided is not None else _new_schema(name, None)
            naming = self._resolve_naming_name(name, schema)
            if getattr(schema, "naming_name", None) != naming:
                schema.set_naming(naming)
            return schema
        if provided is None:
            return stored
        # settings (detections, hints, preferred types) and declared tables come from code
        data = _schema_to_dict(stored)
        from_code = _schema_to_dict(provided)
        if from_code.get("settings"):
            data["settings"] = from_code["settings"]
        tables = data.setdefault("tables", {})
        for table_name, table in (from_code.get("tables") or {}).items():
            tables.setdefault(table_name, table)
        return Schema.from_dict(data)

    # -- steps ----------------------------------------------------------------------------
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
    ) -> ExtractResult:
        """Write ``data`` into a new load package (state ``extracted``)."""
        step = StepInfo("extract", time.time())
        self._emit("extract", "started")
        source_name = data.name if isinstance(data, Source) else None
        if callable(data) and getattr(data, "__loadstone_source__", False):
            data = data()
            source_name = data.name
        provided = (
            schema if schema is not None else (data.schema if isinstance(data, Source) else None)
        )
        schema_name = (
            getattr(schema, "name", None)
            or source_name
            or self.default_schema_name
            or self.pipeline_name
        )
        package_schema = self._schema_for_extract(schema_name, provided)
        run_hints = run_hints_of(
            write_disposition=write_disposition,
            columns=columns,
            primary_key=primary_key,
            schema_contract=schema_contract,
            merge_key=merge_key,
        )
        if loader_file_format is not None:
            run_hints["file_format"] = loader_file_format
        if isinstance(data, Source):
            source_defaults: dict[str, Any] = {}
            if data.max_table_nesting is not None:
                source_defaults["max_nesting"] = data.max_table_nesting
            if data.schema_contract is not None:
                source_defaults["schema_contract"] = data.schema_contract
            if data.root_key:
                source_defaults["root_key_propagation"] = True
            if source_defaults:
                for res in data.selected_resources.values():
                    for key, value in source_defaults.items():
                        if key not in res._hints:
                            res._hints[key] = value
        package = LoadPackage.create(
            self.packages_dir, schema_name, data_dir=package_storage.data_dir(self.pipeline_name)
        )
        self._emit("extract", "package_started", load_id=package.load_id)

        def on_progress(rows: int, size: int, files: int) -> None:
            self._emit(
                "extract",
                "progress",
                load_id=package.load_id,
                rows=rows,
                bytes=size,
                files=files,
                elapsed=time.time() - step.started_at,
            )

        sources_state = self._state.setdefault("sources", {})
        source_state = sources_state.setdefault(source_name or schema_name, {})
        try:
            with current.extract_context(self, source_state):
                result = extract_data(
                    package,
                    data,
                    table_name=table_name,
                    run_hints=run_hints,
                    progress=on_progress,
                )
        except BaseException:
            package.delete_data()
            shutil.rmtree(package.root, ignore_errors=True)
            raise
        package.write_schema(_schema_to_dict(package_schema))
        if not source_state:
            sources_state.pop(source_name or schema_name, None)
        self._stamp_state()
        # the state the sources reached travels with the package, in the same atomic switch:
        # a crash before the local state is saved cannot lose it (see _adopt_package_state)
        package.set_state(
            EXTRACTED,
            extracted_rows=result.items,
            extracted_bytes=result.bytes,
            pipeline_state=self._state,
        )
        self._save_schema(package_schema)
        self._save_state()
        step.finished_at = time.time()
        step.load_ids.append(package.load_id)
        step.rows, step.bytes, step.files = result.items, result.bytes, result.files
        step.row_counts = {name: t.items for name, t in result.tables.items()}
        self._steps["extract"] = step
        self._emit(
            "extract",
            "finished",
            load_id=package.load_id,
            rows=result.items,
            bytes=result.bytes,
            files=result.files,
            tables=len(result.tables),
            elapsed=step.elapsed,
        )
        return result

    def normalize(self) -> list[str]:
        """Normalize every extracted package (oldest first); returns their load ids."""
        packages = [p for p in iter_pending(self.packages_dir) if p.state == EXTRACTED]
        if not packages:
            return []
        from loadstone.normalize.contract import NormalizeContext
        from loadstone.plugin_manager import get_normalizer
        from loadstone.spark_session import get_spark_session

        step = self._steps.get("normalize") or StepInfo("normalize", time.time())
        self._steps["normalize"] = step
        self._emit("normalize", "started")
        normalizer = get_normalizer(str(config.get("normalize.normalizer", DEFAULT_NORMALIZER)))
        # a session given to pipeline()/run() is used as is; else it is handed over lazily:
        # the normalizer starts Spark only when it chooses to (``normalize.engine``)
        spark = self.spark if self.spark is not None else get_spark_session
        self._normalize_trace = {"engine": None, "master": None, "remote": None, "chunks": []}
        on_bad_record = str(config.get("normalize.on_bad_record", "fail"))
        done: list[str] = []
        for package in packages:
            self._emit("normalize", "package_started", load_id=package.load_id)
            schema = self._schema_for_package(package)
            naming = self.naming_for(schema)
            _switch_naming(schema, naming)
            load_id = package.load_id

            def chunks_done(done: int, parts: int, load_id: str = load_id) -> None:
                self._emit_step(step, "progress", load_id=load_id, parts_done=done, parts=parts)

            context = NormalizeContext(
                spark=spark,
                naming=naming,
                capabilities=self.capabilities,
                on_bad_record=on_bad_record,
                progress=chunks_done,
                on_chunk=self._record_chunk,
                on_engine=self._record_engine,
            )
            package.reset_normalized()
            package.check_inputs()
            try:
                result = normalizer.normalize(package, schema, context)
                self._check_collisions(result.schema)
            except BadRecordError:
                # the package holds a copy of the bad input: set it aside (kept for a look), so
                # that running again with the fixed input loads it and nothing else
                self._set_aside(package)
                raise
            except LoadstoneError:
                raise
            except Exception as exc:
                raise PipelineError(self.pipeline_name, "normalize", package.load_id, exc) from exc
            tables: dict[str, Any] = {}
            rows = 0
            files = 0
            size = 0
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
            schema_data = _schema_to_dict(result.schema)
            package.write_schema(schema_data)
            self._save_schema(result.schema)
            package.set_state(
                NORMALIZED,
                normalized_tables=tables,
                bad_records=int(result.bad_records),
                new_tables=list(result.new_tables),
                new_columns={k: list(v) for k, v in result.new_columns.items()},
            )
            self._save_state()
            step.load_ids.append(package.load_id)
            step.rows += rows
            step.files += files
            step.bytes += size
            for table_name, info in tables.items():
                step.row_counts[table_name] = step.row_counts.get(table_name, 0) + info["row_count"]
            done.append(package.load_id)
            self._emit_step(step, "package_done", load_id=package.load_id)
        step.finished_at = time.time()
        self._emit_step(step, "finished")
        return done

    @property
    def failed_packages_dir(self) -> Path:
        """Packages whose input could not be normalized, kept for inspection, never retried."""
        return self.working_dir / "failed_packages"

    def _set_aside(self, package: LoadPackage) -> None:
        self.failed_packages_dir.mkdir(parents=True, exist_ok=True)
        shutil.move(str(package.root), str(self.failed_packages_dir / package.root.name))

    def _schema_for_package(self, package: LoadPackage) -> Any:
        """The newest schema of the package's name: the pipeline's, else the package's."""
        schema = self.schemas.get(package.schema_name)
        if schema is not None:
            return schema
        stored = package.read_schema_dict()
        if stored is None:
            return _new_schema(package.schema_name, self._resolve_naming_name(None, None))
        return Schema.from_dict(stored)

    def _check_collisions(self, schema: Any) -> None:
        """Stop before any data moves when identifiers collide in a case-insensitive destination."""
        from loadstone.schema.collisions import check_case_collisions

        check_case_collisions(schema, bool(self.capabilities.has_case_sensitive_identifiers))

    def load(self) -> LoadInfo:
        """Load every normalized package (oldest first) into the destination."""
        self.destination.require_loader()
        info = self._new_info()
        packages = [p for p in iter_pending(self.packages_dir) if p.state == NORMALIZED]
        step = StepInfo("load", time.time())
        self._steps["load"] = step
        self._emit("load", "started")
        for package in packages:
            package_info = self._load_package(package, step)
            info.packages.append(package_info)
        step.finished_at = time.time()
        info.steps = dict(self._steps)
        self._emit_step(step, "finished")
        return info

    def _client(self, schema: Any) -> Any:
        return self.destination.client(schema, self.dataset_name, pipeline_name=self.pipeline_name)

    def _load_package(self, package: LoadPackage, step: StepInfo) -> PackageInfo:
        from loadstone.destinations.contract import LoadRequest, PipelineStateRow

        self._emit("load", "package_started", load_id=package.load_id)
        stored = package.read_schema_dict()
        schema = (
            Schema.from_dict(stored) if stored is not None else self._schema_for_package(package)
        )
        normalized = package.normalized_tables()
        row_counts = {name: t.row_count for name, t in normalized.items()}
        files = [str(f) for t in normalized.values() for f in t.files]
        meta = package.meta
        package_info = PackageInfo(
            load_id=package.load_id,
            schema_name=package.schema_name,
            state=LOADED,
            row_counts=row_counts,
            files=files,
            new_tables=list(meta.get("new_tables", [])),
            new_columns={k: list(v) for k, v in (meta.get("new_columns") or {}).items()},
        )
        try:
            with self._client(schema) as client:
                client.initialize_storage()
                if client.is_package_loaded(package.load_id):
                    package_info.skipped = True
                else:
                    client.update_stored_schema(schema)
                    self._state.setdefault("_local", {})["last_load_id"] = package.load_id
                    self._state["_local"]["first_run"] = False
                    self._save_state()
                    request = LoadRequest(
                        load_id=package.load_id,
                        schema=schema,
                        tables={
                            name: (list(t.files) if t.files else str(t.folder))
                            if t.row_count or t.files
                            else []
                            for name, t in normalized.items()
                        },
                        pipeline_state=PipelineStateRow(
                            pipeline_name=self.pipeline_name,
                            state=state_module.shareable(self._state),
                            version=int(self._state.get("_state_version", 1)),
                            engine_version=state_module.STATE_ENGINE_VERSION,
                            version_hash=self._state.get("_version_hash"),
                            created_at=_dt.datetime.now(tz=_dt.timezone.utc),
                        ),
                    )
                    client.load_package(request)
                self._emit("load", "package_committed", load_id=package.load_id)
        except LoadstoneError:
            raise
        except Exception as exc:
            raise PipelineError(self.pipeline_name, "load", package.load_id, exc) from exc
        package.set_state(LOADED, loaded_at=time.time(), skipped=package_info.skipped)
        if not config.get("load.keep_completed_packages", False):
            package.delete_data()
        step.load_ids.append(package.load_id)
        step.rows += sum(row_counts.values())
        step.files += len(files)
        step.bytes += int(meta.get("extracted_bytes") or 0)
        for name, rows in row_counts.items():
            step.row_counts[name] = step.row_counts.get(name, 0) + rows
        self._emit(
            "load",
            "package_done",
            load_id=package.load_id,
            rows=step.rows,
            files=step.files,
            bytes=step.bytes,
            tables=len(step.row_counts),
            elapsed=time.time() - step.started_at,
        )
        return package_info

    def _new_info(self) -> LoadInfo:
        return LoadInfo(
            pipeline_name=self.pipeline_name,
            destination_name=self.destination.name,
            dataset_name=self.dataset_name,
            destination_location=self._destination_location(),
            first_run=not self._had_local_state,
        )

    def _destination_location(self) -> str | None:
        config_ = getattr(self.destination, "config", {}) or {}
        credentials = config_.get("credentials")
        if isinstance(credentials, (str, Path)):
            return str(credentials)
        if self.destination.name == "duckdb":
            return str(Path.cwd() / f"{self.pipeline_name}.duckdb")
        return None

    # -- run ------------------------------------------------------------------------------
    def run(
        self,
        data: Any = None,
        *,
        table_name: str | None = None,
        write_disposition: Any = None,
        columns: Any = None,
        primary_key: Any = None,
        schema: Any = None,
        loader_file_format: str | None = None,
        schema_contract: Any = None,
        merge_key: Any = None,
        destination: Any = None,
        dataset_name: str | None = None,
        spark: Any = None,
    ) -> LoadInfo:
        """Finish pending packages, then extract, normalize and load ``data``.

        ``spark``: a SparkSession (classic or Spark Connect) to normalize on, from now on.
        """
        if spark is not None:
            self.spark = spark
        self._normalize_trace = {}
        if destination is not None:
            self.destination = _resolve_destination(destination)
        if dataset_name is not None:
            self._explicit_dataset_name = dataset_name
            self._dataset_name = None
        self.destination.require_loader()
        self._steps = {}
        started = time.time()
        trace: dict[str, Any] = {"pipeline_name": self.pipeline_name, "started_at": started}
        try:
            self._restore_from_destination()
            self._drop_incomplete_extracts()
            self._adopt_package_state()
            # a crash left work behind: finish it before adding more
            self.normalize()
            pending_info = self.load() if self._has_normalized() else None
            if data is not None:
                self.extract(
                    data,
                    table_name=table_name,
                    write_disposition=write_disposition,
                    columns=columns,
                    primary_key=primary_key,
                    schema=schema,
                    schema_contract=schema_contract,
                    merge_key=merge_key,
                    loader_file_format=loader_file_format,
                )
                self.normalize()
                info = self.load()
            else:
                info = self._new_info()
            if pending_info is not None:
                info.packages[:0] = pending_info.packages
            info.steps = dict(self._steps)
        except BaseException as exc:
            trace["error"] = f"{type(exc).__name__}: {exc}"
            trace["finished_at"] = time.time()
            trace["steps"] = {n: s.asdict() for n, s in getattr(self, "_steps", {}).items()}
            trace["normalize"] = self._normalize_trace or None
            self._save_trace(trace)
            raise
        trace.update(info.asdict())
        trace["normalize"] = self._normalize_trace or None
        trace["finished_at"] = time.time()
        self._save_trace(trace)
        return info

    def _record_engine(self, choice: EngineChoice) -> None:
        """The engine normalize ran on, for the trace (the last choice of the step wins)."""
        self._normalize_trace.update(
            engine=choice.engine, master=choice.master, remote=choice.remote
        )

    def _record_chunk(self, run: ChunkRun) -> None:
        """Where one chunk ran, for the trace (``pipeline P trace --json``)."""
        self._normalize_trace.setdefault("chunks", []).append(attrs.asdict(run))

    def _drop_incomplete_extracts(self) -> None:
        """A package still ``extracting`` was cut off mid-write: its data never counted."""
        for package in list_packages(self.packages_dir):
            if package.state == EXTRACTING:
                package.delete_data()
                shutil.rmtree(package.root, ignore_errors=True)

    def _has_normalized(self) -> bool:
        return any(p.state == NORMALIZED for p in iter_pending(self.packages_dir))

    def _save_trace(self, trace: dict[str, Any]) -> None:
        self._last_trace = PipelineTrace(trace)
        if self.working_dir.exists():
            write_json_atomic(self.working_dir / TRACE_FILE, trace)

    @property
    def last_trace(self) -> PipelineTrace | None:
        """The trace of the last run (also saved as ``trace.json`` in the working folder)."""
        if self._last_trace is None:
            path = self.working_dir / TRACE_FILE
            if path.exists():
                self._last_trace = PipelineTrace(json.loads(path.read_text(encoding="utf-8")))
        return self._last_trace

    def _restore_from_destination(self) -> None:
        """Without a local folder, take state and schemas from the destination (if any)."""
        if self._had_local_state or self.dev_mode:
            return
        self._had_local_state = True  # ask once per pipeline object
        with self._client(self.default_schema) as client:
            restored = client.get_stored_state(self.pipeline_name)
            if not restored:
                return
            self._state = state_module.merge_restored(self._state, restored)
            self._state.setdefault("_local", {})["first_run"] = False
            self._state["_local"]["restored_from_destination"] = True
            for name in self._state.get("schema_names") or []:
                stored = client.get_stored_schema(name)
                if stored:
                    self._save_schema(Schema.from_dict(stored))
        self._dataset_name = None
        self._save_state()

    # -- inspection -----------------------------------------------------------------------
    def list_pending_packages(self) -> list[LoadPackage]:
        """Packages a crash or failure left between extract and load."""
        return list(iter_pending(self.packages_dir))

    @property
    def has_pending_data(self) -> bool:
        return bool(self.list_pending_packages())

    def list_packages(self) -> list[LoadPackage]:
        return list_packages(self.packages_dir)

    def drop_pending_packages(self) -> list[str]:
        """Delete every package that is not loaded (their data will not be loaded)."""
        dropped: list[str] = []
        for package in list_packages(self.packages_dir):
            if package.state != LOADED:
                package.delete_data()
                shutil.rmtree(package.root, ignore_errors=True)
                dropped.append(package.load_id)
        return dropped

    def drop(self) -> None:
        """Delete the local working folder (state, schemas, packages, trace)."""
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


def pipeline(
    pipeline_name: str | None = None,
    pipelines_dir: str | Path | None = None,
    destination: Any = None,
    dataset_name: str | None = None,
    dev_mode: bool = False,
    import_schema_path: str | Path | None = None,
    export_schema_path: str | Path | None = None,
    progress: ProgressCallback | None = None,
    spark: Any = None,
    **_ignored: Any,
) -> Pipeline:
    """Make (or reopen) the pipeline ``pipeline_name``, like ``dlt.pipeline``."""
    if pipeline_name is None:
        import __main__

        script = Path(getattr(__main__, "__file__", "") or "pipeline").stem
        pipeline_name = f"loadstone_{script}"
    return Pipeline(
        pipeline_name,
        destination,
        dataset_name,
        dev_mode=dev_mode,
        pipelines_dir=pipelines_dir,
        import_schema_path=import_schema_path,
        export_schema_path=export_schema_path,
        progress=progress,
        spark=spark,
    )
