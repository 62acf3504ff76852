"""The extract step: data -> one new load package (state ``extracted``), with its schema.

:class:`ExtractStep` writes what a run is given into a new package of the pipeline's working
folder, applies ``refresh=`` first, and records what the sources' state reached: in the
package itself (one atomic switch with its data, so a crash cannot lose it) and in the
folder. It is given an :class:`ExtractContext` -- the folder, the destination target, the
recorder -- never the pipeline, so it runs on its own::

    step = ExtractStep(ExtractContext(folder, target, StepRecorder()))
    result = step.extract([{"id": 1}], "items", TableHints(), None, None)
"""

from __future__ import annotations

import contextlib
import copy
import shutil
import time
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from typing import TYPE_CHECKING, Any

import attrs

from loadstone.exceptions import (
    DataValidationError,
    ExtractError,
    InvalidTableName,
    TablePropertiesConflictException,
)
from loadstone.exceptions.base import os_error_text
from loadstone.extract.decorators import is_source_factory
from loadstone.extract.extract_schema import (
    add_root_tables,
    check_frozen_tables,
    new_table_discards,
)
from loadstone.extract.extractor import ExtractResult, input_files_of, tables_by_resource
from loadstone.extract.extractor import extract as extract_data
from loadstone.extract.resource_hints import TableHints, check_nested_links
from loadstone.extract.source import Source
from loadstone.runtime.refresh import apply_to_destination, plan_refresh, reset_state
from loadstone.schema import Schema, Table
from loadstone.storage import package_storage
from loadstone.storage.load_package import EXTRACTED, InputFingerprint, LoadPackage
from loadstone.storage.loaded_inputs import LoadedInputs
from loadstone.storage.state import to_stored
from loadstone.storage.state_changes import record_changes, sources_snapshot, stored_changes
from loadstone.typing import TDataItem, TDataItems

if TYPE_CHECKING:
    from loadstone.naming import NamingConvention
    from loadstone.runtime.load_info import StepInfo
    from loadstone.runtime.recorder import StepRecorder
    from loadstone.runtime.target import DestinationTarget
    from loadstone.runtime.working_folder import WorkingFolder

__all__ = ["ExtractContext", "ExtractStep", "apply_source_defaults", "fingerprint"]

#: the state of one source, as resources read and change it
SourceState = dict[str, TDataItem]


def _no_scope(
    _state: SourceState, _source: Source | None
) -> contextlib.AbstractContextManager[None]:
    return contextlib.nullcontext()


def _no_package(_step: str, _load_id: str) -> None:
    return None


@attrs.frozen
class ExtractContext:
    """What the extract step needs: where packages go, where data is sent, what it reports.

    ``scope`` is entered around the user's code with the source's state and the source (the pipeline sets
    ``loadstone.current`` there); ``on_package`` hears of each package started.
    """

    folder: WorkingFolder
    target: DestinationTarget
    recorder: StepRecorder
    scope: Callable[[SourceState, Source | None], contextlib.AbstractContextManager[None]] = (
        _no_scope
    )
    on_package: Callable[[str, str], None] = _no_package


def fingerprint(pipeline_name: str, path: object) -> InputFingerprint:
    """A local file's size and mtime, or an object's size and etag (read where it is)."""
    from pathlib import Path

    if isinstance(path, Path):
        return InputFingerprint.of(path)
    size, etag = package_storage.object_fingerprint(pipeline_name, str(path))
    return InputFingerprint.of_object(str(path), size, etag)


def apply_source_defaults(data: Source, schema: Schema) -> None:
    """A source's nesting limit goes into ``schema``'s normalizer settings
    (``normalizers.json.config.max_nesting``), as dlt 1.31 keeps it: the tables of resources
    without a limit of their own follow it and carry no ``max_nesting`` of their own. Its root
    key setting becomes a default of its resources (its contract is the schema's:
    :func:`_schema_contract_given`)."""
    if data.max_table_nesting is not None:
        schema.update_json_normalizer_config(max_nesting=data.max_table_nesting)
    defaults: dict[str, object] = {}
    if data.root_key:
        defaults["root_key_propagation"] = True
    for res in data.selected_resources.values():
        for key, value in defaults.items():
            if key not in res._hints:
                res._hints[key] = value


#: the schema's contract before an extract that was not given one
_NOT_GIVEN: object = object()


@contextlib.contextmanager
def _schema_contract_given(schema: Schema, data: TDataItems, hints: TableHints) -> Iterator[object]:
    """A contract given to a source or to ``run``/``extract`` becomes the schema's, kept
    for later runs, as dlt 1.31 keeps it (``schema.settings["schema_contract"]``; ``run``'s
    also goes on the run's tables as a hint). Yields the contract it replaced
    (``_NOT_GIVEN`` when none was given); a failed extract sets that one back."""
    given = hints.schema_contract
    if given is None and isinstance(data, Source):
        given = data.schema_contract
    if given is None:
        yield _NOT_GIVEN
        return
    before = schema.settings.schema_contract
    schema.set_schema_contract(given)
    try:
        yield before
    except BaseException:
        schema.set_schema_contract(before)
        raise


@contextlib.contextmanager
def _sources_state_kept(state: MutableMapping[str, TDataItem]) -> Iterator[dict[str, TDataItem]]:
    """The sources' state now (:func:`sources_snapshot`); a failed extract leaves
    ``pipeline.state`` as it was (dlt 1.31): what the resources wrote into their state while
    it ran is dropped, as it never reached the saved file."""
    before = sources_snapshot(state)
    try:
        yield before
    except BaseException:
        state["sources"] = copy.deepcopy(dict(before))
        if not before:
            state.pop("sources")
        raise


def _replaces_a_table(package: LoadPackage) -> bool:
    from loadstone.schema.hints import disposition_of

    return any(disposition_of(h)[0] == "replace" for h in package.table_hints().values())


class ExtractStep:
    """Extracts data into new packages of one working folder."""

    def __init__(self, context: ExtractContext) -> None:
        self.context = context

    @property
    def folder(self) -> WorkingFolder:
        return self.context.folder

    def extract(
        self,
        data: TDataItems,
        table_name: str | None,
        hints: TableHints,
        schema: Schema | None,
        refresh: str | None = None,
        *,
        carry_state: bool = True,
        default_schema: str | None = None,
        state_schema: str | None = None,
    ) -> ExtractResult:
        """Write ``data`` into a new package; ``refresh`` first drops or empties what the
        run replaces (see :mod:`loadstone.runtime.refresh`). ``carry_state=False``: the
        package does not take the pipeline's state to the destination, a later one of the
        same call does (``run([source, other])`` loads one state row, as dlt); ``default_schema``:
        the schema of data that is not a source; ``state_schema``: the schema the state goes
        with (the pipeline's default), the only one that gets the state table, as dlt's."""
        step = self.context.recorder.begin("extract")
        if is_source_factory(data):
            data = data()
        source_name = data.name if isinstance(data, Source) else None
        schema_name, package_schema = self._schema_of(data, schema, default_schema, refresh)
        check_table_names([table_name], package_schema.naming)
        state_key = source_name or schema_name
        if refresh is not None:
            source_state = self._refreshed_state(schema_name, state_key)
            dropped = self._schema_refreshed(schema_name, package_schema, refresh)
            self._refresh(refresh, dropped, data, table_name, source_state)
        if isinstance(data, Source):
            apply_source_defaults(data, package_schema)
        package = self._new_package(schema_name)
        self.context.on_package("extract", package.load_id)
        # the state before: taken back if the package never loads, set back if extract fails
        with (
            _sources_state_kept(self.folder.state) as state_before,
            _schema_contract_given(package_schema, data, hints) as contract_before,
        ):
            result = self._write_package(
                package, data, (table_name, hints, package_schema), state_key, step
            )
            self._check_written(package, package_schema, result)
            if contract_before is not _NOT_GIVEN:  # set back if the package is set aside
                package.update(schema_contract_before=contract_before)
            with_state = state_schema is None or state_schema == package_schema.name
            state_of = (state_key, carry_state, with_state)
            self._switch_extracted(package, package_schema, result, state_of, data, state_before)
        self.context.recorder.package_done(
            step,
            package.load_id,
            rows=result.items,
            size=result.bytes,
            files=result.files,
            row_counts={name: t.items for name, t in result.tables.items()},
        )
        self.context.recorder.finish(step, load_id=package.load_id)
        return result

    def _check_written(self, package: LoadPackage, schema: Schema, result: ExtractResult) -> None:
        """The checks of what a package holds that fail its extract (the package removed):
        table names, nested links, new tables under a frozen ``tables`` contract."""
        try:
            check_table_names(result.tables, schema.naming)
            check_nested_links(schema, package.table_hints())
            with_rows = [name for name, t in result.tables.items() if t.items]
            naming = self.context.target.naming_for(schema)
            check_frozen_tables(schema, package.table_hints(), with_rows, naming)
        except (InvalidTableName, TablePropertiesConflictException, DataValidationError):
            _remove(package)
            raise

    def _schema_of(
        self,
        data: TDataItems,
        schema: Schema | None,
        default_schema: str | None,
        refresh: str | None = None,
    ) -> tuple[str, Schema]:
        """The name and schema of the package ``data`` makes: ``schema=``'s, else the
        source's, else the default schema (``default_schema``, the pipeline's, its name).
        ``refresh="drop_sources"`` starts a schema the pipeline has again as on a first run,
        the dropped schema's hash its only history, as dlt 1.31 restarts it (the run ends
        at version 2, not at the dropped schema's version + 2)."""
        source = data if isinstance(data, Source) else None
        provided = schema if schema is not None else (source.schema if source else None)
        name = (
            (schema.name if isinstance(schema, Schema) else None)
            or (source.name if source else None)
            or default_schema
            or self.folder.state.get("default_schema_name")
            or self.folder.pipeline_name
        )
        stored = self.folder.schemas.get(name)
        if refresh != "drop_sources" or stored is None:
            return name, self.schema_for_extract(name, provided)
        restarted = self.schema_for_extract(name, provided, fresh=True)
        restarted.previous_hashes = [stored.version_hash]
        return name, restarted

    def _schema_refreshed(self, name: str, package_schema: Schema, refresh: str) -> Schema:
        """The schema whose tables a refresh drops or empties: the package's, or for
        ``drop_sources`` (which restarted the package's) a copy of the one stored."""
        stored = self.folder.schemas.get(name)
        if refresh != "drop_sources" or stored is None:
            return package_schema
        return stored.copy()

    def _switch_extracted(
        self,
        package: LoadPackage,
        schema: Schema,
        result: ExtractResult,
        state_of: tuple[str, bool, bool],
        data: TDataItems,
        state_before: dict[str, TDataItem],
    ) -> None:
        """Publish the package's files and switch it to ``extracted``, with the state the
        sources reached: in the same atomic switch, a crash before the local state is saved
        cannot lose it (see ``WorkingFolder.adopt_package_state``). The package also records
        what its extract changed in that state, taken back when it is set aside or dropped
        (``loadstone.storage.state_changes``). ``state_of``: the source's key in the state,
        whether the package may carry the state, and whether its schema gets the state table."""
        folder = self.folder
        state_key, carry_state, with_state = state_of
        # after the extract, which names a missing or unreadable input in its own error
        name = folder.pipeline_name
        inputs = [fingerprint(name, path) for path in input_files_of(data)]
        _publish_extracted(package)
        with_rows = [table_name for table_name, t in result.tables.items() if t.items]
        naming = self.context.target.naming_for(schema)
        declared = add_root_tables(schema, package.table_hints(), with_rows, naming, with_state)
        package.write_schema(schema)
        folder.register_schema(schema)
        if _replaces_a_table(package):  # dlt keeps a replaced source's (maybe empty) state
            folder.state.setdefault("sources", {}).setdefault(state_key, {})
        folder.stamp_state(self.context.target)
        folder.seed_import_schema(package, schema)
        package.set_state(
            EXTRACTED,
            extracted_rows=result.items,
            extracted_bytes=result.bytes,
            pipeline_state=to_stored(folder.state),
            carries_state=carry_state and folder.state_changed_since_extract(),
            state_changes=stored_changes(
                record_changes(package.load_id, state_before, folder.state)
            ),
            inputs=[i.asdict() for i in inputs],
            declared_tables=declared,  # normalize makes them again from the hints
        )
        folder.save_schema(schema)
        folder.save_state(self.context.target)

    def schema_for_extract(
        self, name: str, provided: Schema | None, *, fresh: bool = False
    ) -> Schema:
        """The schema a new package of ``name`` uses: stored, imported or from code
        (``fresh``: not the stored one)."""
        stored = None if fresh else self.folder.schemas.get(name)
        imported = self.folder.imported_schema(name)
        if imported is not None:
            stored = with_import(stored, imported)
        if stored is None:
            schema = provided if provided is not None else Schema(name)
            naming = self.context.target.naming_name(name, schema)
            if schema.naming_name != naming:
                schema.set_naming(naming)
            return schema
        if provided is None:
            return stored
        # settings (detections, hints, preferred types) and declared tables come from code
        return stored.with_code_declarations(provided)

    def _new_package(self, schema_name: str) -> LoadPackage:
        """A new package, its data files on ``packages.storage_url`` when that is set."""
        name = self.folder.pipeline_name
        return LoadPackage.create(
            self.folder.packages_dir,
            schema_name,
            data_dir=package_storage.data_dir(name),
            data_url=package_storage.data_url(name),
        )

    def _write_package(
        self,
        package: LoadPackage,
        data: TDataItems,
        how: tuple[str | None, TableHints, Schema],
        state_key: str,
        step: StepInfo,
    ) -> ExtractResult:
        """Extract ``data`` into ``package`` (``how``: the run's table name and hints, the
        package's schema: new tables its contract discards get no rows); on any failure the
        package is removed whole."""
        recorder = self.context.recorder
        table_name, hints, schema = how
        discards = new_table_discards(schema, self.context.target.naming_for(schema))

        def on_progress(rows: int, size: int, files: int) -> None:
            elapsed = time.time() - step.started_at
            recorder.emit(
                "extract", "progress", load_id=package.load_id, rows=rows, bytes=size,
                files=files, elapsed=elapsed,
            )  # fmt: skip

        sources_state = self.folder.state.setdefault("sources", {})
        existed = state_key in sources_state  # an empty one kept since a replace (as dlt)
        source_state = sources_state.setdefault(state_key, {})
        try:
            with self.context.scope(source_state, data if isinstance(data, Source) else None):
                result = extract_data(
                    package,
                    data,
                    table_name=table_name,
                    hints=hints,
                    progress=on_progress,
                    discards=discards,
                    resource_tables=tables_by_resource(schema),
                    schema=schema,
                )
        except BaseException as error:
            _remove(package)
            if not existed:  # a failed extract leaves no state of a source it added
                sources_state.pop(state_key, None)
            if not sources_state:
                self.folder.state.pop("sources", None)
            if isinstance(error, OSError):
                raise ExtractError(
                    f"extract failed writing package {package.root}: "
                    f"{os_error_text(error)}; nothing was extracted or loaded"
                ) from error
            raise
        if not source_state and not existed:
            sources_state.pop(state_key, None)
        return result

    def _refreshed_state(self, schema_name: str, state_key: str) -> SourceState:
        """The source state a refresh resets, as dlt 1.31 keeps it: a refresh of a schema
        the pipeline knows leaves a (maybe empty) ``sources`` entry, and no entry for a
        source that has no state (``{}``, not ``{'<source>': {}}``)."""
        if schema_name not in self.folder.schemas:
            return {}
        self.folder.keep_sources_entry = True  # saved with the state from now on, as dlt's
        sources: dict[str, SourceState] = self.folder.state.setdefault("sources", {})
        return sources.get(state_key, {})

    def _refresh(
        self,
        mode: str,
        schema: Schema,
        data: TDataItems,
        table_name: str | None,
        source_state: SourceState,
    ) -> None:
        """Drop or empty the tables the run replaces and reset their state (``refresh=``)."""
        from loadstone.extract.extractor import as_resources

        _, resources = as_resources(data, table_name)
        tables = [
            name for name in (table_name or res.table_name for res in resources)
            if isinstance(name, str)
        ]  # fmt: skip
        plan = plan_refresh(mode, schema, [res.name for res in resources], tables)
        with self.context.target.client(schema) as client:
            apply_to_destination(client, plan)
        LoadedInputs(self.folder.root).forget_tables((*plan.drop_tables, *plan.truncate_tables))
        schema.drop_tables(plan.drop_tables)
        reset_state(plan, source_state)
        if plan.drop_tables:  # dlt sends the state with a refresh that dropped tables
            self.folder.local_state().pop("_last_extracted_hash", None)


def check_table_names(names: Iterable[str | None], naming: NamingConvention) -> None:
    """Refuse a table name that normalizes to an empty identifier (``" "``, ``"__"``).

    Why before anything is saved: the schema would record a table with no name, and every
    later run of the pipeline would fail reading it; dlt refuses such a name at extract too.
    """
    for name in names:
        if name is None or naming.normalize_tables_path(name):
            continue
        raise InvalidTableName(name, naming.name())


def _remove(package: LoadPackage) -> None:
    package.delete_data()
    shutil.rmtree(package.root, ignore_errors=True)


def _publish_extracted(package: LoadPackage) -> None:
    """Extracted files onto the package storage; a failure removes the package whole."""
    try:
        package.publish_extracted()
    except BaseException:
        _remove(package)
        raise


def with_import(stored: Schema | None, imported: Schema) -> Schema:
    """The schema a run starts from, given the user's ``import_schema_path`` file: the file
    itself while the pipeline has no tables; once it has, what the file says whenever it
    changed since it was last taken, as dlt takes an edited import file again: the tables
    and columns it adds, and the hints it gives (a table's description, a column's key). A
    column the pipeline already has keeps its type and nullability (the destination holds
    it; a resource's hints still apply on top, as in dlt)."""
    if stored is None or not stored.data_tables(include_incomplete=True):
        taken = imported
    elif stored.imported_version_hash == imported.version_hash:
        return stored
    else:
        taken = stored.copy()
        for table in imported.tables.values():  # a parent comes before its nested tables
            known = taken.tables.get(table.name)
            if known is not None:
                table = known.merge(_untyped_for(table, known))
            taken.update_table(table)
    taken.imported_version_hash = imported.version_hash
    return taken


#: the hints of a column its table at the destination fixes (not taken from an edited file)
_STORAGE_HINTS: dict[str, Any] = {
    key: None for key in ("data_type", "nullable", "precision", "scale", "timezone")
}


def _untyped_for(table: Table, known: Table) -> Table:
    """``table`` of an import file with the storage hints of the columns ``known`` has taken
    off: those stay as the destination holds them."""
    columns = {
        name: attrs.evolve(column, **_STORAGE_HINTS) if name in known.columns else column
        for name, column in table.columns.items()
    }
    return attrs.evolve(table, columns=columns)
