"""The normalize step: every extracted package -> normalized tables and an evolved schema.

:class:`NormalizeStep` takes the pipeline's extracted packages oldest first, checks that what
was extracted is whole, hands each to the configured normalizer plugin (see
:mod:`loadstone.normalizers.contract`) and switches it to ``normalized`` with its tables and the
schema the normalizer evolved. A package whose *data* can never normalize is set aside (see
:mod:`loadstone.pipelines.recovery`), so that the next run goes on. It is given a
:class:`NormalizeStepContext`, never the pipeline, so it runs on its own::

    NormalizeStep(NormalizeStepContext(folder, target, StepRecorder())).normalize_pending()
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

import attrs

from loadstone.exceptions import (
    BadRecordError,
    LoadstoneError,
    NormalizeError,
    PackageDataError,
    PackageIntegrityError,
    PipelineStepFailed,
)
from loadstone.normalize.checks import check_bound_columns
from loadstone.normalize.empty_packages import drop_if_empty
from loadstone.normalizers.contract import NormalizeContext, Normalizer, NormalizeResult
from loadstone.runtime import settings as run_settings
from loadstone.runtime.package_outcome import set_aside
from loadstone.runtime.working_folder import add_state_table
from loadstone.schema import Schema
from loadstone.schema.hints import disposition_of, table_from_hints
from loadstone.storage.load_package import EXTRACTED, NORMALIZED, LoadPackage, iter_pending
from loadstone.storage.state import state_row_count

if TYPE_CHECKING:
    from loadstone.destinations.overlap import FilesSink
    from loadstone.naming import NamingConvention
    from loadstone.runtime.load_info import StepInfo
    from loadstone.runtime.recorder import StepRecorder
    from loadstone.runtime.target import DestinationTarget
    from loadstone.runtime.working_folder import WorkingFolder

__all__ = ["NormalizeStep", "NormalizeStepContext", "NormalizedRecord"]


class NormalizedRecord(TypedDict):
    """A package's ``normalized_tables`` entry of one table (paths relative to its data)."""

    folder: str
    row_count: int
    files: list[str]


def _no_package(_step: str, _load_id: str) -> None:
    return None


@attrs.frozen
class NormalizeStepContext:
    """What the normalize step needs: the folder, the destination (its naming convention and
    capabilities), the recorder; ``spark`` a session to use (None: from configuration, started
    only when the normalizer chooses Spark); ``on_package`` hears of each package started."""

    folder: WorkingFolder
    target: DestinationTarget
    recorder: StepRecorder
    spark: object = None
    on_package: Callable[[str, str], None] = _no_package


def _evolved_schema(result: NormalizeResult) -> Schema:
    """The schema a normalizer evolved: ours return the ``Schema`` they were given; a stored
    dict from a third-party normalizer is read once, here, so the pipeline holds no dict."""
    schema = result.schema
    return schema if isinstance(schema, Schema) else Schema.from_dict(schema)


def _without_declared(schema: Schema, package: LoadPackage) -> Schema:
    """A copy without the root tables the package's extract declared (``declared_tables``,
    saved as dlt's extract saves them): the normalizer makes them again from the package's
    hints, so they come out as new tables, as in a schema that never had them."""
    declared = [n for n in package.meta.get("declared_tables") or [] if schema.has_table(n)]
    if not declared:
        return schema
    working = schema.copy()
    working.drop_tables(declared)
    return working


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


class NormalizeStep:
    """Normalizes the extracted packages of one working folder."""

    def __init__(self, context: NormalizeStepContext) -> None:
        self.context = context

    @property
    def folder(self) -> WorkingFolder:
        return self.context.folder

    def normalize_pending(self, on_files: Mapping[str, FilesSink] | None = None) -> list[str]:
        """Normalize every extracted package (oldest first); returns their load ids.

        ``on_files``: per load id, where the normalizer reports the files it finished while
        it runs (the pipeline's load overlapped with normalize).
        """
        packages = [p for p in iter_pending(self.folder.packages_dir) if p.state == EXTRACTED]
        # as dlt: nothing to load
        packages = [p for p in packages if not drop_if_empty(p, self.folder.schema_for_package(p))]
        if not packages:
            return []
        step = self.context.recorder.begin(
            "normalize",
            input_rows=sum(int(p.meta.get("extracted_rows") or 0) for p in packages),
            input_bytes=sum(int(p.meta.get("extracted_bytes") or 0) for p in packages),
        )
        done: list[str] = []
        for package in packages:
            sink = on_files.get(package.load_id) if on_files else None
            self.normalize_package(package, step, sink)
            done.append(package.load_id)
        self.context.recorder.finish(step)
        return done

    def normalize_package(
        self, package: LoadPackage, step: StepInfo, on_files: FilesSink | None = None
    ) -> None:
        """Normalize one package and switch it to ``normalized`` with its result."""
        folder, target = self.folder, self.context.target
        self.context.on_package("normalize", package.load_id)
        self._verify_extracted(package)
        schema = folder.schema_for_package(package) or target.new_schema(package.schema_name, None)
        schema = _without_declared(schema, package)
        naming = target.naming_for(schema)
        _switch_naming(schema, naming)
        if target.capabilities.max_table_nesting is not None:  # a custom destination's, as dlt
            schema.update_json_normalizer_config(max_nesting=target.capabilities.max_table_nesting)
        context = self._normalize_context(package, naming, step, on_files)
        package.reset_normalized()
        result = self._run_normalizer(package, schema, context)
        evolved = _evolved_schema(result)
        tables, (rows, files, size) = _normalized_records(package, result)
        emptied = [t for t in _emptied(package, evolved) if t not in tables]
        _replace_without_rows(evolved, emptied)
        self._check_bound_columns(package, evolved, naming, tables)
        if package.meta.get("carries_state", True):  # only its schema has the state table
            nested = [t for t in result.new_tables if evolved.tables[t].parent is not None]
            if nested and not evolved.has_table(evolved.state_table_name):
                add_state_table(evolved)  # before the nested tables, as dlt adds it at extract
                evolved.place_table_before(evolved.state_table_name, nested[0])
            add_state_table(evolved)
        package.write_schema(evolved)
        folder.save_schema(evolved)
        package.set_state(
            NORMALIZED,
            normalized_tables=tables,
            normalized_bytes=size,
            bad_records=int(result.bad_records),
            new_tables=list(result.new_tables),
            new_columns={k: list(v) for k, v in result.new_columns.items()},
        )
        folder.save_state(target)
        row_counts = {name: info["row_count"] for name, info in tables.items()}
        row_counts.update({t: 0 for t in emptied})
        self.context.recorder.package_done(
            step,
            package.load_id,
            rows=rows,
            size=size,
            files=files,
            row_counts={**row_counts, **state_row_count(package, evolved)},  # dlt: state last
        )

    def _normalize_context(
        self,
        package: LoadPackage,
        naming: NamingConvention,
        step: StepInfo,
        on_files: FilesSink | None = None,
    ) -> NormalizeContext:
        from loadstone.spark_session import get_spark_session

        recorder, load_id = self.context.recorder, package.load_id

        def chunks_done(done: int, parts: int) -> None:
            recorder.emit_totals(step, "progress", load_id=load_id, parts_done=done, parts=parts)

        # a session given to pipeline()/run() is used as is; else it is handed over lazily:
        # the normalizer starts Spark only when it chooses to (``normalize.engine``)
        spark = self.context.spark
        return NormalizeContext(
            spark=spark if spark is not None else get_spark_session,
            naming=naming,
            capabilities=self.context.target.capabilities,
            on_bad_record=run_settings.on_bad_record(),
            progress=chunks_done,
            on_chunk=recorder.record_chunk,
            on_engine=recorder.record_engine,
            storage=package.remote,
            on_files=on_files,
        )

    def _verify_extracted(self, package: LoadPackage) -> None:
        """Stop before normalizing an input that changed or a package that was cut."""
        package.check_inputs()  # an input read in place that changed: the user's to restore
        try:
            package.verify_extracted()
        except PackageIntegrityError as error:
            set_aside(self.folder, package, str(error))
            raise PackageIntegrityError(
                f"{error}; the package was set aside in {self.folder.failed_packages_dir} and "
                f"nothing of it was loaded: run the same input again"
            ) from None

    def _run_normalizer(
        self, package: LoadPackage, schema: Schema, context: NormalizeContext
    ) -> NormalizeResult:
        """The configured normalizer's result; its failures as the pipeline reports them."""
        from loadstone.plugin_manager import get_normalizer

        pipeline_name = self.folder.pipeline_name
        normalizer: Normalizer = get_normalizer(run_settings.normalizer_name())
        try:
            result = normalizer.normalize(package, schema, context)
            self._check_collisions(_evolved_schema(result))
        except PackageDataError as error:
            if isinstance(error, BadRecordError):  # the package's copy may be what is damaged
                package.check_copy_line(error.file, error.line)
            # the package's data fails the same way every time: set it aside (kept for a
            # look), so that running again with the fixed input loads it and nothing else
            set_aside(self.folder, package, str(error))
            raise
        except NormalizeError as error:
            if type(error) is not NormalizeError:
                raise  # a contract or naming rule: the message says what to change
            raise PipelineStepFailed(pipeline_name, "normalize", package.load_id, error) from None
        except LoadstoneError:
            raise
        except Exception as exc:
            raise PipelineStepFailed(pipeline_name, "normalize", package.load_id, exc) from exc
        return result

    def _check_collisions(self, schema: Schema) -> None:
        """Stop before any data moves when identifiers collide in a case-insensitive destination."""
        from loadstone.schema.collisions import check_case_collisions

        case_sensitive = bool(self.context.target.capabilities.has_case_sensitive_identifiers)
        check_case_collisions(schema, case_sensitive)

    def _check_bound_columns(
        self,
        package: LoadPackage,
        schema: Schema,
        naming: NamingConvention,
        tables: Mapping[str, NormalizedRecord],
    ) -> None:
        """Key columns the data never filled stop the package, which is then set aside."""
        files = {
            name: [package.data_root / f for f in info["files"]]
            for name, info in tables.items()
            if info["row_count"]
        }
        try:
            check_bound_columns(schema, package.table_hints(), naming, files, package.remote)
        except PackageDataError as error:
            set_aside(self.folder, package, str(error))
            raise


def _normalized_records(
    package: LoadPackage, result: NormalizeResult
) -> tuple[dict[str, NormalizedRecord], tuple[int, int, int]]:
    """The ``normalized_tables`` record of a result, and its (rows, files, bytes)."""
    tables: dict[str, NormalizedRecord] = {}
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


def _emptied(package: LoadPackage, schema: Schema) -> list[str]:
    """The tables the package replaces (rows or none): one without rows counts 0, as dlt
    1.31's normalize counts it (``row_counts`` then names the table the load empties)."""
    return [
        table
        for table, hints in package.table_hints().items()
        if disposition_of(hints)[0] == "replace" and schema.has_table(table)
    ]


def _replace_without_rows(schema: Schema, tables: list[str]) -> None:
    """A table replaced with no rows takes the ``replace`` disposition in the schema (the
    normalizer sets it only on tables it writes rows to): the load empties it, as dlt's."""
    for table in tables:
        if schema.get_table(table).write_disposition != "replace":
            schema.update_table(table_from_hints(table, write_disposition="replace"))
