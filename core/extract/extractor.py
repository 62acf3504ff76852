"""Extract: any input -> JSON-lines files of a load package, one set per source table.

Inputs are Python items (lists, generators, resources, sources), JSON/JSONL files (plain or
gzipped; a ``.json`` file may hold one array) and Spark DataFrames. Python items are
serialized here, line by line, into chunk files of bounded size, so the normalizer on Spark
can read the package in parallel. A plain JSONL file is copied whole by the kernel (the
normalizer splits it into byte ranges itself; re-chunking it here cost 5x a copy); a gzipped
one is decompressed into whole-line chunks, since a gzip stream cannot be split. DataFrames are written by Spark itself (``df.write.json``), never collected to the driver.

Extract stores the *source* table name of each file and the hints from code per table; it
does not normalize names: naming is the normalizer's job, done once, on the schema.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import gzip
import json
import os
import shutil
import threading
import uuid
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any, Final

import attrs
import orjson

from loadstone.exceptions import ExtractError, LoadstoneError, ResourceExtractionError
from loadstone.extract.arrow_items import (
    PARQUET_SUFFIX,
    ArrowItemError,
    ArrowTableWriter,
    as_arrow_table,
    is_arrow_item,
)
from loadstone.extract.file_pipes import extract_in_place, reads_in_place
from loadstone.extract.mark import (
    DataItemWithMeta,
    HintsMeta,
    MaterializeTableSchema,
    TableNameMeta,
)
from loadstone.extract.sources import (
    Resource,
    Source,
    TableHints,
    is_source_factory,
    merge_hints,
)
from loadstone.extract.tabular_files import (
    TABULAR_SUFFIXES,
    TabularFileError,
    copy_parquet,
    read_csv_batches,
    tabular_kind,
)
from loadstone.extract.typed_json import mark
from loadstone.storage import package_storage
from loadstone.storage.content_check import head_tail_digest
from loadstone.storage.load_package import ExtractedFile, LoadPackage

#: A chunk file is closed once it holds this many bytes ...
CHUNK_BYTES = 32 * 1024 * 1024
#: ... or this many items, whichever comes first.
CHUNK_ITEMS = 500_000
#: Read size of the line count that runs beside a whole-file copy.
COPY_BLOCK = 8 * 1024 * 1024

#: File suffixes read as JSON input by ``run`` (gzipped variants too).
JSON_SUFFIXES = (".jsonl", ".json", ".ndjson")


class ItemError(ValueError):
    """One Python item cannot be written as JSON; the writer adds table and item number."""


#: The UTF-8 byte order mark; accepted in front of every JSON input.
BOM = b"\xef\xbb\xbf"


#: Called as ``progress(rows, bytes, files)`` with running totals while extracting.
ProgressCallback = Callable[[int, int, int], None]


@attrs.frozen
class ExtractedTable:
    """What extract wrote for one source table."""

    table_name: str
    items: int
    files: int
    bytes: int


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


# --------------------------------------------------------------------------------------
# item serialization
# --------------------------------------------------------------------------------------
def _default(value: Any) -> Any:
    """JSON for values orjson does not know; keeps their meaning as far as JSON can.

    ``Decimal``, ``date``, ``time`` and bytes become marked strings that normalize reads
    back as those values (:mod:`loadstone.extract.typed_json`), so they are typed as dlt does.
    """
    marked = mark(value)
    if marked is not None:
        return marked
    if isinstance(value, (_dt.datetime, Decimal)):
        return str(value) if isinstance(value, Decimal) else value.isoformat()
    if isinstance(value, tuple) and callable(
        getattr(value, "_asdict", None) or getattr(value, "asDict", None)
    ):
        return plain_value(value)  # a named tuple or a Spark Row: its fields by name
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return plain_value(value)


def plain_value(value: Any) -> Any:
    """A value of a type JSON has no form for, as dlt stores it, or :class:`ItemError`.

    Never the value's printed text: that would load ``<object at 0x...>`` as data and report
    success. numpy scalars are their Python value; pydantic models and objects with
    ``_asdict`` (named tuples) are their dicts; everything else is refused by type.
    """
    item = getattr(value, "item", None)
    if type(value).__module__ == "numpy" and callable(item) and getattr(value, "ndim", 1) == 0:
        return item()
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump()
    as_dict = getattr(value, "asDict", None) or getattr(value, "_asdict", None)
    if callable(as_dict):
        return as_dict()
    raise ItemError(refusal(value))


def refusal(value: Any) -> str:
    """Why ``value`` is refused and what to yield instead (one line, the type named)."""
    kind = type(value)
    name = f"{kind.__module__}.{kind.__qualname__}"
    if kind.__module__ == "numpy":
        hint = "convert it with .tolist(), or yield a pyarrow.Table or pandas.DataFrame"
    else:
        hint = (
            "yield dicts, lists, scalars, pyarrow.Table/RecordBatch or pandas.DataFrame "
            "(or map the object to a dict with add_map)"
        )
    return f"it holds a value of type {name}, which loadstone does not load as text: {hint}"


#: dates and times reach :func:`_default` (orjson would write them as plain ISO text)
_ORJSON_OPTIONS: Final = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME


def _prepare(value: Any) -> Any:
    """The item for the stdlib encoder: non-finite floats as null (as orjson writes them)."""
    if isinstance(value, Mapping):
        return {str(k): _prepare(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_prepare(v) for v in value]
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    return value


def encode_item(item: Any) -> bytes:
    """One item as one line of JSON (without the newline).

    orjson is the fast path; integers beyond 64 bits go through the stdlib encoder so that
    no digit is lost (a bare JSON number, which the normalizer types). Values JSON has no
    type for are marked strings (:func:`_default`). NaN and infinities become null on both
    paths (as dlt 1.31 stores them from Python objects). An item nested too deep for JSON,
    or holding a string with an unpaired surrogate, raises :class:`ItemError` with the
    cause in one line.
    """
    try:
        return orjson.dumps(item, default=_default, option=_ORJSON_OPTIONS)
    except TypeError:
        try:
            text = json.dumps(
                _prepare(item), default=_default, ensure_ascii=False, separators=(",", ":")
            )
            return text.encode("utf-8")
        except RecursionError:
            raise ItemError("it is nested too deep to be written as JSON") from None
        except UnicodeEncodeError as error:
            bad = error.object[error.start : error.end]
            raise ItemError(
                f"a string holds the unpaired surrogate {bad!r}, which UTF-8 cannot encode"
            ) from None


# --------------------------------------------------------------------------------------
# writers
# --------------------------------------------------------------------------------------
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
        self._handle: Any = None
        self._path: Path | None = None
        self._chunk_items = 0
        self._chunk_bytes = 0

    def _open(self) -> None:
        name = f"t{self.index:04d}.{self.chunk:05d}.jsonl"
        self._path = self.package.extracted_dir / name
        self._handle = open(self._path, "wb", buffering=1024 * 1024)
        self._chunk_items = 0
        self._chunk_bytes = 0
        self.chunk += 1

    def write(self, line: bytes) -> int:
        if self._handle is None:
            self._open()
        self._handle.write(line)
        self._handle.write(b"\n")
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


class PackageWriter:
    """All tables being written into one package, plus their hints."""

    def __init__(self, package: LoadPackage, progress: ProgressCallback | None = None) -> None:
        self.package = package
        self.progress = progress
        self._writers: dict[str, _TableWriter] = {}
        self.hints: dict[str, dict[str, Any]] = {}
        self._extra_files: list[ExtractedFile] = []
        self._arrow_writers: dict[str, ArrowTableWriter] = {}
        self._stats: dict[str, list[int]] = {}
        self._rows = 0
        self._bytes = 0
        self._files = 0
        self._since_report = 0

    def add_hints(self, table_name: str, hints: Mapping[str, Any]) -> None:
        self.hints[table_name] = merge_hints(self.hints.get(table_name, {}), hints)

    def _writer(self, table_name: str) -> _TableWriter:
        writer = self._writers.get(table_name)
        if writer is None:
            writer = _TableWriter(self.package, table_name, len(self._writers) + len(self._stats))
            self._writers[table_name] = writer
        return writer

    def write_item(self, table_name: str, item: Any, resource: str | None = None) -> None:
        """One item of ``table_name``: a JSON line, or Arrow data into the table's Parquet."""
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

    def write_arrow(self, table_name: str, item: Any, resource: str | None = None) -> None:
        """A pyarrow Table/RecordBatch or pandas DataFrame, written columnar (no row loop)."""
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


# --------------------------------------------------------------------------------------
# file inputs
# --------------------------------------------------------------------------------------
def is_json_path(value: Any) -> bool:
    """A str/Path naming a JSON or JSONL file (maybe .gz) -- read as a file input."""
    if isinstance(value, Path):
        return True
    if isinstance(value, str) and "\n" not in value:
        lowered = value.lower()
        if lowered.endswith(".gz"):
            lowered = lowered[:-3]
        return lowered.endswith(JSON_SUFFIXES)
    return False


def is_file_input(value: Any) -> bool:
    """A str/Path naming a file ``run`` reads: JSON/JSONL, Parquet or CSV (maybe .gz), or
    objects of an object store by glob or folder URL (read in place)."""
    if isinstance(value, str) and package_storage.is_object_pattern(value):
        return True
    return tabular_kind(value) is not None or is_json_path(value)


def _extract_tabular(writer: PackageWriter, path: Path, table_name: str, kind: str) -> None:
    """A Parquet or CSV file into the package's Arrow files (see ``tabular_files``)."""
    if not path.is_file():
        raise ExtractError(f"input file {path} does not exist")
    try:
        if kind == "parquet":
            index = 4000 + len(writer._extra_files)
            target = writer.package.extracted_dir / f"p{index:04d}.00000{PARQUET_SUFFIX}"
            writer.add_files([copy_parquet(path, target, table_name)])
        else:
            read_csv_batches(path, lambda table: _write_arrow_rows(writer, table_name, table))
    except TabularFileError as error:
        raise ExtractError(f"{error}; nothing was loaded") from None


def _write_arrow_rows(writer: PackageWriter, table_name: str, table: Any) -> int:
    writer.write_arrow(table_name, table)
    return int(table.num_rows)


def _open_binary(path: Path) -> Any:
    if path.suffix.lower() == ".gz":
        return gzip.open(path, "rb")
    return open(path, "rb")


def _looks_like_document(path: Path) -> bool:
    """True when the file is one JSON document (an array, or a pretty-printed object).

    JSONL is told by its lines: the first line (read whole, however long: a 64 KiB peek
    took a long first record for a document) is an object, or, when it is not, one of the
    next lines is (then the first line is a bad record, which ``on_bad_record`` handles and
    the normalizer names by its line). A leading BOM is ignored.
    """
    with _open_binary(path) as handle:
        lines = _first_lines(handle, 4)
    if not lines:
        return False
    first = lines[0]
    if first[:1] == b"[":
        return True
    if first[:1] != b"{":
        return False
    return not any(_is_object(line) for line in lines)


def _first_lines(handle: Any, count: int) -> list[bytes]:
    """Up to ``count`` non-blank lines from the start of ``handle``, stripped, BOM removed."""
    lines: list[bytes] = []
    while len(lines) < count:
        line = handle.readline()
        if not line:
            break
        if not lines and line.startswith(BOM):
            line = line[len(BOM) :]
        line = line.strip()
        if line:
            lines.append(line)
    return lines


def _is_object(line: bytes) -> bool:
    try:
        return isinstance(orjson.loads(line), dict)
    except orjson.JSONDecodeError:
        return False


def extract_file(
    writer: PackageWriter, path: Path, table_name: str, chunk_bytes: int = CHUNK_BYTES
) -> None:
    """Copy a JSON/JSONL file into the package without parsing it.

    A JSON array (or one pretty-printed object) is parsed and written as items instead.
    Gzipped input is decompressed into ``chunk_bytes`` chunks of whole lines.
    """
    path = Path(path)
    if not path.is_file():
        raise ExtractError(f"input file {path} does not exist")
    try:
        _extract_file(writer, path, table_name, chunk_bytes)
    except (EOFError, zlib.error, gzip.BadGzipFile) as error:
        raise ExtractError(
            f"{path} is not a complete gzip file ({error}); nothing was loaded"
        ) from None


def _extract_file(writer: PackageWriter, path: Path, table_name: str, chunk_bytes: int) -> None:
    if _looks_like_document(path):
        with _open_binary(path) as handle:
            text = handle.read()
        if text.startswith(BOM):
            text = text[len(BOM) :]
        try:
            document = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise ExtractError(f"{path} is not valid JSON: {exc}; nothing was loaded") from None
        items = document if isinstance(document, list) else [document]
        for item in items:
            writer.write_item(table_name, item)
        return

    package = writer.package
    index = len(writer._writers) + len(writer._stats) + len(writer._extra_files) + 1000
    plain = path.suffix.lower() != ".gz"
    if plain and (package_storage.is_shared(path) or _reads_local_in_place(package)):
        writer.add_files([_in_place(path, table_name)])
    elif path.suffix.lower() == ".gz":
        writer.add_files(_rechunk(package, index, path, table_name, chunk_bytes))
    else:
        writer.add_files([_copy_whole(package, index, path, table_name)])


def _reads_local_in_place(package: LoadPackage) -> bool:
    """Whether a plain local JSONL file is read where it lies instead of copied.

    Yes when the package's data stays on this machine (no ``packages.storage_url``: the
    normalize workers, or a local Spark master, see the user's file) unless
    ``extract.copy_inputs`` asks for a copy (an input that may change or vanish before the
    load ends). Copying was most of extract's time: 30 s of a 127 s run at 13.5 GB.
    """
    if package.remote is not None or package.data_root != package.root:
        return False
    return not copy_inputs()


def copy_inputs() -> bool:
    """``extract.copy_inputs`` (default no): copy local JSONL inputs into the package."""
    from loadstone import config

    return config.get_bool("extract.copy_inputs", False)


def _in_place(path: Path, table_name: str) -> ExtractedFile:
    """A JSONL file the normalize step reads where it is (on this machine or the package
    storage).

    Nothing is copied; its size, modification time and a hash of its first and last 64 KiB
    are recorded, and normalize refuses the file if any changed (``LoadPackage.check_inputs``).
    Its line count is only known once normalized.
    """
    stat = path.stat()
    return ExtractedFile(
        path.absolute(),
        table_name,
        source=str(path),
        first_line=1,
        items=None,
        size=stat.st_size,
        mtime=stat.st_mtime,
        etag=head_tail_digest(path),
    )


def _objects(url: str) -> list[str]:
    """The object URLs of a URL, a glob or a folder (each read in place)."""
    try:
        return package_storage.expand_objects(url)
    except package_storage.PackageStorageError as error:
        raise ExtractError(f"{error}; nothing was loaded") from None


def _object_in_place(package: LoadPackage, url: str, table_name: str) -> ExtractedFile:
    """A JSON-lines object on the package storage's object store, read where it is.

    Nothing is copied: the executors read the object; its size and etag are recorded and
    normalize refuses it, naming it, if either changed (``LoadPackage.check_inputs``).
    """
    remote = package.remote
    if remote is None:
        raise ExtractError(
            f"cannot read {url}: an object-store input is read where it is, by the executors, "
            f"so {package_storage.STORAGE_URL_KEY} must name that object store "
            "(with its credentials under [packages.credentials])"
        )
    if not url.lower().endswith(package_storage.IN_PLACE_SUFFIXES):
        raise ExtractError(
            f"cannot read {url} where it is: only JSON lines "
            f"({', '.join(package_storage.IN_PLACE_SUFFIXES)}) are read in place from an "
            "object store"
        )
    name = remote.name_of(url)
    try:
        size, etag = remote.fingerprint(name)
    except FileNotFoundError:
        raise ExtractError(f"input {url} does not exist") from None
    except Exception as exc:
        raise ExtractError(remote.storage_error("read", name, exc)) from exc
    return ExtractedFile(name, table_name, source=url, size=size, etag=etag or "")


def _count_lines(path: Path, into: list[int]) -> None:
    """Count the newlines of ``path`` (run beside the copy: it reads from the page cache)."""
    buffer = bytearray(COPY_BLOCK)
    lines = 0
    with open(path, "rb", buffering=0) as handle:
        while True:
            read = handle.readinto(buffer)
            if not read:
                break
            lines += buffer.count(b"\n", 0, read)
    into.append(lines)


def _copy_whole(package: LoadPackage, index: int, path: Path, table_name: str) -> ExtractedFile:
    """Copy a plain JSONL file into the package as one file, made durable before use.

    The bytes move in the kernel (``copyfile`` uses ``sendfile``/``copy_file_range``) while
    a thread counts the lines for the extract figures. A last line without a newline gets
    one, so the file ends on a record boundary like every extracted file.
    """
    target = package.extracted_dir / f"f{index:04d}.00000.jsonl"
    counted: list[int] = []
    counter = threading.Thread(target=_count_lines, args=(path, counted), daemon=True)
    counter.start()
    shutil.copyfile(path, target)
    counter.join()
    size = target.stat().st_size
    lines = counted[0] if counted else 0
    with open(target, "r+b") as handle:
        if size:
            handle.seek(size - 1)
            if handle.read(1) != b"\n":
                handle.write(b"\n")
                size += 1
                lines += 1
        handle.flush()
        os.fsync(handle.fileno())
    return ExtractedFile(target, table_name, source=str(path), first_line=1, items=lines, size=size)


def _rechunk(
    package: LoadPackage, index: int, path: Path, table_name: str, chunk_bytes: int
) -> list[ExtractedFile]:
    """Decompress a gzipped JSONL file into whole-line chunks, each knowing its first line."""
    files: list[ExtractedFile] = []
    line_no = 1
    chunk = 0
    carry = b""
    with _open_binary(path) as handle:
        while True:
            block = handle.read(chunk_bytes)
            if not block:
                break
            data = carry + block
            cut = data.rfind(b"\n")
            if cut < 0:
                carry = data
                continue
            body, carry = data[: cut + 1], data[cut + 1 :]
            files.append(_write_chunk(package, index, chunk, body, table_name, path, line_no))
            line_no += body.count(b"\n")
            chunk += 1
    if carry.strip():
        files.append(_write_chunk(package, index, chunk, carry + b"\n", table_name, path, line_no))
    return files


def _write_chunk(
    package: LoadPackage,
    index: int,
    chunk: int,
    body: bytes,
    table_name: str,
    source: Path,
    first_line: int,
) -> ExtractedFile:
    target = package.extracted_dir / f"f{index:04d}.{chunk:05d}.jsonl"
    with open(target, "wb") as handle:
        handle.write(body)
        handle.flush()
        os.fsync(handle.fileno())
    return ExtractedFile(
        target,
        table_name,
        source=str(source),
        first_line=first_line,
        items=body.count(b"\n"),
        size=len(body),
    )


# --------------------------------------------------------------------------------------
# Spark DataFrames
# --------------------------------------------------------------------------------------
def is_spark_dataframe(value: Any) -> bool:
    cls = type(value)
    return cls.__module__.startswith("pyspark.") and cls.__name__ == "DataFrame"


def _finite_only(df: Any) -> Any:
    """``df`` with NaN and infinities as null, at every depth (structs, arrays, maps).

    Python objects store them as null (as dlt 1.31 does), and a file holding them is not
    valid JSON; Spark's JSON writer would write them as the strings "NaN"/"Infinity".
    """
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    def finite(column: Any, data_type: Any) -> Any:
        if isinstance(data_type, (T.DoubleType, T.FloatType)):
            bad = F.isnan(column) | column.isin(float("inf"), float("-inf"))
            return F.when(bad, F.lit(None)).otherwise(column)
        if isinstance(data_type, T.StructType):
            fields = [finite(column[f.name], f.dataType).alias(f.name) for f in data_type.fields]
            return F.when(column.isNull(), F.lit(None)).otherwise(F.struct(*fields))
        if isinstance(data_type, T.ArrayType):
            return F.transform(column, lambda x: finite(x, data_type.elementType))
        if isinstance(data_type, T.MapType):
            return F.transform_values(column, lambda _k, v: finite(v, data_type.valueType))
        return column

    def has_floats(data_type: Any) -> bool:
        return any(isinstance(t, (T.DoubleType, T.FloatType)) for t in _types_in(data_type))

    fields = df.schema.fields
    if not any(has_floats(f.dataType) for f in fields):
        return df
    return df.select(
        *[
            finite(F.col(f"`{f.name}`"), f.dataType).alias(f.name)
            if has_floats(f.dataType)
            else F.col(f"`{f.name}`")
            for f in fields
        ]
    )


def _types_in(data_type: Any) -> list[Any]:
    """``data_type`` and every type nested in it."""
    from pyspark.sql import types as T

    found = [data_type]
    if isinstance(data_type, T.StructType):
        for field in data_type.fields:
            found += _types_in(field.dataType)
    elif isinstance(data_type, T.ArrayType):
        found += _types_in(data_type.elementType)
    elif isinstance(data_type, T.MapType):
        found += _types_in(data_type.valueType)
    return found


def extract_dataframe(writer: PackageWriter, df: Any, table_name: str) -> None:
    """Write a Spark DataFrame as JSON lines into the package with Spark (no collect).

    The executors write the files into the package's data folder, so on a cluster that
    folder must be storage they share with the driver (``packages.storage_url``). The rows
    read are counted and checked against the lines the driver then sees in the files: a
    non-empty DataFrame whose files the driver cannot see (each executor wrote to its own
    disk) is an error naming the folder, never an empty load.
    """
    package = writer.package
    index = len(writer._writers) + len(writer._stats) + 2000
    target = package.extracted_dir / f"spark{index:04d}"
    if target.exists():
        shutil.rmtree(target)
    expected = int(df.count())
    remote = package.remote
    if remote is not None:
        files = _dataframe_to_store(df, remote, target, table_name)
        written = sum(f.items or 0 for f in files)
        if written != expected:
            raise ExtractError(
                f"the DataFrame for table {table_name!r} has {expected} rows but {written} "
                f"reached {remote.where(target)}"
            )
        writer.add_files(files)
        return
    (
        _finite_only(df)
        .write.mode("overwrite")
        .option("timestampFormat", SPARK_TIMESTAMP_FORMAT)
        .option("ignoreNullFields", "false")
        .json(str(target))
    )
    parts = sorted(target.glob("part-*")) if target.is_dir() else []
    files = []
    for part in parts:
        if part.name.endswith(".crc") or part.stat().st_size == 0:
            continue
        lines: list[int] = []
        _count_lines(part, lines)
        files.append(
            ExtractedFile(part, table_name, source=None, items=lines[0], size=part.stat().st_size)
        )
    written = sum(f.items or 0 for f in files)
    if written != expected:
        raise ExtractError(
            f"the DataFrame for table {table_name!r} has {expected} rows but {written} reached "
            f"{target} as the driver sees it: on a cluster, packages.storage_url must be "
            "storage the driver and every executor share"
        )
    writer.add_files(files)


#: the timestamp text Spark writes (ISO 8601 with microseconds and offset)
SPARK_TIMESTAMP_FORMAT = "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX"


def _dataframe_to_store(df: Any, remote: Any, target: Path, table_name: str) -> list[ExtractedFile]:
    """A DataFrame as JSON lines on the object store holding the package, written by the
    executors (``mapInArrow``: no Hadoop connector needed), one object per partition.

    Attempt-safe: each task attempt names its own object and reports it; Spark returns the
    report of one successful attempt per partition, and every other object is deleted. The
    objects are the package's extracted files, so an interrupted run resumes from them.
    """
    from pyspark.sql import functions as F

    options = {"timestampFormat": SPARK_TIMESTAMP_FORMAT, "ignoreNullFields": "false"}
    lines = _finite_only(df).select(F.to_json(F.struct("*"), options).alias("line"))
    run = uuid.uuid4().hex[:8]
    reports = lines.mapInArrow(
        _partition_writer(remote, str(target), run), "path string, items long, size long"
    )
    try:
        rows = reports.collect()
    except Exception as exc:
        last = [line for line in str(exc).splitlines() if line.strip()][-1:] or [repr(exc)]
        raise ExtractError(
            f"writing the DataFrame for table {table_name!r} to {remote.where(target)} "
            f"failed: {last[0].strip()}"
        ) from exc
    kept = {row["path"] for row in rows if row["items"]}
    remote.remove([p for p in remote.list_files(target) if p not in kept])
    return [
        ExtractedFile(Path(row["path"]), table_name, items=int(row["items"]), size=int(row["size"]))
        for row in sorted(rows, key=lambda r: r["path"])
        if row["items"]
    ]


def _partition_writer(remote: Any, target: str, run: str) -> Callable[[Iterator[Any]], Any]:
    """The task function of :func:`_dataframe_to_store`: lines in, one report row out."""

    def write(batches: Iterator[Any]) -> Iterator[Any]:
        import tempfile

        import pyarrow as pa
        from pyspark import TaskContext

        context = TaskContext.get()
        part, attempt = (context.partitionId(), context.taskAttemptId()) if context else (0, 0)
        path = os.path.join(target, f"part-{part:05d}-{run}-t{attempt}.jsonl")
        items = 0
        with tempfile.NamedTemporaryFile(prefix="loadstone-part-", suffix=".jsonl") as handle:
            for batch in batches:
                values = batch.column(0).to_pylist()
                if values:
                    handle.write(("\n".join(values) + "\n").encode("utf-8"))
                    items += len(values)
            handle.flush()
            size = handle.tell()
            if items:
                remote.upload(handle.name, path)
        yield pa.RecordBatch.from_pydict(
            {"path": [path], "items": [items], "size": [size]},
            schema=pa.schema([("path", pa.string()), ("items", pa.int64()), ("size", pa.int64())]),
        )

    return write


# --------------------------------------------------------------------------------------
# the extract step
# --------------------------------------------------------------------------------------
def _resolve_table(table_name: Any, item: Any) -> str:
    if callable(table_name):
        return str(table_name(item))
    return str(table_name)


def extract_resource(
    writer: PackageWriter, res: Resource, run_hints: Mapping[str, Any], table_name: str | None
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
        _extract_tabular(writer, Path(data), target, str(tabular_kind(data)))
        return
    if is_file_input(data) and isinstance(target, str):
        writer.add_hints(target, hints)
        if isinstance(data, str) and package_storage.is_remote_url(data):
            writer.add_files(
                [_object_in_place(writer.package, url, target) for url in _objects(data)]
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
    hints: dict[str, Any],
    target: Any,
    run_hints: Mapping[str, Any],
) -> None:
    """The pages a resource yields, item by item, into the tables they name."""
    from loadstone import current

    filled: set[str] = set()
    with current.resource_context(res.name), _user_errors(res.name):
        for page in res.pages():
            page_target: Any = target
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
        writer._writer(target)  # a table with no items still gets hints, and no file


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
    meta: Any,
    target: Any,
    hints: dict[str, Any],
    run_hints: Mapping[str, Any],
) -> tuple[Any, dict[str, Any]]:
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
        writer._writer(target)
    return target, hints


def _items(page: Any) -> Iterable[Any]:
    if page is None:
        return ()
    if isinstance(page, list):
        return [item for item in page if item is not None]
    return (page,)


def as_resources(data: Any, table_name: str | None) -> tuple[str | None, list[Resource]]:
    """Any accepted input -> (source name or None, resources to extract)."""
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
        raise ExtractError(
            f"cannot load {data!r}: a str is read as a file only when it ends with "
            f"{', '.join(JSON_SUFFIXES)} (optionally .gz), .parquet, .csv or .csv.gz"
        )
    found: str | None = table_name or getattr(data, "__name__", None)
    if not found or found == "<lambda>":
        raise ExtractError(
            "cannot tell which table the data goes to: pass table_name= to run/extract "
            "(or use a @resource)"
        )
    if callable(data) and not isinstance(data, Iterable):
        return None, [Resource(data, found)]
    return None, [Resource(data, found, args_bound=True)]


def _is_file_name(value: Any) -> bool:
    """A Path, or an object-store URL of a JSON file (read where it is)."""
    if isinstance(value, Path):
        return True
    if not isinstance(value, str) or not package_storage.is_remote_url(value):
        return False
    return is_json_path(value) or package_storage.is_object_pattern(value)


def input_files_of(data: Any) -> list[Path | str]:
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
    data: Any,
    *,
    table_name: str | None = None,
    hints: TableHints | None = None,
    progress: ProgressCallback | None = None,
) -> ExtractResult:
    """Write ``data`` into ``package`` (in state ``extracting``); the caller switches state.

    ``hints`` are the ``run``/``extract`` hints: they apply to every table of the run, over
    each resource's own.
    """
    source_name, resources = as_resources(data, table_name)
    if table_name is not None and len(resources) > 1:
        # one table name for several resources: dlt sends them all into that table
        pass
    writer = PackageWriter(package, progress)
    run_hints = hints.stored() if hints is not None else {}
    for res in resources:
        extract_resource(writer, res, run_hints, table_name)
    tables = writer.close()
    return ExtractResult(package, tables, source_name)
