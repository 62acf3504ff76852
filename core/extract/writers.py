"""The writer of a load package's extracted files: items of each source table into rotating
JSON-lines chunk files (Arrow data into Parquet), plus the hints per table.

Chunks are bounded (:data:`CHUNK_BYTES`, :data:`CHUNK_ITEMS`) so the normalizer reads a
package in parallel; every file is made durable before the package records it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import BinaryIO

import attrs

from loadstone.exceptions import ExtractError, ResourceError
from loadstone.extract.arrow_items import (
    ArrowItemError,
    ArrowTableWriter,
    as_arrow_table,
    is_arrow_item,
)
from loadstone.extract.item_json import ItemError, encode_item
from loadstone.extract.resource_hints import StoredHint, StoredHints, merge_hints
from loadstone.storage.load_package import ExtractedFile, LoadPackage
from loadstone.typing import TDataItem

#: A chunk file is closed once it holds this many bytes ...
CHUNK_BYTES = 32 * 1024 * 1024
#: ... or this many items, whichever comes first.
CHUNK_ITEMS = 500_000


#: Called as ``progress(rows, bytes, files)`` with running totals while extracting.
ProgressCallback = Callable[[int, int, int], None]


@attrs.frozen
class ExtractedTable:
    """What extract wrote for one source table."""

    table_name: str
    items: int
    files: int
    bytes: int


class _TableWriter:
    """Writes items of one table into rotating chunk files of a package."""

    def __init__(self, package: LoadPackage, table_name: str, index: int) -> None:
        self.package = package
        self.table_name = table_name
        self.index = index
        self.chunk = 0
        self.items = 0
        self.bytes = 0
        self.files: list[ExtractedFile] = []
        self._handle: BinaryIO | None = None
        self._path: Path | None = None
        self._chunk_items = 0
        self._chunk_bytes = 0

    def _open(self) -> BinaryIO:
        name = f"t{self.index:04d}.{self.chunk:05d}.jsonl"
        self._path = self.package.extracted_dir / name
        self._handle = handle = open(self._path, "wb", buffering=1024 * 1024)
        self._chunk_items = 0
        self._chunk_bytes = 0
        self.chunk += 1
        return handle

    def write(self, line: bytes) -> int:
        handle = self._handle if self._handle is not None else self._open()
        handle.write(line)
        handle.write(b"\n")
        size = len(line) + 1
        self._chunk_items += 1
        self._chunk_bytes += size
        self.items += 1
        self.bytes += size
        if self._chunk_bytes >= CHUNK_BYTES or self._chunk_items >= CHUNK_ITEMS:
            self._close()
        return size

    def _close(self) -> None:
        if self._handle is None:
            return
        self._handle.flush()
        os.fsync(self._handle.fileno())
        self._handle.close()
        assert self._path is not None
        self.files.append(
            ExtractedFile(
                self._path, self.table_name, items=self._chunk_items, size=self._chunk_bytes
            )
        )
        self._handle = None

    def close(self) -> list[ExtractedFile]:
        self._close()
        return self.files


def _refused(which: str, table: str, resource: str | None, cause: Exception) -> ExtractError:
    """The one line for an item that cannot be extracted: which, where, why."""
    of = f" of resource {resource!r}" if resource and resource != table else ""
    return ExtractError(
        f"{which} of table {table!r}{of} cannot be extracted: {cause}; nothing was loaded"
    )


#: whether the rows of a table (by name and hints) are dropped at extract: a new table its
#: contract discards (``loadstone.extract.extract_schema.new_table_discards``)
Discards = Callable[[str, Mapping[str, StoredHint]], bool]


def _resource_of(hints: Mapping[str, StoredHint]) -> str | None:
    resource = hints.get("resource")
    return resource if isinstance(resource, str) else None


class PackageWriter:
    """All tables being written into one package, plus their hints."""

    def __init__(
        self,
        package: LoadPackage,
        progress: ProgressCallback | None = None,
        discards: Discards | None = None,
    ) -> None:
        self.package = package
        self.progress = progress
        self._discards = discards
        self._dropped: dict[str, bool] = {}
        self._writers: dict[str, _TableWriter] = {}
        self.hints: dict[str, StoredHints] = {}
        #: each table's hints per resource, and the resource that wrote its first item
        self._hints_by: dict[str, dict[str | None, StoredHints]] = {}
        self._owners: dict[str, str | None] = {}
        self._extra_files: list[ExtractedFile] = []
        self._arrow_writers: dict[str, ArrowTableWriter] = {}
        self._stats: dict[str, list[int]] = {}
        self._rows = 0
        self._bytes = 0
        self._files = 0
        self._since_report = 0

    def add_hints(self, table_name: str, hints: Mapping[str, StoredHint]) -> None:
        if hints.get("parent") is not None:
            # rows of a nested table come from their parent's nested data (dlt 1.31 fails
            # such a resource at extract too, with a KeyError)
            raise ResourceError(
                f"table {table_name!r} has parent_table_name={hints['parent']!r}: a resource "
                "cannot fill a nested table; yield the rows inside their parent's items"
            )
        resource = _resource_of(hints)
        by_resource = self._hints_by.setdefault(table_name, {})
        by_resource[resource] = merge_hints(by_resource.get(resource, {}), hints)
        owner = self._owners.get(table_name, resource)
        if owner == resource:
            self.hints[table_name] = merge_hints(self.hints.get(table_name, {}), hints)

    def _own(self, table_name: str, resource: str | None) -> None:
        """The first resource that writes an item into ``table_name`` gives the table its
        hints; what other resources say of it in this package is ignored (dlt 1.31 reads a
        table's hints once per extract, from its first writer)."""
        if table_name in self._owners or resource is None:
            return
        self._owners[table_name] = resource
        own = self._hints_by.get(table_name, {}).get(resource)
        if own is not None:
            self.hints[table_name] = own

    def open_table(self, table_name: str) -> None:
        """Start ``table_name`` with no items: it gets its hints, and no file."""
        self._writer(table_name)

    def file_index(self, base: int, *, with_copies: bool = True) -> int:
        """A number for new files written beside the writers' (``base`` + files so far),
        unique within the package."""
        index = base + len(self._writers) + len(self._stats)
        return index + len(self._extra_files) if with_copies else index

    def copies_index(self, base: int) -> int:
        """A number for a new copied file: ``base`` + files recorded directly so far."""
        return base + len(self._extra_files)

    def _writer(self, table_name: str) -> _TableWriter:
        writer = self._writers.get(table_name)
        if writer is None:
            writer = _TableWriter(self.package, table_name, len(self._writers) + len(self._stats))
            self._writers[table_name] = writer
        return writer

    def drops(self, table_name: str) -> bool:
        """Whether the rows of ``table_name`` are dropped here (asked once per table)."""
        if self._discards is None:
            return False
        dropped = self._dropped.get(table_name)
        if dropped is None:
            dropped = self._discards(table_name, self.hints.get(table_name, {}))
            self._dropped[table_name] = dropped
        return dropped

    def write_item(self, table_name: str, item: TDataItem, resource: str | None = None) -> None:
        """One item of ``table_name``: a JSON line, or Arrow data into the table's Parquet."""
        self._own(table_name, resource)
        if self.drops(table_name):
            return
        if is_arrow_item(item):
            self.write_arrow(table_name, item, resource)
            return
        writer = self._writer(table_name)
        chunk_before = writer.chunk
        try:
            line = encode_item(item)
        except ItemError as error:
            raise _refused(f"item {writer.items + 1}", table_name, resource, error) from None
        self._bytes += writer.write(line)
        self._rows += 1
        if writer.chunk != chunk_before:
            self._files += 1
        self._since_report += 1
        if self.progress is not None and self._since_report >= 10_000:
            self._since_report = 0
            self.progress(self._rows, self._bytes, self._files)

    def write_arrow(self, table_name: str, item: TDataItem, resource: str | None = None) -> None:
        """A pyarrow Table/RecordBatch or pandas DataFrame, written columnar (no row loop)."""
        self._own(table_name, resource)
        if self.drops(table_name):
            return
        try:
            table = as_arrow_table(item)
        except ArrowItemError as error:
            raise _refused("an item", table_name, resource, error) from None
        writer = self._arrow_writers.get(table_name)
        if writer is None:
            index = 3000 + len(self._arrow_writers)
            writer = ArrowTableWriter(self.package.extracted_dir, table_name, index)
            self._arrow_writers[table_name] = writer
        files_before = writer.chunk
        self._rows += writer.write(table)
        self._files += writer.chunk - files_before
        if self.progress is not None:
            self.progress(self._rows, self._bytes, self._files)

    def add_files(self, files: list[ExtractedFile]) -> None:
        """Record files written directly into ``extracted/`` (copies, Spark output)."""
        self._extra_files.extend(files)
        for file in files:
            stat = self._stats.setdefault(file.table_name, [0, 0, 0])
            stat[0] += file.items or 0
            stat[1] += 1
            stat[2] += file.size or 0
            self._rows += file.items or 0
            self._bytes += file.size or 0
            self._files += 1
        if self.progress is not None:
            self.progress(self._rows, self._bytes, self._files)

    def report(self) -> None:
        if self.progress is not None:
            self.progress(self._rows, self._bytes, self._files)

    def close(self) -> dict[str, ExtractedTable]:
        """Flush every file, record them and the hints in the package; per table totals."""
        files: list[ExtractedFile] = []
        tables: dict[str, ExtractedTable] = {}
        for name, writer in self._writers.items():
            written = writer.close()
            files.extend(written)
            tables[name] = ExtractedTable(name, writer.items, len(written), writer.bytes)
        for name, arrow in self._arrow_writers.items():
            written = arrow.close()
            files.extend(written)
            stat = self._stats.setdefault(name, [0, 0, 0])
            stat[0] += arrow.rows
            stat[1] += len(written)
            stat[2] += arrow.bytes
        files.extend(self._extra_files)
        for name, (items, nfiles, nbytes) in self._stats.items():
            prev = tables.get(name)
            if prev is None:
                tables[name] = ExtractedTable(name, items, nfiles, nbytes)
            else:
                tables[name] = ExtractedTable(
                    name, prev.items + items, prev.files + nfiles, prev.bytes + nbytes
                )
        self.package.add_extracted_files(files)
        self.package.write_table_hints(self.hints)
        self.report()
        return tables
