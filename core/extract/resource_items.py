"""The items of one resource into a load package, each into the table it names.

A resource's data may be a file, a Spark DataFrame, a listing piped into a file reader
(recorded in place, :mod:`loadstone.extract.file_pipes`) or pages of Python items; pages may
carry marks (:mod:`loadstone.extract.mark`): a table name for that page, hints for the
resource's table from then on, or the request to create the table without data. Errors of
user code are reported as the resource's, as dlt does.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from loadstone.exceptions import LoadstoneError, ResourceExtractionError
from loadstone.extract.dataframes import extract_dataframe, is_spark_dataframe
from loadstone.extract.file_inputs import (
    extract_file,
    extract_tabular,
    is_file_input,
    object_in_place,
    objects_of,
)
from loadstone.extract.file_pipes import extract_in_place, reads_in_place
from loadstone.extract.mark import (
    DataItemWithMeta,
    HintsMeta,
    MaterializeTableSchema,
    Meta,
    TableNameMeta,
)
from loadstone.extract.resource import Resource
from loadstone.extract.resource_hints import StoredHint, StoredHints, merge_hints
from loadstone.extract.tabular_files import tabular_kind
from loadstone.extract.writers import PackageWriter
from loadstone.storage import package_storage
from loadstone.typing import TDataItem, TTableHintTemplate


def _resolve_table(table_name: TTableHintTemplate[str], item: TDataItem) -> str:
    if callable(table_name):
        return str(table_name(item))
    return str(table_name)


def extract_resource(
    writer: PackageWriter,
    res: Resource,
    run_hints: Mapping[str, StoredHint],
    table_name: str | None,
) -> None:
    """Items of a resource into the package; hints recorded per table it fills.

    Pages may carry marks (:mod:`loadstone.extract.mark`): a table name for that page, hints
    for the resource's table from then on, or the request to create the table without data.
    """
    from loadstone import current

    hints = merge_hints(res.compute_table_hints(), run_hints)
    target = table_name if table_name is not None else res.table_name
    data = res.data
    if is_spark_dataframe(data) and isinstance(target, str):
        writer.add_hints(target, hints)
        extract_dataframe(writer, data, target)
        return
    if tabular_kind(data) is not None and isinstance(target, str):
        writer.add_hints(target, hints)
        extract_tabular(writer, Path(data), target, str(tabular_kind(data)))
        return
    if is_file_input(data) and isinstance(target, str):
        writer.add_hints(target, hints)
        if isinstance(data, str) and package_storage.is_remote_url(data):
            writer.add_files(
                [object_in_place(writer.package, url, target) for url in objects_of(data)]
            )
        else:
            extract_file(writer, Path(data), target)
        return
    kind = reads_in_place(res) if isinstance(target, str) else None
    if kind is not None and isinstance(target, str):
        writer.add_hints(target, hints)
        with current.resource_context(res.name), _user_errors(res.name):
            extract_in_place(
                writer,
                res,
                kind,
                target,
                lambda r: _extract_pages(writer, r, hints, target, run_hints),
            )
        return
    _extract_pages(writer, res, hints, target, run_hints)


def _extract_pages(
    writer: PackageWriter,
    res: Resource,
    hints: StoredHints,
    target: TTableHintTemplate[str],
    run_hints: Mapping[str, StoredHint],
) -> None:
    """The pages a resource yields, item by item, into the tables they name."""
    from loadstone import current

    filled: set[str] = set()
    with current.resource_context(res.name), _user_errors(res.name):
        for page in res.pages():
            page_target: TTableHintTemplate[str] = target
            if isinstance(page, DataItemWithMeta):
                page_target, hints = _apply_mark(writer, page.meta, target, hints, run_hints)
                if isinstance(page.meta, HintsMeta) and "name" in page.meta.hints:
                    target = page_target
                page = page.data
            for item in _items(page):
                name = _resolve_table(page_target, item)
                if name not in filled:
                    writer.add_hints(name, hints)
                    filled.add(name)
                writer.write_item(name, item, res.name)
    if isinstance(target, str) and target not in filled:
        writer.add_hints(target, hints)
        writer.open_table(target)  # a table with no items still gets hints, and no file


@contextlib.contextmanager
def _user_errors(resource_name: str) -> Iterator[None]:
    """Errors of user code (not loadstone's own) are reported as the resource's, as dlt does."""
    try:
        yield
    except LoadstoneError:
        raise
    except Exception as exc:
        raise ResourceExtractionError(resource_name, exc) from exc


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
