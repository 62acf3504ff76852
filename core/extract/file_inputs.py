"""File inputs of ``run``/``extract``: JSON/JSONL (plain or gzipped), Parquet and CSV files,
and JSON-lines objects on an object store.

A plain JSONL file is read where it lies (on this machine, or the package storage) or copied
whole by the kernel (the normalizer splits it into byte ranges itself; re-chunking it here
cost 5x a copy); a gzipped one is decompressed into whole-line chunks, since a gzip stream
cannot be split; a JSON document (an array) is parsed and written as items. Parquet is copied
and CSV read into Arrow (:mod:`loadstone.extract.tabular_files`).
"""

from __future__ import annotations

import gzip
import io
import os
import shutil
import threading
import zlib
from pathlib import Path

import orjson

from loadstone.exceptions import ExtractError
from loadstone.extract.arrow_items import PARQUET_SUFFIX
from loadstone.extract.tabular_files import (
    TabularFileError,
    copy_parquet,
    read_csv_batches,
    tabular_kind,
)
from loadstone.extract.writers import CHUNK_BYTES, PackageWriter
from loadstone.storage import package_storage
from loadstone.storage.content_check import head_tail_digest
from loadstone.storage.load_package import ExtractedFile, LoadPackage
from loadstone.typing import TDataItem

#: Read size of the line count that runs beside a whole-file copy.
COPY_BLOCK = 8 * 1024 * 1024

#: File suffixes read as JSON input by ``run`` (gzipped variants too).
JSON_SUFFIXES = (".jsonl", ".json", ".ndjson")


#: The UTF-8 byte order mark; accepted in front of every JSON input.
BOM = b"\xef\xbb\xbf"


def is_json_path(value: TDataItem) -> bool:
    """A str/Path naming a JSON or JSONL file (maybe .gz) -- read as a file input."""
    if isinstance(value, Path):
        return True
    if isinstance(value, str) and "\n" not in value:
        lowered = value.lower()
        if lowered.endswith(".gz"):
            lowered = lowered[:-3]
        return lowered.endswith(JSON_SUFFIXES)
    return False


def is_file_input(value: TDataItem) -> bool:
    """A str/Path naming a file ``run`` reads: JSON/JSONL, Parquet or CSV (maybe .gz), or
    objects of an object store by glob or folder URL (read in place)."""
    if isinstance(value, str) and package_storage.is_object_pattern(value):
        return True
    return tabular_kind(value) is not None or is_json_path(value)


def extract_tabular(writer: PackageWriter, path: Path, table_name: str, kind: str) -> None:
    """A Parquet or CSV file into the package's Arrow files (see ``tabular_files``)."""
    if not path.is_file():
        raise ExtractError(f"input file {path} does not exist")
    try:
        if kind == "parquet":
            index = writer.copies_index(4000)
            target = writer.package.extracted_dir / f"p{index:04d}.00000{PARQUET_SUFFIX}"
            writer.add_files([copy_parquet(path, target, table_name)])
        else:
            read_csv_batches(path, lambda table: _write_arrow_rows(writer, table_name, table))
    except TabularFileError as error:
        raise ExtractError(f"{error}; nothing was loaded") from None


def _write_arrow_rows(writer: PackageWriter, table_name: str, table: TDataItem) -> int:
    writer.write_arrow(table_name, table)
    return int(table.num_rows)


def _open_binary(path: Path) -> io.BufferedIOBase:
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


def _first_lines(handle: io.BufferedIOBase, count: int) -> list[bytes]:
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
    index = writer.file_index(1000)
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


def objects_of(url: str) -> list[str]:
    """The object URLs of a URL, a glob or a folder (each read in place)."""
    try:
        return package_storage.expand_objects(url)
    except package_storage.PackageStorageError as error:
        raise ExtractError(f"{error}; nothing was loaded") from None


def object_in_place(package: LoadPackage, url: str, table_name: str) -> ExtractedFile:
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


def count_lines(path: Path, into: list[int]) -> None:
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
    counter = threading.Thread(target=count_lines, args=(path, counted), daemon=True)
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
