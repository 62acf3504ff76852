"""The part of a pipeline's API used outside a run: paths, the lock's holder, the last
trace, the packages by state, the drops (dlt's ``list_*`` / ``drop_*``), and the destination
reached without loading (``sync_schema``, ``destination_client``).

:class:`PipelinePackages` is a base class of :class:`~loadstone.pipelines.pipeline.Pipeline`:
these members read the :class:`~loadstone.runtime.working_folder.WorkingFolder`, call
:mod:`loadstone.pipelines.recovery` / :mod:`loadstone.runtime.refresh` or open a client of
the :class:`~loadstone.runtime.target.DestinationTarget`, and keeping
them here leaves the pipeline module to the steps and the run.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from loadstone.destinations.contract import encode_state
from loadstone.exceptions import PackageNotFound
from loadstone.load.step import package_info
from loadstone.pipelines import recovery
from loadstone.runtime.load_info import LoadJobInfo, LoadPackageInfo
from loadstone.runtime.refresh import drop_resources
from loadstone.runtime.trace import PipelineTrace
from loadstone.storage import state as state_module
from loadstone.storage.json_files import read_json_object
from loadstone.storage.load_package import (
    EXTRACTED,
    LOADED,
    NORMALIZED,
    LoadPackage,
    iter_pending,
    list_packages,
)

if TYPE_CHECKING:
    from loadstone.destinations.contract import DestinationClient
    from loadstone.runtime.recorder import StepRecorder
    from loadstone.runtime.target import DestinationTarget
    from loadstone.runtime.working_folder import WorkingFolder
    from loadstone.schema import Schema
    from loadstone.schema.stored import TTableSchema
    from loadstone.storage.pipeline_lock import LockStatus

__all__ = ["PipelinePackages"]


class PipelinePackages:
    """A pipeline's folder, packages and drops; the pipeline provides what is declared
    first (its folder, recorder, destination target, lock and default schema)."""

    folder: WorkingFolder
    recorder: StepRecorder

    def _target(self) -> DestinationTarget:
        raise NotImplementedError

    def _locked(self, timeout: float | None = None) -> contextlib.AbstractContextManager[None]:
        raise NotImplementedError

    @property
    def default_schema(self) -> Schema:
        raise NotImplementedError

    @property
    def working_dir(self) -> str:
        """The pipeline's working folder, a string as dlt's."""
        return str(self.folder.root)

    @property
    def packages_dir(self) -> Path:
        return self.folder.packages_dir

    @property
    def schemas_dir(self) -> Path:
        return self.folder.schemas_dir

    @property
    def failed_packages_dir(self) -> Path:
        """Packages whose input could not be normalized, kept for inspection, never retried."""
        return self.folder.failed_packages_dir

    @property
    def is_running_elsewhere(self) -> bool:
        """Whether another process holds this pipeline's lock right now."""
        return not self.folder.lock.held and self.lock_status.running

    @property
    def lock_status(self) -> LockStatus:
        """Whether the lock is held, and whether its recorded holder is alive."""
        return self.folder.lock_status

    def running_holder(self) -> str:
        return self.folder.running_holder()

    @property
    def last_trace(self) -> PipelineTrace | None:
        """The trace of the last run (also saved as ``trace.json`` in the working folder)."""
        if self.recorder.last_trace is None:
            path = self.folder.trace_path
            if path.exists():
                repair = "delete it: it only describes the last run"
                self.recorder.last_trace = PipelineTrace(read_json_object(path, repair=repair))
        return self.recorder.last_trace

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

    def list_completed_load_packages(self) -> list[str]:
        """Load ids of the packages loaded, oldest first (dlt's name)."""
        return [p.load_id for p in self.list_packages() if p.damage is None and p.state == LOADED]

    @property
    def has_data(self) -> bool:
        """Whether the pipeline holds anything: schemas, packages, or loads it remembers."""
        return bool(
            self.folder.schemas or self.folder.state.get("schema_names") or self.list_packages()
        )

    def get_load_package_info(self, load_id: str) -> LoadPackageInfo:
        """A package's state, tables and schema changes (dlt's ``get_load_package_info``);
        an unknown load id raises :class:`PackageNotFound`."""
        for package in self.list_packages():
            if package.root.name == load_id and package.damage is None:
                first_run = bool(
                    package.meta.get("first_run")
                )  # its load created the system tables
                info = package_info(
                    package, package.read_schema(), state=package.state, first_run=first_run
                )
                if package.state == EXTRACTED:  # its jobs are its extracted tables, as dlt's
                    info.row_counts = _extracted_rows(package)
                return info
        raise PackageNotFound(f"Package with `load_id={load_id}` could not be found")

    def get_load_package_state(self, load_id: str) -> dict[str, Any]:
        """dlt's ``get_load_package_state``: the package's own state document (its creation
        time, versions, and the pipeline state row it carries to ``_dlt_pipeline_state``
        when the run changed the state); an unknown load id raises PackageNotFound."""
        for package in self.list_packages():
            if package.root.name == load_id and package.damage is None:
                return _package_state(package)
        raise PackageNotFound(f"Package with `load_id={load_id}` could not be found")

    def list_failed_jobs_in_package(self, load_id: str) -> list[LoadJobInfo]:
        """dlt's failed jobs of a package: none here (a failing package fails its load whole
        and stays pending or is set aside); an unknown load id raises PackageNotFound."""
        self.get_load_package_info(load_id)
        return []

    def list_extracted_resources(self) -> list[str]:
        """The extracted files waiting for normalize (dlt's name), as paths."""
        return [
            str(file.path)
            for package in self.list_pending_packages()
            if package.state == EXTRACTED
            for file in package.extracted_files()
        ]

    def list_packages(self) -> list[LoadPackage]:
        return list_packages(self.packages_dir)

    def failed_packages(self) -> list[tuple[str, str]]:
        """(load id, cause) of every package set aside, oldest first."""
        return recovery.failed_packages(self.folder)

    def committed_packages(self) -> list[str]:
        """Load ids of pending packages the destination already committed (read only).

        A run killed between the destination's COMMIT and the package's state switch leaves
        a package that looks pending; its ``_dlt_loads`` row says it is loaded. The next run
        (or ``load``) marks it so without loading it again, and does not extract its input
        again either.
        """
        target = self._target()
        return recovery.committed_packages(self.folder, target, lambda: self.default_schema)

    def drop_pending_packages(self, with_partial_loads: bool = True) -> list[str]:
        """Delete every package that is not loaded (their data will not be loaded).

        Refuses (:class:`PipelineLockedError`) while a run holds the pipeline; a package the
        destination already committed is marked loaded instead of dropped; a package whose
        own metadata is damaged is dropped all the same. ``with_partial_loads`` is dlt's,
        accepted: a package loads in one transaction, so none is ever partly loaded.
        """
        del with_partial_loads
        with self._locked(timeout=0):
            target = self._target()
            return recovery.drop_pending_packages(self.folder, target, lambda: self.default_schema)

    def abort_packages(self, load_id: str | None = None, dry_run: bool = False) -> AbortPlan | None:
        """dlt 1.31's way to stop waiting for pending packages: the plan names the normalized
        package aborted (``load_id``, else the oldest), the other pending ones deleted and
        the package the state is restored from; ``dry_run`` only returns it, None when
        nothing is pending. Carried out as :meth:`drop_pending_packages` (every pending
        package goes, with the state changes its extract made); the aborted one is not kept
        among the completed packages, as dlt keeps it."""
        normalized = self.list_normalized_load_packages()
        extracted = self.list_extracted_load_packages()
        if load_id is not None and load_id not in normalized:
            raise PackageNotFound(f"Package with `load_id={load_id}` could not be found")
        if not normalized and not extracted:
            return None
        aborted = load_id or (normalized[0] if normalized else None)
        plan = AbortPlan(
            package_to_abort=None if aborted is None else _aborted(aborted),
            packages_to_delete=[n for n in normalized if n != aborted],
            extracted_packages_to_delete=extracted,
            restore_from_load_id=aborted,
        )
        if not dry_run:
            self.drop_pending_packages()
        return plan

    def drop_resources(self, resources: Sequence[str] | None = None) -> list[str]:
        """Drop the tables of ``resources`` (all data tables when None) from the destination
        and the schema, and reset their state: the next run loads them from scratch (the CLI's
        ``drop``). Returns the dropped table names."""
        with self._locked():
            target = self._target()
            return drop_resources(self.folder, target, self.default_schema, resources)

    def _drop_folder(self) -> None:
        """Delete the local working folder (state, schemas, packages, trace)."""
        with self._locked(timeout=0):
            if self.folder.root.exists():
                shutil.rmtree(self.folder.root)

    # -- the destination, without loading ----------------------------------------------
    def destination_client(self, schema_name: str | None = None) -> DestinationClient:
        """A client on the dataset for a schema (the default one); a context manager."""
        schema = self.folder.schemas[schema_name] if schema_name else self.default_schema
        return self._target().client(schema)

    def sync_schema(self, schema_name: str | None = None) -> dict[str, TTableSchema]:
        """Create or update the destination's tables of a schema (the default one) without
        loading data; returns the schema's tables when anything changed, else ``{}``, as
        dlt's ``sync_schema``."""
        schema = self.folder.schemas[schema_name] if schema_name else self.default_schema
        self._target().destination.require_loader()
        with self._locked(), self._target().client(schema) as client:
            client.initialize_storage()
            changed = client.update_stored_schema(schema)
        return {name: table.to_dict() for name, table in schema.tables.items()} if changed else {}


class AbortedPackage(TypedDict):
    """The package an abort stops (dlt's ``TAbortPlan['package_to_abort']``): a package loads
    in one transaction here, so it has no jobs that ended, failed or committed apart."""

    load_id: str
    terminal_jobs: list[str]
    transient_jobs: list[str]
    interrupted_jobs: list[str]
    committed_jobs: list[str]


class AbortPlan(TypedDict):
    """What :meth:`PipelinePackages.abort_packages` does (dlt 1.31's ``TAbortPlan``)."""

    package_to_abort: AbortedPackage | None
    packages_to_delete: list[str]
    extracted_packages_to_delete: list[str]
    restore_from_load_id: str | None


def _aborted(load_id: str) -> AbortedPackage:
    return AbortedPackage(
        load_id=load_id, terminal_jobs=[], transient_jobs=[], interrupted_jobs=[], committed_jobs=[]
    )


def _extracted_rows(package: LoadPackage) -> dict[str, int]:
    """Rows per table of an extracted package, in the order the tables were extracted."""
    rows: dict[str, int] = {}
    for file in package.extracted_files():
        rows[file.table_name] = rows.get(file.table_name, 0) + int(file.items or 0)
    return rows


def _package_state(package: LoadPackage) -> dict[str, Any]:
    """A package's state as dlt 1.31 shapes it; ``load_metrics`` is empty, as loadstone
    keeps no per-job metrics (its packages load whole)."""
    meta = package.meta
    created_at = _dt.datetime.fromtimestamp(float(meta.get("created_at") or 0), _dt.timezone.utc)
    document: dict[str, Any] = {
        "created_at": created_at,
        "load_metrics": {},
        "_state_version": 1,
        "_state_engine_version": 1,
    }
    carried = meta.get("pipeline_state")
    if isinstance(carried, dict) and carried and meta.get("carries_state", True):
        document["pipeline_state"] = {
            "version": int(carried.get("_state_version", 1)),
            "engine_version": state_module.STATE_ENGINE_VERSION,
            "pipeline_name": carried.get("pipeline_name", package.pipeline_hint),
            "state": encode_state(state_module.shareable(state_module.to_live(carried))),
            "created_at": created_at,
            "version_hash": carried.get("_version_hash"),
            "_dlt_load_id": package.load_id,
        }
    document["_version_hash"] = state_module.state_hash(
        {k: v for k, v in document.items() if k != "created_at"}
    )
    return document
