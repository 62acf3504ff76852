"""The items of one resource into a load package, each into the table it names.

A resource's data may be a file, a Spark DataFrame, a listing piped into a file reader
(recorded in place, :mod:`loadstone.extract.file_pipes`) or pages of Python items; pages may
carry marks (:mod:`loadstone.extract.mark`): a table name for that page, hints for the
resource's table from then on, or the request to create the table without data. Errors of
user code are reported as the resource's, as dlt does.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from loadstone.extract.dataframes import dataframe_hints, extract_dataframe, is_spark_dataframe
from loadstone.extract.file_inputs import (
    extract_file,
    extract_tabular,
    is_file_input,
    object_in_place,
    objects_of,
)
from loadstone.extract.file_pipes import extract_in_place, reads_in_place
from loadstone.extract.incremental import RUN_DISPOSITION, RUN_PRIMARY_KEY
from loadstone.extract.mark import (
    DataItemWithMeta,
    HintsMeta,
    MaterializeTableSchema,
    Meta,
    TableNameMeta,
    unwrap,
)
from loadstone.extract.pipe_graph import PipeNode, pipe_graph
from loadstone.extract.pipe_iterator import AsResource, PipeIterator
from loadstone.extract.resource import Resource
from loadstone.extract.resource_hints import StoredHint, StoredHints, merge_hints
from loadstone.extract.table_variants import Variants, add_variant, variant_hints
from loadstone.extract.tabular_files import tabular_kind
from loadstone.extract.writers import PackageWriter
from loadstone.schema.hints import disposition_of
from loadstone.storage import package_storage
from loadstone.typing import TColumnNames, TDataItem, TTableHintTemplate


def _resolve_table(table_name: TTableHintTemplate[str], item: TDataItem) -> str:
    if callable(table_name):
        return str(table_name(item))
    return str(table_name)


def extract_resources(
    writer: PackageWriter,
    resources: Sequence[Resource],
    run_hints: Mapping[str, StoredHint],
    table_name: str | None,
    run_key: TColumnNames | None = None,
    resource_tables: Mapping[str, Sequence[str]] | None = None,
) -> None:
    """The items of ``resources`` into the package, each resource evaluated once
    (``run_key``: ``run()``'s primary key as given, which the cursors deduplicate by;
    ``resource_tables``: the root tables the schema already holds per resource name, which a
    ``replace`` resource empties when this run gives them no rows, as dlt 1.31 does).

    Files, tabular files and Spark DataFrames are recorded as they are; the rest run as one
    pipe graph (:mod:`loadstone.extract.pipe_iterator`): a parent feeding transformers is
    read once and its pages forked to each. A file reader piped straight from a listing is a
    *tap* of the graph: it gets the listing's items, and records the files in place.
    """
    piped: list[Resource] = []
    taps: dict[int, str] = {}
    for res in resources:
        target = table_name if table_name is not None else res.table_name
        if isinstance(target, str) and _extract_as_files(writer, res, run_hints, target):
            continue
        kind = reads_in_place(res) if isinstance(target, str) else None
        if kind is not None:
            taps[id(res)] = kind
        piped.append(res)
    if not piped:
        return
    graph = pipe_graph(
        [res for res in piped if id(res) not in taps],
        [res for res in piped if id(res) in taps],
    )
    known = resource_tables or {}
    sinks = {
        id(node): _sink_of(writer, node, run_hints, table_name, taps.get(id(node.resource)))
        for node in graph.selected
    }
    for node in graph.selected:
        sink = sinks[id(node)]
        if isinstance(sink, TableSink):
            sink.known_tables = tuple(known.get(sink.resource_name, ()))
    iterator = PipeIterator(graph)
    given = RUN_DISPOSITION.set(run_hints.get("write_disposition"))  # cursors bind in the loop
    keyed = RUN_PRIMARY_KEY.set(run_key)
    try:
        with contextlib.closing(iter(iterator)) as pages:  # a failed write closes the pipes now
            for node, page in pages:
                sinks[id(node)].write(page)
    finally:
        RUN_DISPOSITION.reset(given)
        RUN_PRIMARY_KEY.reset(keyed)
    for sink in sinks.values():
        sink.close()
    iterator.commit()


def _extract_as_files(
    writer: PackageWriter, res: Resource, run_hints: Mapping[str, StoredHint], target: str
) -> bool:
    """Record a Spark DataFrame, a tabular file or a JSON file (local or an object) as it
    is; False for other data."""
    data = res.data
    hints = merge_hints(res.compute_table_hints(), run_hints)
    if is_spark_dataframe(data):
        writer.add_hints(target, merge_hints(dataframe_hints(data), hints))
        extract_dataframe(writer, data, target)
    elif tabular_kind(data) is not None:
        writer.add_hints(target, hints)
        extract_tabular(writer, Path(data), target, str(tabular_kind(data)))
    elif is_file_input(data):
        writer.add_hints(target, hints)
        if isinstance(data, str) and package_storage.is_remote_url(data):
            writer.add_files(
                [object_in_place(writer.package, url, target) for url in objects_of(data)]
            )
        else:
            extract_file(writer, Path(data), target)
    else:
        return False
    return True


def _sink_of(
    writer: PackageWriter,
    node: PipeNode,
    run_hints: Mapping[str, StoredHint],
    table_name: str | None,
    in_place: str | None,
) -> TableSink | InPlaceSink:
    res = node.resource
    assert isinstance(res, Resource)
    # the resource's name goes with its tables' hints: dlt's ``resource`` key of a table it
    # fills under another name (a dynamic name, a mark, a variant, ``run(table_name=)``)
    hints = {**merge_hints(res.compute_table_hints(), run_hints), "resource": res.name}
    target = table_name if table_name is not None else res.table_name
    if in_place is not None and isinstance(target, str):
        return InPlaceSink(writer, res, in_place, target, hints, run_hints)
    sink = TableSink(writer, res.name, hints, target, run_hints, res.table_variants)
    if callable(target) and res.has_hint_functions:
        sink.resource = res
    return sink


class TableSink:
    """The pages of one resource into the tables they name; marks change the table or the
    hints from then on, or create the table without data."""

    def __init__(
        self,
        writer: PackageWriter,
        resource_name: str,
        hints: StoredHints,
        target: TTableHintTemplate[str],
        run_hints: Mapping[str, StoredHint],
        variants: Variants,
    ) -> None:
        self.writer, self.resource_name = writer, resource_name
        self.hints, self.target, self.run_hints = hints, target, run_hints
        self.variants = dict(variants)  # the resource's table variants, and the marks'
        #: the resource, when it has hints that are functions of the item
        self.resource: Resource | None = None
        self.filled: set[str] = set()
        #: the tables the schema already holds for this resource (emptied under replace)
        self.known_tables: tuple[str, ...] = ()

    def write(self, page: TDataItem) -> None:
        page_target: TTableHintTemplate[str] = self.target
        routed = callable(self.target)  # a name from the item may name a variant
        if isinstance(page, DataItemWithMeta):
            meta = page.meta
            if isinstance(meta, HintsMeta) and meta.create_table_variant:
                # hints for the table they name, merged into its variant; the resource's
                # table and hints stay (dlt's table variant)
                self.variants = add_variant(self.variants, meta.hints.get("name"), meta.hints)
                page_target, routed = meta.hints["name"], True
                self.filled.discard(page_target)  # its hints changed: hand them on again
            elif isinstance(meta, TableNameMeta):
                page_target, routed = meta.table_name, True
            else:
                page_target, self.hints = _apply_mark(
                    self.writer, meta, self.target, self.hints, self.run_hints
                )
                if isinstance(meta, HintsMeta) and "name" in meta.hints:
                    self.target = page_target
            page = page.data
        if isinstance(page, list) and not page and isinstance(page_target, str):  # names it too
            self.writer.add_hints(page_target, self._hints_of(page_target, routed))
        for item in page if isinstance(page, list) else (page,):
            if item is None:
                if not isinstance(page, list) or not isinstance(page_target, str):
                    continue
                item = {}  # dlt 1.31 loads a None inside a yielded list as a row of nulls
            name = (
                page_target if isinstance(page_target, str) else self._table_of(item, page_target)
            )
            if self.resource is not None:  # hints that are functions of the item (dlt's)
                self._add_hints_of_item(name, routed, item, self.resource)
            elif name not in self.filled:
                self.writer.add_hints(name, self._hints_of(name, routed))
                self.filled.add(name)
            if is_spark_dataframe(item):  # written by Spark, as a DataFrame given to run()
                self.writer.add_hints(
                    name, merge_hints(dataframe_hints(item), self.writer.hints[name])
                )
                extract_dataframe(self.writer, item, name)
                continue
            self.writer.write_item(name, item, self.resource_name)

    def _add_hints_of_item(self, name: str, routed: bool, item: TDataItem, res: Resource) -> None:
        """The table's hints with what the resource's hint functions say of ``item``: each
        item's are merged into its table's, as dlt merges them."""
        with AsResource(self.resource_name):
            of_item = res.hints_of_item(item) or {}
        self.writer.add_hints(
            name, merge_hints(merge_hints(self._hints_of(name, routed), of_item), self.run_hints)
        )
        self.filled.add(name)

    def _hints_of(self, table_name: str, routed: bool) -> StoredHints:
        """The hints of a table an item goes to: its variant's when a mark or the item
        names it (the resource's hints with the variant's over them), else the resource's."""
        variant = variant_hints(self.hints, self.variants, table_name) if routed else None
        return self.hints if variant is None else merge_hints(variant, self.run_hints)

    def _table_of(self, item: TDataItem, table_name: TTableHintTemplate[str]) -> str:
        """A dynamic table name's table for ``item`` (the user's function: its errors are
        the resource's)."""
        with AsResource(self.resource_name):
            return _resolve_table(table_name, item)

    def close(self) -> None:
        """A table with no items still gets hints, and no file. Under ``replace`` so does
        every table the resource filled before that this run did not name (a dynamic or
        marked table, an old table name), so the load empties it, as dlt 1.31 does."""
        if isinstance(self.target, str) and self.target not in self.filled:
            self.writer.add_hints(self.target, self.hints)
            self.writer.open_table(self.target)
        if disposition_of(self.hints)[0] != "replace":
            return
        for name in self.known_tables:
            if name not in self.writer.hints:
                self.writer.add_hints(name, self._hints_of(name, True))
                self.writer.open_table(name)


class InPlaceSink:
    """A file reader's input: the listing's items, recorded in place when it ends."""

    def __init__(
        self,
        writer: PackageWriter,
        reader: Resource,
        kind: str,
        target: str,
        hints: StoredHints,
        run_hints: Mapping[str, StoredHint],
    ) -> None:
        self.writer, self.reader, self.kind, self.target = writer, reader, kind, target
        self.hints, self.run_hints = hints, run_hints
        self.items: list[TDataItem] = []

    def write(self, page: TDataItem) -> None:
        data, _ = unwrap(page)
        self.items.extend(data if isinstance(data, list) else [data])

    def close(self) -> None:
        self.writer.add_hints(self.target, self.hints)
        extract_in_place(
            self.writer,
            self.reader,
            self.kind,
            self.target,
            self.items,
            lambda reader: extract_resources(self.writer, [reader], self.run_hints, self.target),
        )


def _apply_mark(
    writer: PackageWriter,
    meta: Meta,
    target: TTableHintTemplate[str],
    hints: StoredHints,
    run_hints: Mapping[str, StoredHint],
) -> tuple[TTableHintTemplate[str], StoredHints]:
    """(the table of a marked page, the hints from now on)."""
    if isinstance(meta, TableNameMeta):
        return meta.table_name, hints
    if isinstance(meta, HintsMeta):
        new_hints = {k: v for k, v in meta.hints.items() if k != "name"}
        hints = merge_hints(merge_hints(hints, new_hints), run_hints)
        table = meta.hints.get("name", target)
        if isinstance(table, str):
            writer.add_hints(table, hints)
        return table, hints
    if isinstance(meta, MaterializeTableSchema) and isinstance(target, str):
        writer.add_hints(target, {**hints, "x-materialize": True})
        writer.open_table(target)
    return target, hints


def _items(page: TDataItem) -> Iterable[TDataItem]:
    if page is None:
        return ()
    if isinstance(page, list):
        return [item for item in page if item is not None]
    return (page,)
