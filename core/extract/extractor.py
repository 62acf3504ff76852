"""Extract: any input -> the files of a load package, one set per source table.

Inputs are Python items (lists, generators, resources, sources), JSON/JSONL, Parquet and CSV
files, objects on an object store and Spark DataFrames. This module tells which input is
which (:func:`as_resources`) and runs each resource into one package writer; the work is
beside it: :mod:`~loadstone.extract.resource_items` (a resource's items and marks),
:mod:`~loadstone.extract.file_inputs`, :mod:`~loadstone.extract.dataframes` and
:mod:`~loadstone.extract.writers` (the chunk files).

Extract stores the *source* table name of each file and the hints from code per table; it
does not normalize names: naming is the normalizer's job, done once, on the schema.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import attrs

from loadstone import current
from loadstone.exceptions import (
    CurrentSourceNotAvailable,
    ExtractError,
    InvalidResourceData,
    ResourceNameMissing,
    SourceExhausted,
)
from loadstone.extract.arrow_items import is_arrow_item
from loadstone.extract.dataframes import is_spark_dataframe
from loadstone.extract.decorators import is_source_factory
from loadstone.extract.file_inputs import JSON_SUFFIXES, is_file_input, is_json_path
from loadstone.extract.resource import Resource
from loadstone.extract.resource_hints import TableHints
from loadstone.extract.resource_items import extract_resources
from loadstone.extract.source import Source, started_generators
from loadstone.extract.tabular_files import TABULAR_SUFFIXES
from loadstone.extract.writers import Discards, ExtractedTable, PackageWriter, ProgressCallback
from loadstone.schema import Schema
from loadstone.storage import package_storage
from loadstone.storage.load_package import LoadPackage
from loadstone.typing import TDataItem


@attrs.frozen
class ExtractResult:
    """The package written, and the tables and totals in it."""

    package: LoadPackage
    tables: dict[str, ExtractedTable]
    source_name: str | None

    @property
    def items(self) -> int:
        return sum(t.items for t in self.tables.values())

    @property
    def bytes(self) -> int:
        return sum(t.bytes for t in self.tables.values())

    @property
    def files(self) -> int:
        return sum(t.files for t in self.tables.values())


def as_resources(data: TDataItem, table_name: str | None) -> tuple[str | None, list[Resource]]:
    """An accepted input -> (source name or None, resources to extract)."""
    if isinstance(data, Source):
        return data.name, list(data.selected_resources.values())
    if isinstance(data, Resource):
        return None, [data]
    if is_source_factory(data):
        src = data()
        return src.name, list(src.selected_resources.values())
    if is_arrow_item(data):
        if table_name is None:
            raise ExtractError(
                f"a {type(data).__module__}.{type(data).__name__} needs table_name= to name "
                "its table"
            )
        return None, [Resource([data], table_name, args_bound=True)]
    if isinstance(data, str) and package_storage.is_object_pattern(data) and not table_name:
        raise ExtractError(f"objects named by a glob or folder ({data}) need table_name=")
    if is_spark_dataframe(data) or is_file_input(data):
        if table_name is None:
            if is_file_input(data):
                table_name = _table_from_path(Path(data))
            else:
                raise ExtractError("a Spark DataFrame needs table_name= to name its table")
        return None, [Resource(data, table_name, args_bound=True)]
    if isinstance(data, (list, tuple)) and data and all(isinstance(d, Resource) for d in data):
        return None, list(data)
    if isinstance(data, (list, tuple)) and data and all(_is_file_name(d) for d in data):
        name = table_name or _table_from_path(Path(data[0]))
        return None, [Resource(p, name, args_bound=True) for p in data]
    if isinstance(data, (str, bytes)):
        raise InvalidResourceData(
            f"cannot load {data!r}: a {type(data).__name__} is read as a file only when it "
            f"names one ending with {', '.join(JSON_SUFFIXES)} (optionally .gz), .parquet, "
            ".csv or .csv.gz"
        )
    found: str | None = table_name or getattr(data, "__name__", None)
    if not found or found == "<lambda>":
        raise ResourceNameMissing()
    if callable(data) and not isinstance(data, Iterable):
        return None, [Resource(data, found)]
    return None, [Resource(data, found, args_bound=True)]


def source_groups(data: TDataItem, loose_schema: str) -> list[tuple[str | None, TDataItem]]:
    """``data`` as the inputs extracted one by one, each into a package of its own schema,
    with that schema's name (None: the pipeline's default schema).

    A list that holds sources (dlt's ``run([source, resource, other_source])``) extracts each
    source under its own schema and the loose resources together under ``loose_schema`` (the
    pipeline's default schema); as in dlt 1.31, they go in the order of their schema names,
    so the first of them becomes the default schema of a new pipeline; loose resources whose
    schema is a listed source's join it. Anything else is one input.
    """
    if _is_source(data):
        source = data() if is_source_factory(data) else data
        return [(source.name, source)]
    if not isinstance(data, (list, tuple)) or not any(_is_source(d) for d in data):
        return [(None, data)]
    if not all(_is_source(d) or isinstance(d, Resource) for d in data):
        kinds = sorted({type(d).__name__ for d in data})
        raise ExtractError(
            f"a list that holds sources may hold only sources and resources, not {kinds}: "
            "make the other data a resource (dlt.resource(data, name=...))"
        )
    sources = [d() if is_source_factory(d) else d for d in data if _is_source(d)]
    loose = [d for d in data if isinstance(d, Resource)]
    groups: list[tuple[str | None, TDataItem]] = [(s.name, s) for s in sources]
    host = next((at for at, s in enumerate(sources) if s.name == loose_schema), None)
    if loose and host is not None:  # the default schema's source takes them in
        joined = sources[host].clone()
        joined.resources.add(*loose)
        groups[host] = (loose_schema, joined)
    elif loose:
        groups.append((loose_schema, loose))
    # stable: two sources of one name stay two packages of one schema, rows of both loaded
    return sorted(groups, key=lambda named: str(named[0]))


def state_source(schema: Schema) -> Source:
    """A source of no resources in ``schema``: extracted, it makes a package that only
    carries the pipeline's state (when it changed) to the destination."""
    return Source(schema.name, schema, [])


def _is_source(data: TDataItem) -> bool:
    return isinstance(data, Source) or is_source_factory(data)


def _is_file_name(value: TDataItem) -> bool:
    """A Path, or an object-store URL of a JSON file (read where it is)."""
    if isinstance(value, Path):
        return True
    if not isinstance(value, str) or not package_storage.is_remote_url(value):
        return False
    return is_json_path(value) or package_storage.is_object_pattern(value)


def input_files_of(data: TDataItem) -> list[Path | str]:
    """The files of a file input (paths, and object URLs read where they are); empty for
    other data.

    These are what a package records as its inputs (see ``InputFingerprint``).
    """
    if isinstance(data, (list, tuple)):
        if not data or not all(_is_file_name(d) for d in data):
            return []
        items = list(data)
    elif is_file_input(data):
        items = [data]
    else:
        return []
    found: list[Path | str] = []
    for item in items:
        if isinstance(item, str) and package_storage.is_object_pattern(item):
            try:
                found.extend(package_storage.expand_objects(item))  # each an input of its own
            except package_storage.PackageStorageError:
                found.append(item)  # the extract step names what is wrong, inside the step
        elif isinstance(item, str) and package_storage.is_remote_url(item):
            found.append(item)
        elif Path(item).is_file():
            found.append(Path(item))
    return found


def _table_from_path(path: Path) -> str:
    name = path.name
    for suffix in (".gz", *JSON_SUFFIXES, *TABULAR_SUFFIXES):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return name or "data"


def extract(
    package: LoadPackage,
    data: TDataItem,
    *,
    table_name: str | None = None,
    hints: TableHints | None = None,
    progress: ProgressCallback | None = None,
    discards: Discards | None = None,
    resource_tables: Mapping[str, Sequence[str]] | None = None,
    schema: Schema | None = None,
) -> ExtractResult:
    """Write ``data`` into ``package`` (in state ``extracting``); the caller switches state.

    ``hints`` are the ``run``/``extract`` hints: they apply to every table of the run, over
    each resource's own; ``discards`` says which tables' rows are dropped here;
    ``resource_tables`` names the root tables the schema holds per resource (see
    :func:`tables_by_resource`); ``schema`` is the run's, which resources given without a
    source see as their source's (``current.source_schema()``).
    """
    source_name, resources = as_resources(data, table_name)
    started = started_generators(resources)
    if started:
        raise SourceExhausted(source_name or package.schema_name, started)
    writer = PackageWriter(package, progress, discards)
    run_hints = hints.stored() if hints is not None else {}
    # one table name for several resources: dlt sends them all into that table
    run_key = hints.primary_key if hints is not None else None
    with _as_source(schema, resources):
        extract_resources(writer, resources, run_hints, table_name, run_key, resource_tables)
    tables = writer.close()
    return ExtractResult(package, tables, source_name)


@attrs.frozen
class RunSource:
    """The source dlt makes of the resources a run is given without one: named after the
    run's schema, holding those resources (what ``current.source()`` answers in them)."""

    name: str
    schema: Schema
    resources: dict[str, Resource]

    @property
    def selected_resources(self) -> dict[str, Resource]:
        return {name: res for name, res in self.resources.items() if res.selected}


def _as_source(
    schema: Schema | None, resources: Sequence[Resource]
) -> contextlib.AbstractContextManager[None]:
    """Inside: ``current.source()`` is a :class:`RunSource` of ``resources`` when the run
    extracts no source of its own."""
    if schema is None:
        return contextlib.nullcontext()
    try:
        current.source()
        return contextlib.nullcontext()  # a source's own extract
    except CurrentSourceNotAvailable:
        by_name = {res.name: res for res in resources}
        return current.source_context(RunSource(schema.name, schema, by_name))


def tables_by_resource(schema: Schema) -> dict[str, list[str]]:
    """The root tables of ``schema`` by the resource that filled them (their ``resource``
    key): a ``replace`` run of that resource empties those it gives no rows."""
    found: dict[str, list[str]] = {}
    for table in schema.data_tables(include_incomplete=True):
        if table.parent is None and table.resource:
            found.setdefault(table.resource, []).append(table.name)
    return found
