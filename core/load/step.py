"""The load step: every normalized package -> the destination, in its own transaction.

:class:`LoadStep` takes the pipeline's normalized packages oldest first and hands each to the
destination's client as one :class:`~loadstone.destinations.contract.LoadRequest` (its tables'
files, its schema, the pipeline state row when the package carries one). The client commits
the data and the package's ``_dlt_loads`` row together, so a package found committed is
marked loaded without loading it again. A package the destination refuses for its *data* is
set aside and the schema changes it brought are taken back. It is given a
:class:`LoadContext`, never the pipeline, so it runs on its own::

    info = LoadStep(LoadContext(folder, target, StepRecorder())).load_pending()
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

from loadstone.destinations.contract import LoadFileSpec, LoadRequest, PipelineStateRow
from loadstone.destinations.overlap import OverlapsNormalize
from loadstone.exceptions import PackageDataError, PipelineStepFailed
from loadstone.load.overlap import OverlapFeed
from loadstone.runtime import settings as run_settings
from loadstone.runtime.load_info import LoadInfo, PackageInfo
from loadstone.runtime.package_details import package_details
from loadstone.runtime.package_outcome import complete_package, forget_schema_changes, set_aside
from loadstone.schema import Schema
from loadstone.storage import state as state_module
from loadstone.storage.load_package import LOADED, NORMALIZED, LoadPackage, iter_pending
from loadstone.storage.state import state_row_count

if TYPE_CHECKING:
    from loadstone.runtime.load_info import StepInfo
    from loadstone.runtime.recorder import StepRecorder
    from loadstone.runtime.target import DestinationTarget
    from loadstone.runtime.working_folder import WorkingFolder

__all__ = ["LoadContext", "LoadStep", "package_info"]


def _no_package(_step: str, _load_id: str) -> None:
    return None


@attrs.frozen
class LoadContext:
    """What the load step needs: the folder, the destination and dataset, the recorder;
    ``on_package`` hears of each package started."""

    folder: WorkingFolder
    target: DestinationTarget
    recorder: StepRecorder
    on_package: Callable[[str, str], None] = _no_package


def _replaced_without_data(package: LoadPackage, schema: Schema) -> dict[str, LoadFileSpec]:
    """Root tables a ``replace`` resource of the package fills that got no rows this time:
    loaded with no files, so they are emptied, as dlt empties them."""
    from loadstone.schema.hints import disposition_of

    naming = schema.naming
    empty: dict[str, LoadFileSpec] = {}
    for source_name, hints in package.table_hints().items():
        name = naming.normalize_tables_path(source_name)
        table = schema.tables.get(name)
        if table is None or table.parent is not None:
            continue
        if (disposition_of(hints)[0] or table.write_disposition) == "replace":
            empty[name] = []
    return empty


class LoadStep:
    """Loads the normalized packages of one working folder into one dataset."""

    def __init__(self, context: LoadContext) -> None:
        self.context = context

    @property
    def folder(self) -> WorkingFolder:
        return self.context.folder

    def new_info(self) -> LoadInfo:
        """An empty load info naming the pipeline, destination and dataset."""
        target = self.context.target
        return LoadInfo(
            pipeline_name=target.pipeline_name,
            destination_name=target.destination.name,
            destination_kind=target.destination.kind,
            dataset_name=target.dataset_name,
            destination_location=target.location(),
            # read before the load: True until a load succeeded
            first_run=bool(self.folder.state.get("_local", {}).get("first_run", True)),
        )

    def load_pending(self, begun: dict[str, OverlapFeed] | None = None) -> LoadInfo:
        """Load every normalized package (oldest first); the info lists them.

        ``begun``: packages whose load began while they were normalized (:meth:`begin`),
        by load id; each is finished (or, on failure, rolled back) here.
        """
        begun = dict(begun or {})
        info = self.new_info()
        packages = [p for p in iter_pending(self.folder.packages_dir) if p.state == NORMALIZED]
        recorder = self.context.recorder
        try:
            step = recorder.begin("load")
            for package in packages:
                info.packages.append(
                    self.load_package(package, step, begun.pop(package.load_id, None))
                )
        finally:
            for feed in begun.values():  # a package not loaded (an earlier one failed)
                feed.abort()
        recorder.finish(step)
        info.steps = dict(recorder.steps)
        return info

    def begin(self, package: LoadPackage) -> OverlapFeed | None:
        """Open ``package``'s load before it is normalized, where the destination can load
        files while later ones are normalized (:mod:`loadstone.destinations.overlap`) and
        ``load.overlap_normalize`` allows; None: it loads after normalize, as always."""
        if not run_settings.overlap_normalize() or package.remote is not None:
            return None
        target = self.context.target
        schema = self.folder.schema_for_package(package)
        client = target.client(schema or target.new_schema(package.schema_name, None))
        try:
            if not isinstance(client, OverlapsNormalize):
                client.close()
                return None
            # the dataset is made inside the package's transaction: a failed normalize
            # leaves the destination as it found it
            if client.is_package_loaded(package.load_id):
                client.close()
                return None
            load = client.begin_package(package.load_id)
        except BaseException:
            client.close()
            raise
        return OverlapFeed(client, load, self.context.recorder, package.load_id)

    def load_package(
        self, package: LoadPackage, step: StepInfo, begun: OverlapFeed | None = None
    ) -> PackageInfo:
        """Load one package and switch it to ``loaded``; its failures name it."""
        self.context.on_package("load", package.load_id)
        schema = package.read_schema()
        if schema is None:
            schema = self.folder.schema_for_package(package)
        if schema is None:
            schema = self.context.target.new_schema(package.schema_name, None)
        first = bool(self.folder.state.get("_local", {}).get("first_run", True))
        entry = package_info(package, schema, first_run=first)
        keep = run_settings.keep_completed_packages()  # read before the commit, not after
        name = self.folder.pipeline_name
        try:
            with package.local_copies():
                if begun is None:
                    entry.skipped = self._load_into_destination(package, schema)
                else:
                    self._finish_begun(package, schema, begun)
        except PipelineStepFailed:
            raise
        except PackageDataError as exc:  # refused for its data: it would fail every run
            set_aside(self.folder, package, str(exc))
            forget_schema_changes(self.folder, package)
            raise PipelineStepFailed(name, "load", package.load_id, exc) from exc
        except Exception as exc:
            raise PipelineStepFailed(name, "load", package.load_id, exc) from exc
        complete_package(self.folder, package, skipped=entry.skipped, keep=keep, first_run=first)
        entry.completed_at = _dt.datetime.now(tz=_dt.timezone.utc).timestamp()
        meta = package.meta
        self.context.recorder.package_done(
            step,
            package.load_id,
            rows=sum(entry.row_counts.values()),
            # what was loaded: the normalized files (a package of an older version: its input)
            size=int(meta.get("normalized_bytes", meta.get("extracted_bytes")) or 0),
            files=len(entry.files),
            row_counts=entry.row_counts,
        )
        return entry

    def _load_into_destination(self, package: LoadPackage, schema: Schema) -> bool:
        """Load the package in the destination's transaction; True when it was there already."""
        recorder = self.context.recorder
        with self.context.target.client(schema) as client:
            client.initialize_storage()
            if client.is_package_loaded(package.load_id):
                recorder.emit("load", "package_committed", load_id=package.load_id)
                return True
            # load_package applies the schema's changes itself, in the package's transaction:
            # migrating here first would run every migration twice per package
            self._moved_state(package)
            client.load_package(self._load_request(package, schema))
            recorder.emit("load", "package_committed", load_id=package.load_id)
        return False

    def _finish_begun(self, package: LoadPackage, schema: Schema, begun: OverlapFeed) -> None:
        """Commit a package whose load began while it was normalized (:meth:`begin`)."""
        try:
            request = self._load_request(package, schema)
            self._moved_state(package)
            if begun.client.dataset_name != self.context.target.dataset_name:
                begun.abort()  # the dataset's name changed with the schema: load it anew
                with self.context.target.client(schema) as client:
                    client.load_package(request)
            else:
                begun.finish(request)
        except BaseException:
            begun.abort()
            raise
        begun.client.close()
        self.context.recorder.emit("load", "package_committed", load_id=package.load_id)

    def _moved_state(self, package: LoadPackage) -> None:
        """The folder's state names the package as the last load before it commits."""
        local = self.folder.local_state()
        local["last_load_id"] = package.load_id
        local["first_run"] = False
        self.folder.save_state(self.context.target)

    def _load_request(self, package: LoadPackage, schema: Schema) -> LoadRequest:
        tables: dict[str, LoadFileSpec] = _replaced_without_data(package, schema)
        for name, table in package.normalized_tables().items():
            if table.row_count or table.files:
                tables[name] = list(table.files) if table.files else str(table.folder)
            else:
                tables[name] = []
        return LoadRequest(
            load_id=package.load_id,
            schema=schema,
            naming=self.context.target.naming_for(schema),
            tables=tables,
            pipeline_state=self._state_row() if package.meta.get("carries_state", True) else None,
            package_dir=package.root,
        )

    def _state_row(self) -> PipelineStateRow:
        state = self.folder.state
        return PipelineStateRow(
            pipeline_name=self.folder.pipeline_name,
            state=state_module.shareable(state),
            version=int(state.get("_state_version", 1)),
            engine_version=state_module.STATE_ENGINE_VERSION,
            version_hash=state.get("_version_hash"),
            created_at=_dt.datetime.now(tz=_dt.timezone.utc),
        )


def package_info(
    package: LoadPackage, schema: Schema | None, state: str = LOADED, *, first_run: bool = False
) -> PackageInfo:
    """The package's entry in a load info (``state``: loaded, the load's view of it)."""
    normalized = package.normalized_tables()
    meta = package.meta
    return PackageInfo(
        load_id=package.load_id,
        schema_name=package.schema_name,
        state=state,
        row_counts={name: t.row_count for name, t in normalized.items()},
        files=[str(f) for t in normalized.values() for f in t.files],
        new_tables=list(meta.get("new_tables", [])),
        new_columns={k: list(v) for k, v in (meta.get("new_columns") or {}).items()},
        state_table=next(iter(state_row_count(package, schema)), None) if schema else None,
        **package_details(package, schema, first_run=first_run),
    )
