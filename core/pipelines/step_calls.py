"""The steps called one by one: ``extract()``, ``normalize()``, ``load()``, and their infos.

:class:`PipelineSteps` is a base class of :class:`~loadstone.pipelines.pipeline.Pipeline`:
each step holds the pipeline's lock, is traced as dlt traces it (``extract`` starts a trace,
``load`` ends it) and returns dlt's info of the step: :class:`ExtractInfo`,
:class:`NormalizeInfo` (:mod:`loadstone.runtime.step_infos`), :class:`LoadInfo`. The infos
are made here, where the packages are at hand: each lists its packages in the state the step
left them, with their rows per table. ``run()`` records the same infos for its trace
(``_extract_hinted`` and :func:`record_run_infos`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

import attrs

from loadstone.extract.decorators import is_source_factory
from loadstone.extract.extractor import source_groups, state_source
from loadstone.extract.resource import Resource
from loadstone.extract.resource_hints import TableHints
from loadstone.extract.source import Source
from loadstone.load.step import package_info
from loadstone.pipelines import recovery
from loadstone.pipelines.boundary import StepBoundary, step_boundary
from loadstone.runtime.load_info import LoadInfo, LoadPackageInfo, StepInfo
from loadstone.runtime.refresh import check_refresh
from loadstone.runtime.step_infos import ExtractInfo, NormalizeInfo
from loadstone.runtime.trace import traces_as_data
from loadstone.schema import Schema
from loadstone.storage.load_package import EXTRACTED, NORMALIZED, list_packages

if TYPE_CHECKING:
    from loadstone.destinations.contract import Destination
    from loadstone.extract.step import ExtractStep
    from loadstone.load.step import LoadStep
    from loadstone.normalize.step import NormalizeStep
    from loadstone.runtime.recorder import StepRecorder
    from loadstone.runtime.working_folder import WorkingFolder
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

__all__ = ["Described", "PipelineSteps", "as_schema", "describe", "record_run_infos"]


class PipelineSteps:
    """``extract()``, ``normalize()``, ``load()``; the pipeline provides what is declared
    first (its folder, recorder, boundary, steps and lock)."""

    pipeline_name: str
    folder: WorkingFolder
    recorder: StepRecorder
    boundary: StepBoundary
    destination: Destination
    staging: Destination | None
    refresh: str | None

    @property
    def first_run(self) -> bool:
        raise NotImplementedError

    def _locked(self, timeout: float | None = None) -> contextlib.AbstractContextManager[None]:
        raise NotImplementedError

    def _extract_step(self) -> ExtractStep:
        raise NotImplementedError

    def _normalize_step(self) -> NormalizeStep:
        raise NotImplementedError

    def _load_step(self) -> LoadStep:
        raise NotImplementedError

    def _retarget(self, destination: object, credentials: object, dataset_name: str | None) -> None:
        """Take a new destination, credentials or dataset name (None: keep the current)."""
        raise NotImplementedError

    def _traced(self, step: str) -> contextlib.AbstractContextManager[None]:
        """A step called on its own is traced (``last_trace``), as dlt traces it."""
        return self.recorder.standalone(step, self.folder.trace_path, self.pipeline_name)

    @step_boundary("extract")
    def extract(
        self,
        data: TDataItems,
        *,
        table_name: str | None = None,
        write_disposition: TWriteDispositionConfig | None = None,
        columns: TAnySchemaColumns | None = None,
        primary_key: TColumnNames | None = None,
        schema: Schema | None = None,
        schema_contract: TSchemaContract | None = None,
        merge_key: TColumnNames | None = None,
        loader_file_format: TLoaderFileFormat | None = None,
        table_format: TTableFormat | None = None,
        refresh: TRefreshMode | None = None,
    ) -> ExtractInfo:
        """Write ``data`` into a new load package (state ``extracted``); dlt's ``ExtractInfo``.

        ``refresh`` (default: the pipeline's) first drops or empties what the run replaces
        (see :mod:`loadstone.runtime.refresh`).
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
            return self._extract_hinted(data, table_name, hints, as_schema(schema), refresh)

    def _extract_hinted(
        self,
        data: TDataItems,
        table_name: str | None,
        hints: TableHints,
        schema: Schema | None,
        refresh: str | None,
    ) -> ExtractInfo:
        """``extract`` with its hints already parsed (``run`` parses them itself); its info
        is recorded for the trace before normalize may drop a package that holds nothing."""
        mode = check_refresh(refresh if refresh is not None else self.refresh)
        data = traces_as_data(data)
        first_run, described = self.first_run, describe(data)
        with self._locked():
            self._extract_groups(data, table_name, hints, schema, mode)
            info = extract_info(self, first_run, described)
        self.recorder.record_step_info(info)
        return info

    def _extract_groups(
        self,
        data: TDataItems,
        table_name: str | None,
        hints: TableHints,
        schema: Schema | None,
        mode: str | None,
    ) -> None:
        """Each source of ``data`` into a package of its schema (:func:`source_groups`),
        and the pipeline's state, once complete, to the destination with the default schema,
        as dlt 1.31: by that schema's package, extracted last, or (a run of sources that are
        not the default schema's) by a package of its own.

        A new pipeline's default is the first schema by name (extracted last, it is named
        the default only then, so that a failed extract leaves the state as it was)."""
        state = self.folder.state
        loose = state.get("default_schema_name") or self.pipeline_name
        groups = [
            (schema.name if schema is not None else (name or loose), item)
            for name, item in source_groups(data, loose)
        ]
        target = state.get("default_schema_name") or groups[0][0]
        groups = [g for g in groups if g[0] != target] + [g for g in groups if g[0] == target]
        carries = groups[-1][0] == target
        for number, (name, item) in enumerate(groups):
            last = number == len(groups) - 1
            with self._naming_default(name if name == target else None):
                self._extract_step().extract(
                    item,
                    table_name,
                    hints,
                    schema,
                    mode,
                    carry_state=last and carries,
                    default_schema=name,
                    state_schema=target,
                )
        if not carries:
            stored = self.folder.schemas[target]
            self._extract_step().extract(
                state_source(stored), None, TableHints(), None, None, state_schema=target
            )

    @contextlib.contextmanager
    def _naming_default(self, name: str | None) -> Iterator[None]:
        """``name`` is the default schema while its package is extracted (kept if the extract
        succeeds); the earlier default again if it fails."""
        state = self.folder.state
        before = state.get("default_schema_name")
        if name is None or before == name:
            yield
            return
        state["default_schema_name"] = name
        try:
            yield
        except BaseException:
            if before is None:
                state.pop("default_schema_name", None)
            else:
                state["default_schema_name"] = before
            raise

    @step_boundary("normalize")
    def normalize(self, workers: int | None = None) -> NormalizeInfo:
        """Normalize every extracted package (oldest first); dlt's ``NormalizeInfo``.

        ``workers`` is dlt's argument, accepted and not used: the pool is sized by
        ``normalize.workers`` (every core by default), Spark by its executors."""
        del workers
        first_run = self.first_run
        with self._traced("normalize"), self._locked():
            self.recorder.steps.pop("normalize", None)  # this call's packages only
            self._normalize_step().normalize_pending()
            info = normalize_info(self, first_run)
            self.recorder.record_step_info(info)
            return info

    @step_boundary("load")
    def load(
        self,
        destination: object = None,
        dataset_name: str | None = None,
        credentials: object = None,
        *,
        workers: int | None = None,
        raise_on_failed_jobs: bool = True,
    ) -> LoadInfo:
        """Load every normalized package (oldest first) into the destination.

        A package whose normalized files are missing or damaged is normalized again from its
        extracted copy first, so that it is never loaded in part. ``destination``,
        ``dataset_name`` and ``credentials`` change the pipeline's, as in ``run()``;
        ``workers`` and ``raise_on_failed_jobs`` are dlt's, accepted: a package loads in one
        transaction, and a failed one always raises.
        """
        from loadstone.pipelines.staging import check_staging

        del workers, raise_on_failed_jobs
        self._retarget(destination, credentials, dataset_name)
        self.destination.require_loader()
        check_staging(self.destination, None, self.staging)
        with self._traced("load"), self._locked():
            self._renormalize_damaged()
            info = self._load_step().load_pending()
            info.pipeline = self  # type: ignore[assignment]  # a Pipeline, through this base
            self.recorder.record_info(info)  # the trace of a load called alone shows it
            return info

    def _renormalize_damaged(self) -> None:
        recovery.mark_damaged_normalized(self.folder, self.recorder)
        self._normalize_step().normalize_pending()


def as_schema(schema: Schema | Mapping[str, object] | None) -> Schema | None:
    """A ``schema=`` argument as a ``Schema`` (a stored dict is read once, here)."""
    if schema is None or isinstance(schema, Schema):
        return schema
    return Schema.from_dict(dict(schema))


@attrs.frozen
class Described:
    """What ``extract`` was given, told before it runs (a generator is read only once)."""

    #: dlt's ``extract_data_info``: ``[{"name": ..., "data_type": "source" | ...}]``
    data_info: list[dict[str, str]]
    #: the resources it extracts (dlt's ``dag`` and ``hints`` name each, empty ones too)
    resources: list[str]
    #: dlt's ``dag``: each resource's edges up to its root (:func:`_dag`)
    dag: list[tuple[str, str]]


def describe(data: object) -> Described:
    """The name, kind and resources of what ``extract`` is given."""
    return Described(extract_data_info(data), _resource_names(data), _dag(data))


def _dag(data: object) -> list[tuple[str, str]]:
    """dlt 1.31's ``dag`` of what is extracted: per resource, a root as ``(name, name)``,
    a transformer as its edges up to its root, ``(parent, child)`` first (an edge two
    selected transformers share is listed twice, as dlt lists it)."""
    if isinstance(data, Source):
        return _dag(list(data.selected_resources.values()))
    if isinstance(data, (list, tuple)):
        return [edge for item in data for edge in _dag(item)]
    if not isinstance(data, Resource):
        return []
    if data.data_from is None:
        return [(data.name, data.name)]
    edges, child = [], data
    while (parent := child.data_from) is not None:
        edges.append((parent.name, child.name))
        child = parent
    return edges


def _resource_names(data: object) -> list[str]:
    if isinstance(data, Source):
        return list(data.selected_resources)
    if isinstance(data, Resource):
        return [data.name]
    if isinstance(data, (list, tuple)):
        return [name for item in data for name in _resource_names(item)]
    return []


def extract_data_info(data: object) -> list[dict[str, str]]:
    """dlt's ``extract_data_info``: the name and kind of what ``extract`` was given."""
    if isinstance(data, Source):
        return [{"name": data.name, "data_type": "source"}]
    if isinstance(data, Resource):
        return [{"name": data.name, "data_type": "resource"}]
    if is_source_factory(data):
        return [{"name": data.__name__, "data_type": "source"}]
    if (
        isinstance(data, (list, tuple))
        and data
        and all(isinstance(item, (Source, Resource)) for item in data)
    ):
        return [entry for item in data for entry in extract_data_info(item)]
    if isinstance(data, (list, tuple)) and data:  # dlt names the kind of the first item
        return [{"name": "", "data_type": type(data[0]).__name__}]
    return [{"name": "", "data_type": type(data).__name__}]


def _packages(steps: PipelineSteps, load_ids: list[str], state: str) -> list[LoadPackageInfo]:
    """The step's packages as infos, in the state the step left them."""
    found = {p.root.name: p for p in list_packages(steps.folder.packages_dir)}
    infos: list[LoadPackageInfo] = []
    for load_id in load_ids:
        package = found.get(load_id)
        if package is None:  # dropped (nothing to load): dlt's normalize does not list it
            continue
        infos.append(package_info(package, package.read_schema(), state=state))
    return infos


def _step(steps: PipelineSteps, name: str) -> StepInfo:
    now = time.time()  # a step that found nothing to do still has a time
    return steps.recorder.steps.get(name) or StepInfo(name, now, now)


def extract_info(steps: PipelineSteps, first_run: bool, described: Described) -> ExtractInfo:
    """The info of the run's extract (one package per extract)."""
    step = _step(steps, "extract")
    counts = {table: rows for table, rows in step.row_counts.items() if rows}
    # an extracted package's jobs are its tables with items (dlt's ``new_jobs``)
    packages = [
        attrs.evolve(package, row_counts=_with_rows(step, package.load_id, counts))
        for package in _packages(steps, step.load_ids, EXTRACTED)
    ]
    return ExtractInfo(
        steps.pipeline_name,
        step,
        packages,
        first_run,
        pipeline=steps,  # type: ignore[arg-type]  # a Pipeline, through this base
        data_info=described.data_info,
        resources=described.resources,
        table_counts={p.load_id: dict(p.row_counts) for p in packages},
        resource_counts={p.load_id: _by_resource(steps, p) for p in packages},
        dag=described.dag,
    )


def _by_resource(steps: PipelineSteps, package: LoadPackageInfo) -> dict[str, int]:
    """A package's items per resource: each table's count goes to the resource the schema
    says owns the table (a table two resources write counts for its owner, as in dlt)."""
    schema = steps.folder.schemas.get(package.schema_name)
    counts: dict[str, int] = {}
    for table, rows in package.row_counts.items():
        known = schema.tables.get(table) if schema is not None else None
        owner = (known.resource if known is not None else None) or table
        counts[owner] = counts.get(owner, 0) + rows
    return counts


def _with_rows(step: StepInfo, load_id: str, counts: dict[str, int]) -> dict[str, int]:
    """The tables with items of one package (all of ``counts`` when it is not known)."""
    mine = step.package_row_counts.get(load_id)
    return dict(counts) if mine is None else {t: n for t, n in mine.items() if n}


def normalize_info(steps: PipelineSteps, first_run: bool) -> NormalizeInfo:
    """The info of the run's normalize: rows per table and package, the state's row last."""
    step = _step(steps, "normalize")
    packages = _packages(steps, step.load_ids, NORMALIZED)
    per_package = {p.load_id: _state_last(p.row_counts, p) for p in packages}
    state_tables = {p.state_table for p in packages if p.state_table}
    totals = {t: n for t, n in step.row_counts.items() if t not in state_tables}
    totals.update({t: n for t, n in step.row_counts.items() if t in state_tables})
    return NormalizeInfo(
        steps.pipeline_name,
        step,
        packages,
        first_run,
        pipeline=steps,  # type: ignore[arg-type]  # a Pipeline, through this base
        table_counts=per_package,
        totals=totals,
    )


def _state_last(counts: Mapping[str, int], package: LoadPackageInfo) -> dict[str, int]:
    state = {package.state_table: 1} if package.state_table else {}
    return {**{t: n for t, n in counts.items() if t not in state}, **state}


def record_run_infos(steps: PipelineSteps, first_run: bool) -> None:
    """The normalize info of a ``run()``, for its trace (the extract recorded its own): a
    run whose package held nothing still traces a normalize that found no data, as dlt's."""
    recorded = steps.recorder.steps
    if "extract" in recorded:
        if "normalize" not in recorded:  # its package held nothing: dlt still traces it
            ordered = {name: step for name, step in recorded.items() if name != "load"}
            ordered["normalize"] = _step(steps, "normalize")
            ordered.update({name: step for name, step in recorded.items() if name == "load"})
            steps.recorder.steps = ordered
            recorded = ordered
    if "normalize" in recorded:
        steps.recorder.record_step_info(normalize_info(steps, first_run))
