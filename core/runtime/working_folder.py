"""A pipeline's working folder: its state, its schemas and its lock.

``<pipelines_dir>/<pipeline_name>/`` holds ``state.json``, ``schemas/*.schema.json``, the
load packages (``packages/``), the packages set aside (``failed_packages/``) and the trace of
the last run; the lock file lies beside the folder (``drop`` deletes the folder). Every step
reads and writes the state and schemas through one :class:`WorkingFolder`, so that a run that
waited for the lock sees what the run it waited for saved (:meth:`WorkingFolder.locked`).
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from loadstone.exceptions import CorruptFileError, LoadstoneError
from loadstone.exceptions.base import one_line
from loadstone.schema import Schema, Table
from loadstone.storage import state as state_module
from loadstone.storage import state_changes
from loadstone.storage.json_files import read_json_object, write_json_atomic
from loadstone.storage.load_package import LoadPackage, iter_pending
from loadstone.storage.pipeline_lock import (
    LockStatus,
    PipelineLock,
    lock_status,
    read_holder,
)
from loadstone.storage.state import PipelineState

if TYPE_CHECKING:
    from loadstone.runtime.target import DestinationTarget

__all__ = [
    "DESTINATION_TYPE_PREFIX",
    "TRACE_FILE",
    "WorkingFolder",
    "add_state_table",
    "default_pipelines_dir",
    "stored_destination",
]

TRACE_FILE = "trace.json"
#: how dlt names a destination's type in the pipeline state
DESTINATION_TYPE_PREFIX = "dlt.destinations."
_SCHEMA_REPAIR = (
    "delete it: the next run takes the schema from the destination (or from a pending package)"
)


def default_pipelines_dir() -> Path:
    """``$LOADSTONE_HOME/pipelines`` (default ``~/.loadstone/pipelines``)."""
    from loadstone import config

    return config.home_dir() / "pipelines"


def stored_destination(state: Mapping[str, object]) -> tuple[str, str | None] | None:
    """The destination a saved state names: its type, and the name ``destination_name=``
    gave it (None: the type's own); older states named it directly."""
    stored = state.get("destination_type") or state.get("destination_name")
    if not isinstance(stored, str):
        return None
    renamed = state.get("destination_name") if state.get("destination_type") else None
    name = renamed if isinstance(renamed, str) else None
    return stored.removeprefix(DESTINATION_TYPE_PREFIX), name


def add_state_table(schema: Schema, *, normalized: bool = True) -> None:
    """``_dlt_pipeline_state`` belongs to the schema (and the copy stored in ``_dlt_version``)
    from the first load on, as dlt records it: its extract declares the table without the
    row key ``_dlt_id`` and without ``seen-data`` (``normalized=False``); normalize completes
    it (``_dlt_id`` last, ``seen-data``: every load writes its row)."""
    from loadstone.schema.schema import state_table

    name = schema.state_table_name
    known = schema.tables.get(name)
    table = state_table(name)
    if not normalized:
        if known is None:
            columns = [column for key, column in table.columns.items() if key != "_dlt_id"]
            schema.update_table(attrs.evolve(table, columns=columns))
        return
    if known is not None and "_dlt_id" in known.columns and known.seen_data:
        return
    schema.update_table(
        attrs.evolve(table, extra={**table.extra, "x-normalizer": {"seen-data": True}})
    )


class WorkingFolder:
    """The state, schemas and lock of one pipeline, as saved in its working folder.

    ``state`` and ``schemas`` are the in-memory copies every step changes; ``save_state`` /
    ``save_schema`` write them (atomically). The object is mutable on purpose: it is the one
    place where a pipeline's saved facts live while it runs.
    """

    def __init__(
        self,
        pipelines_dir: Path,
        pipeline_name: str,
        *,
        import_schema_path: Path | None = None,
        export_schema_path: Path | None = None,
    ) -> None:
        self.pipeline_name = pipeline_name
        self.pipelines_dir = pipelines_dir
        self.root = pipelines_dir / pipeline_name
        self.import_schema_path = import_schema_path
        self.export_schema_path = export_schema_path
        self.lock = PipelineLock(pipelines_dir, pipeline_name)
        self.state: PipelineState = state_module.new_state(pipeline_name)
        self.schemas: dict[str, Schema] = {}
        #: False until a local state was found or the destination was asked for one
        self.had_local_state = False
        #: an empty ``sources`` entry stays in the state (it was saved so, or a refresh made
        #: it, as dlt 1.31 keeps it); else it is left out until a source keeps state
        self.keep_sources_entry = False
        #: this pipeline object asked its destination for state at least once
        self.synced = False
        self._seen_on_disk: tuple[tuple[str, int, int], ...] = ()

    def open(self, *, wipe: bool = False, lock_timeout: Callable[[], float] = lambda: 0) -> None:
        """Read the saved state and schemas; ``wipe`` (dev mode) first deletes the folder,
        holding the lock (its timeout is read only then: a bad setting fails the run)."""
        if wipe and self.root.exists():
            self.lock.acquire(lock_timeout())
            try:
                shutil.rmtree(self.root)
            finally:
                self.lock.release()
        loaded = state_module.load_local(self.root)
        self.had_local_state = loaded is not None
        self.state = loaded or state_module.new_state(self.pipeline_name)
        self.keep_sources_entry = "sources" in self.state
        self._load_schemas()
        self._seen_on_disk = self._disk_signature()

    # -- folders --------------------------------------------------------------------------
    @property
    def packages_dir(self) -> Path:
        return self.root / "packages"

    @property
    def schemas_dir(self) -> Path:
        return self.root / "schemas"

    @property
    def failed_packages_dir(self) -> Path:
        """Packages whose input could not be normalized, kept for inspection, never retried."""
        return self.root / "failed_packages"

    @property
    def trace_path(self) -> Path:
        return self.root / TRACE_FILE

    # -- the lock -------------------------------------------------------------------------
    @contextlib.contextmanager
    def locked(self, timeout: float, on_wait: Callable[[str], None]) -> Iterator[None]:
        """Hold the pipeline's lock (see :mod:`loadstone.storage.pipeline_lock`); the
        outermost holder first takes what another process saved meanwhile."""
        outermost = not self.lock.held
        self.lock.acquire(timeout, on_wait=on_wait)
        try:
            if outermost:
                self._refresh_from_disk()
                self.finish_taking_back()  # a kill may have cut one short
            yield
        finally:
            self.lock.release()

    def _refresh_from_disk(self) -> None:
        """Take the state and schemas another process saved since this object read them.

        A run that waited for the lock would otherwise save its stale copy over the newer
        state of the run it waited for.
        """
        if self._disk_signature() == self._seen_on_disk:
            return
        on_disk = state_module.load_local(self.root)
        if on_disk is not None:
            self.state = on_disk
            self.keep_sources_entry = "sources" in on_disk
            self.had_local_state = True
        edited = {name: schema for name, schema in self.schemas.items() if schema.is_modified}
        self._load_schemas()
        for name, schema in edited.items():  # changed in code since its save (dlt keeps that)
            saved = self.schemas.get(name)
            if saved is not None and saved.version_hash == schema.stored_version_hash:
                self.schemas[name] = schema

    def _disk_signature(self) -> tuple[tuple[str, int, int], ...]:
        """(name, mtime, size) of the state and schema files: changes when anyone saves them."""
        paths = [self.root / state_module.STATE_FILE]
        if self.schemas_dir.is_dir():
            paths += sorted(self.schemas_dir.glob("*.schema.json"))
        found = []
        for path in paths:
            with contextlib.suppress(OSError):
                stat = path.stat()
                found.append((path.name, stat.st_mtime_ns, stat.st_size))
        return tuple(found)

    @property
    def lock_status(self) -> LockStatus:
        """Whether the lock is held, and whether its recorded holder is alive."""
        return lock_status(self.lock.path)

    def running_holder(self) -> str:
        holder = read_holder(self.lock.path)
        return holder.describe() if holder else "another process"

    # -- state ----------------------------------------------------------------------------
    def stamp_state(self, target: DestinationTarget) -> None:
        """Name the pipeline, destination and dataset in the state as dlt does (the destination
        by its type, ``dlt.destinations.<type>``; ``destination_name`` the name
        ``destination_name=`` gave it, else None) and bump its version when the content
        changed."""
        self.state["pipeline_name"] = self.pipeline_name
        destination = target.destination
        self.state["destination_type"] = f"{DESTINATION_TYPE_PREFIX}{destination.kind}"
        renamed = destination.name != destination.kind
        self.state["destination_name"] = destination.name if renamed else None
        self.state["dataset_name"] = target.given_dataset_name
        if not self.state.get("sources") and not self.keep_sources_entry:
            self.state.pop("sources", None)
        state_module.bump_version(self.state)

    def save_state(self, target: DestinationTarget) -> None:
        self.stamp_state(target)
        state_module.save_local(self.root, self.state)

    def local_state(self) -> dict[str, object]:
        """The state's ``_local`` part (what never leaves this machine), created if missing."""
        local: dict[str, object] = self.state.setdefault("_local", {})
        return local

    def state_changed_since_extract(self) -> bool:
        """Whether a new package carries the state to the destination: as dlt, only when it
        changed since the last package that did (``_local._last_extracted_hash``)."""
        local = self.local_state()
        changed = local.get("_last_extracted_hash") != self.state.get("_version_hash")
        local["_last_extracted_hash"] = self.state.get("_version_hash")
        return changed

    def remove_packages(self, packages: Sequence[LoadPackage], remove: Callable[[], None]) -> None:
        """Remove packages that will never load (``remove`` moves or deletes them) and take
        back the changes their extracts made to the sources' state, so the next run reads
        their rows again (:mod:`loadstone.storage.state_changes`). The journal is written
        first: a kill at any moment leaves the rest to the next run that takes the lock.

        When a removed package carried the state, the next package carries it whatever it
        holds (else a run that extracts the same state again sends none, and a folder
        restored from the destination reads its rows a second time); removing packages that
        did not leaves it alone, so the destination gets no second row of an unchanged
        state (dlt 1.31 writes none, differential program p617)."""
        carried = any(_carried_state(p) for p in packages)
        if carried and self.local_state().pop("_last_extracted_hash", None) is not None:
            state_module.save_local(self.root, self.state)
        changes = state_changes.in_take_back_order(
            [state_changes.carried_changes(p) for p in packages]
        )
        if not changes:
            remove()
            return
        state_changes.write_journal(self.root, changes)
        remove()
        # the changes in hand, not the journal's text: values keep their types
        self._take_back(changes)

    def _take_back(self, changes: Sequence[state_changes.StateChange]) -> None:
        if state_changes.take_back(self.state, changes):
            state_module.bump_version(self.state)
            state_module.save_local(self.root, self.state)
        state_changes.clear_journal(self.root)

    def finish_taking_back(self) -> None:
        """Take back the changes the journal lists (idempotent), save, remove the journal."""
        changes = state_changes.read_journal(self.root)
        if changes is not None:
            self._take_back(changes)

    def adopt_package_state(self) -> None:
        """Take the state a pending package carries when it is newer than the local state."""
        for package in iter_pending(self.packages_dir):
            carried = state_module.to_live(package.meta.get("pipeline_state"))
            if (
                isinstance(carried, dict)
                and carried
                and int(carried.get("_state_version", 0)) > int(self.state.get("_state_version", 0))
            ):
                local = self.state.get("_local", {})
                self.state = dict(carried)
                self.keep_sources_entry = "sources" in carried
                self.state["_local"] = {**carried.get("_local", {}), **local}
                state_module.save_local(self.root, self.state)

    # -- schemas --------------------------------------------------------------------------
    def _load_schemas(self) -> None:
        if not self.schemas_dir.is_dir():
            return
        for path in sorted(self.schemas_dir.glob("*.schema.json")):
            data = read_json_object(path, repair=_SCHEMA_REPAIR, required=("name",))
            try:
                self.schemas[data["name"]] = Schema.from_dict(data)
            except (LoadstoneError, ValueError, KeyError, TypeError) as error:
                raise CorruptFileError(path, one_line(error), _SCHEMA_REPAIR) from None

    def start_afresh(self) -> None:
        """Forget the state and the schemas, as a pipeline that never ran (the caller saves
        the state); packages and the trace stay."""
        self.state = state_module.new_state(self.pipeline_name)
        self.keep_sources_entry = False
        self.schemas = {}
        if self.schemas_dir.is_dir():
            for path in self.schemas_dir.glob("*.schema.json"):
                path.unlink()

    def register_schema(self, schema: Schema) -> None:
        """Name a schema in the state (before the state is stamped: one version per run)."""
        name = schema.name
        self.schemas[name] = schema
        names = list(self.state.get("schema_names") or [])
        if name not in names:  # in name order, as dlt 1.31 keeps them
            self.state["schema_names"] = sorted([*names, name])
        if not self.state.get("default_schema_name"):
            self.state["default_schema_name"] = name

    def save_schema(self, schema: Schema) -> None:
        """Write the schema into the folder (and the export folder), naming it in the state."""
        self.schemas_dir.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.schemas_dir / f"{schema.name}.schema.json", schema.to_dict())
        self.register_schema(schema)
        if self.export_schema_path is not None:
            from loadstone.schema.files import export_schema

            self.export_schema_path.mkdir(parents=True, exist_ok=True)
            export_schema(schema, self.export_schema_path)

    def imported_schema(self, name: str) -> Schema | None:
        """``<import_schema_path>/<name>.schema.yaml`` when the pipeline was given that folder."""
        if self.import_schema_path is None:
            return None
        from loadstone.schema.files import import_schema

        imported: Schema | None = import_schema(name, self.import_schema_path)
        return imported

    def seed_import_schema(self, package: LoadPackage, schema: Schema) -> None:
        """An empty import folder gets the schema of the first extract, as dlt writes it for
        the user to edit: the tables the package fills, with their resource and disposition
        (no columns yet). It is read back only while the pipeline has no tables."""
        folder = self.import_schema_path
        if folder is None or self.imported_schema(schema.name) is not None:
            return
        # imported here, past the check: a pipeline without the folder never needs YAML
        from loadstone.schema.files import export_schema
        from loadstone.schema.hints import disposition_of

        seed = schema.copy()
        naming = seed.naming
        for source_name, hints in package.table_hints().items():
            name = naming.normalize_tables_path(source_name)
            if not seed.has_table(name):
                disposition = disposition_of(hints)[0] or "append"
                seed.update_table(Table(name, write_disposition=disposition, resource=source_name))
        add_state_table(seed, normalized=False)  # the schema as the extract saved it (dlt's)
        folder.mkdir(parents=True, exist_ok=True)
        export_schema(seed, folder)

    def schema_for_package(self, package: LoadPackage) -> Schema | None:
        """The newest schema of the package's name: the pipeline's, else the package's."""
        schema = self.schemas.get(package.schema_name)
        return schema if schema is not None else package.read_schema()


def _carried_state(package: LoadPackage) -> bool:
    """Whether the package carried the pipeline state; a damaged one (its ``package.json``
    unreadable) may have."""
    if package.damage is not None:
        return True
    return bool(package.meta.get("carries_state", True))
