"""Load packages on disk: the unit of work that survives a crash.

A run turns its input into one package folder ``packages/<load_id>/`` and then moves that
package through ``extracted -> normalized -> loaded``. Every state switch is an atomic
rename of ``package.json``, so a process killed at any moment leaves a package whose state
says exactly which step must be (re)done next: the next run finishes it before doing new
work. Data files of a step are only trusted once the state that follows the step is
written; a half-written ``normalized/`` folder is wiped and redone.

Layout::

    packages/<load_id>/
        package.json      load id, schema name, state, extracted files, normalize result
        table_hints.json  hints from code per source table (columns, keys, disposition ...)
        extracted/        JSONL (or .jsonl.gz, or Spark JSON part files) written by extract
        normalized/       the normalizer's output, one folder per table
        schema.json       the schema this package was normalized with

Long because: one class owns every file of the package folder and its state switches, so
that each atomic rename is written in one place (creation, metadata, inputs, extracted and
normalized files, hints, schema).
"""

from __future__ import annotations

import contextlib
import gzip
import itertools
import shutil
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import attrs

from loadstone.exceptions import (
    CorruptFileError,
    DamagedCopyError,
    LoadPackageError,
    LoadstoneError,
    PackageIntegrityError,
    PackageStorageError,
)
from loadstone.schema import Schema
from loadstone.storage.content_check import head_tail_digest, is_head_tail
from loadstone.storage.json_files import read_json_object, write_json_atomic
from loadstone.storage.package_storage import RemoteData

_T = TypeVar("_T")

__all__ = [
    "EXTRACTED",
    "EXTRACTING",
    "LOADED",
    "NORMALIZED",
    "ExtractedFile",
    "InputFingerprint",
    "LoadPackage",
    "iter_pending",
    "list_packages",
    "new_load_id",
    "write_json_atomic",
]

#: Package being written by extract; incomplete, discarded by the next run.
EXTRACTING = "extracting"
#: All input written to ``extracted/``; normalize is next.
EXTRACTED = "extracted"
#: Normalizer output in ``normalized/`` and ``schema.json``; load is next.
NORMALIZED = "normalized"
#: The destination holds the package (its ``_dlt_loads`` row is written).
LOADED = "loaded"

PENDING_STATES = (EXTRACTED, NORMALIZED)
STATES = (EXTRACTING, EXTRACTED, NORMALIZED, LOADED)

PACKAGE_FILE = "package.json"
HINTS_FILE = "table_hints.json"
SCHEMA_FILE = "schema.json"


def repair_advice(pipeline_hint: str = "P") -> str:
    """What a user does about a package whose own files are damaged."""
    return (
        f"drop the package with `loadstone pipeline {pipeline_hint} drop-pending-packages` "
        "and run the same input again"
    )


@attrs.frozen
class InputFingerprint:
    """One input of a package as it was when extracted: path or URL, size, version.

    A run given the same input again finds it in a package an interrupted run left pending
    and finishes that package instead of extracting the input a second time. A local file's
    version is its modification time; an object's (``s3://...``, read where it is) its etag.
    """

    path: str
    size: int
    mtime_ns: int = 0
    etag: str = ""

    @classmethod
    def of(cls, path: Path) -> InputFingerprint:
        stat = Path(path).stat()
        return cls(str(Path(path).absolute()), stat.st_size, stat.st_mtime_ns)

    @classmethod
    def of_object(cls, url: str, size: int, etag: str | None) -> InputFingerprint:
        return cls(url, size, etag=etag or "")

    def asdict(self) -> dict[str, str | int]:
        return {"path": self.path, "size": self.size, "mtime_ns": self.mtime_ns, "etag": self.etag}


@attrs.frozen
class ExtractedFile:
    """One extracted file and the *source* table its items belong to.

    ``source`` and ``first_line`` say where the lines came from when the file is a chunk of
    a user's file, so that an error about line ``n`` of the chunk can name
    ``source`` line ``first_line + n - 1``.
    """

    path: Path
    table_name: str
    source: str | None = None
    first_line: int = 1
    items: int | None = None
    size: int | None = None
    #: modification time of an input read in place (it must not change before normalize)
    mtime: float | None = None
    #: the etag of an object-store input read in place (the same rule)
    etag: str | None = None


@attrs.frozen
class NormalizedTable:
    """One normalized table of a package as the normalizer reported it."""

    table_name: str
    folder: Path
    row_count: int
    files: tuple[Path, ...] = ()


_last_load_id = 0.0
_load_id_lock = threading.Lock()


def new_load_id() -> str:
    """A load id: Unix time as a decimal string, strictly increasing within the process.

    Two packages made in the same clock tick would share an id (and the destination would
    think the second was already loaded), hence the nudge past the previous id.
    """
    global _last_load_id
    with _load_id_lock:
        now = time.time()
        if now <= _last_load_id:
            now = _last_load_id + 1e-6
        _last_load_id = now
    return repr(now)


class LoadPackage:
    """A package folder: its state, files, hints and schema. Thin state over the disk."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).absolute()
        self._meta: dict[str, Any] | None = None

    # -- creation -------------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        packages_dir: Path,
        schema_name: str,
        load_id: str | None = None,
        data_dir: Path | None = None,
        data_url: str | None = None,
    ) -> LoadPackage:
        """Make a new package in state ``extracting`` under ``packages_dir``.

        ``data_dir`` (from ``packages.storage_url``): the folder under which the package's
        data files go (``<data_dir>/<load_id>/extracted`` ...), e.g. storage every Spark
        executor mounts; metadata stays in ``packages_dir``. ``data_url`` (an object store
        from ``packages.storage_url``): the data files live at ``<data_url>/<load_id>/``
        under the names they have in the package folder (:class:`RemoteData`).
        """
        load_id = load_id or new_load_id()
        root = Path(packages_dir) / load_id
        if root.exists():
            raise LoadPackageError(f"load package {load_id} already exists at {root}")
        data_root = (Path(data_dir).absolute() / load_id) if data_dir is not None else root
        root.mkdir(parents=True)
        if data_root != root and data_root.exists():
            shutil.rmtree(data_root)  # left by a package dropped before its data
        (data_root / "extracted").mkdir(parents=True)
        package = cls(root)
        package._write_meta(
            {
                "load_id": load_id,
                "schema_name": schema_name,
                "data_root": None if data_root == root else str(data_root),
                "data_url": f"{data_url.rstrip('/')}/{load_id}" if data_url else None,
                "state": EXTRACTING,
                "created_at": time.time(),
                "state_changed_at": time.time(),
                "extracted_files": [],
                "normalized_tables": {},
            }
        )
        return package

    # -- metadata -------------------------------------------------------------------------
    @property
    def meta(self) -> dict[str, Any]:
        if self._meta is None:
            self._meta = read_json_object(
                self.root / PACKAGE_FILE,
                repair=repair_advice(self.pipeline_hint),
                required=("load_id", "schema_name", "state"),
            )
        return self._meta

    @property
    def pipeline_hint(self) -> str:
        """The pipeline's name as the folder layout says (``<pipeline>/packages/<id>``)."""
        return self.root.parent.parent.name or "P"

    @property
    def damage(self) -> str | None:
        """Why ``package.json`` cannot be read, or None when it can."""
        try:
            _ = self.meta
        except CorruptFileError as error:
            return str(error)
        return None

    def _write_meta(self, meta: dict[str, Any]) -> None:
        write_json_atomic(self.root / PACKAGE_FILE, meta)
        self._meta = meta

    def update(self, **values: object) -> None:
        """Change metadata fields (not the state) atomically."""
        meta = dict(self.meta)
        meta.update(values)
        self._write_meta(meta)

    @property
    def load_id(self) -> str:
        return str(self.meta["load_id"])

    @property
    def schema_name(self) -> str:
        return str(self.meta["schema_name"])

    @property
    def state(self) -> str:
        return str(self.meta["state"])

    @property
    def is_pending(self) -> bool:
        """Between extract and load; a package whose metadata is damaged counts as pending
        (it is not loaded), so that listing it and dropping it work."""
        if self.damage is not None:
            return True
        return self.state in PENDING_STATES

    # -- inputs ---------------------------------------------------------------------------
    def set_inputs(self, inputs: list[InputFingerprint]) -> None:
        self.update(inputs=[i.asdict() for i in inputs])

    def inputs(self) -> list[InputFingerprint]:
        """The input files this package was extracted from (none for Python data)."""
        return [InputFingerprint(**record) for record in self.meta.get("inputs") or []]

    def set_state(self, state: str, **values: object) -> None:
        """Switch to ``state`` (and store ``values``) in one atomic rename."""
        if state not in STATES:
            raise LoadPackageError(f"unknown package state {state!r}; known: {STATES}")
        meta = dict(self.meta)
        meta.update(values)
        meta["state"] = state
        meta["state_changed_at"] = time.time()
        meta.setdefault("history", []).append([state, time.time()])
        self._write_meta(meta)

    # -- folders --------------------------------------------------------------------------
    @property
    def data_root(self) -> Path:
        """Where the data files live: the package folder, or shared storage for executors."""
        stored = self.meta.get("data_root")
        return Path(stored) if stored else self.root

    @property
    def remote(self) -> RemoteData | None:
        """The object store holding the data files (``packages.storage_url = s3://...``)."""
        url = self.meta.get("data_url")
        return RemoteData.for_package(self.data_root, str(url)) if url else None

    def _storage(self, action: str, path: Path, call: Callable[..., _T], *args: object) -> _T:
        """``call(*args)`` on the remote storage; a failure names the object and endpoint."""
        remote = self.remote
        assert remote is not None
        try:
            return call(*args)
        except LoadstoneError:
            raise
        except Exception as exc:  # botocore, aiohttp and OSError all mean "storage"
            raise PackageStorageError(remote.storage_error(action, path, exc)) from exc

    def publish_extracted(self) -> None:
        """Move the extracted files to the remote storage (before the switch to extracted)."""
        if self.remote is not None:
            self._storage("write", self.extracted_dir, self.remote.publish_tree, self.extracted_dir)

    @contextlib.contextmanager
    def local_copies(self) -> Iterator[None]:
        """The normalized files at their local names for the block (a loader reads them)."""
        remote = self.remote
        if remote is None:
            yield
            return
        files = [f for table in self.normalized_tables().values() for f in table.files]
        with contextlib.ExitStack() as stack:
            self._storage(
                "read", self.normalized_dir, stack.enter_context, remote.local_copies(files)
            )
            yield

    @property
    def extracted_dir(self) -> Path:
        return self.data_root / "extracted"

    @property
    def normalized_dir(self) -> Path:
        return self.data_root / "normalized"

    @property
    def schema_path(self) -> Path:
        return self.root / SCHEMA_FILE

    def reset_normalized(self) -> Path:
        """Remove any half-written normalizer output and return an empty ``normalized/``."""
        if self.normalized_dir.exists():
            shutil.rmtree(self.normalized_dir)
        if self.remote is not None:
            self._storage(
                "clear", self.normalized_dir, self.remote.remove_tree, self.normalized_dir
            )
        self.normalized_dir.mkdir(parents=True)
        return self.normalized_dir

    # -- extracted files ------------------------------------------------------------------
    def add_extracted_files(self, files: list[ExtractedFile]) -> None:
        """Record files written into ``extracted/`` (paths stored relative to the data root).

        A file outside the data root (an input read where it is) keeps its absolute path.
        """
        records = list(self.meta.get("extracted_files", []))
        for file in files:
            path = Path(file.path).absolute()
            if path.is_relative_to(self.data_root):
                stored = path.relative_to(self.data_root).as_posix()
            else:
                stored = str(path)
            records.append(
                {
                    "path": stored,
                    "table_name": file.table_name,
                    "source": file.source,
                    "first_line": file.first_line,
                    "items": file.items,
                    "size": file.size if file.size is not None else _size(path),
                    "mtime": file.mtime,
                    "etag": file.etag,
                }
            )
        self.update(extracted_files=records)

    def extracted_files(self) -> list[ExtractedFile]:
        """The extracted files with the source table name of each (absolute paths)."""
        return [
            ExtractedFile(
                path=self.data_root / record["path"],
                table_name=record["table_name"],
                source=record.get("source"),
                first_line=int(record.get("first_line") or 1),
                items=record.get("items"),
                size=record.get("size"),
                mtime=record.get("mtime"),
                etag=record.get("etag"),
            )
            for record in self.meta.get("extracted_files", [])
        ]

    def check_inputs(self) -> None:
        """Inputs read in place must be as extract saw them (same size and mtime).

        A file changed in between would be normalized with other rows than were extracted
        (and line numbers of errors would lie): refuse it, naming the file.
        """
        remote = self.remote
        for file in self.extracted_files():
            if file.etag is not None and remote is not None and not is_head_tail(file.etag):
                self._check_object(remote, file)
            if file.mtime is None:
                continue
            try:
                stat = Path(file.path).stat()
            except OSError as exc:
                raise LoadPackageError(
                    f"input {file.path} of package {self.load_id} is gone: {exc}"
                ) from None
            changed = stat.st_size != file.size or stat.st_mtime != file.mtime
            if not changed and is_head_tail(file.etag):
                changed = head_tail_digest(file.path) != file.etag
            if changed:
                raise LoadPackageError(
                    f"input {file.path} of package {self.load_id} changed after extract "
                    f"(size {file.size} -> {stat.st_size}, mtime {file.mtime} -> "
                    f"{stat.st_mtime}): restore it, or drop the package "
                    "(loadstone pipeline NAME drop-pending-packages)"
                )

    def _check_object(self, remote: RemoteData, file: ExtractedFile) -> None:
        """An object-store input read in place has the size and etag extract recorded."""
        where = remote.where(file.path)
        try:
            size, etag = self._storage("read", file.path, remote.fingerprint, file.path)
        except PackageStorageError as error:
            if isinstance(error.__cause__, FileNotFoundError):
                raise LoadPackageError(f"input {where} of package {self.load_id} is gone") from None
            raise
        if size != file.size or etag != file.etag:
            raise LoadPackageError(
                f"input {where} of package {self.load_id} changed after extract (size "
                f"{file.size} -> {size}, etag {file.etag} -> {etag}): restore it, or drop the "
                "package (loadstone pipeline NAME drop-pending-packages)"
            )

    def check_copy_line(self, source: str, line: int) -> None:
        """Blame the package's copy, not the user's file, for a bad line it alone holds.

        Normalize reports a bad line by its place in the user's file. When bytes inside the
        package's extracted copy were damaged (its size unchanged), that file is intact, and
        "fix the line" would send the user to look for nothing: compare the two lines and
        raise :class:`DamagedCopyError` naming the copy and the repair when they differ.
        Only a JSONL input still as extract saw it can be compared; otherwise nothing is said.
        """
        found = self._copy_of(source, line)
        original = self._unchanged_input(source)
        if found is None or original is None or not _is_jsonl(original):
            return
        copy, copy_line = found
        if _line(copy, copy_line) == _line(original, line):
            return
        raise DamagedCopyError(
            f"line {copy_line} of extracted file {copy} of package {self.load_id} differs from "
            f"line {line} of its source {original}, which is unchanged: the package's copy is "
            f"damaged, not the input; {repair_advice(self.pipeline_hint)}"
        )

    def _copy_of(self, source: str, line: int) -> tuple[Path, int] | None:
        """The extracted file holding ``source`` line ``line``, and its line number there."""
        for file in self.extracted_files():
            if file.source != source or file.items is None or self.remote is not None:
                continue
            if file.first_line <= line < file.first_line + file.items:
                return file.path, line - file.first_line + 1
        return None

    def _unchanged_input(self, source: str) -> Path | None:
        """The local input ``source`` names, when it is as extract recorded it."""
        for fingerprint in self.inputs():
            path = Path(fingerprint.path)
            if path != Path(source).absolute() and not fingerprint.path.endswith(source):
                continue
            try:
                return path if InputFingerprint.of(path) == fingerprint else None
            except OSError:
                return None
        return None

    def extracted_tables(self) -> list[str]:
        """Source table names in the order they were first extracted."""
        return list(dict.fromkeys(f.table_name for f in self.extracted_files()))

    # -- hints ----------------------------------------------------------------------------
    def write_table_hints(self, hints: Mapping[str, Mapping[str, object]]) -> None:
        write_json_atomic(self.root / HINTS_FILE, {k: dict(v) for k, v in hints.items()})

    def table_hints(self) -> dict[str, dict[str, Any]]:
        """Hints from code per source table (empty when the package has none)."""
        path = self.root / HINTS_FILE
        if not path.exists():
            return {}
        return read_json_object(path, repair=repair_advice(self.pipeline_hint))

    # -- schema ---------------------------------------------------------------------------
    def write_schema(self, schema: Schema) -> None:
        """Keep the package's schema in its stored document (``schema.json``), so a crash
        between steps loses nothing; ``to_dict()`` first records the save (final version)."""
        write_json_atomic(self.schema_path, dict(schema.to_dict()))

    def read_schema(self) -> Schema | None:
        """The schema :meth:`write_schema` kept (None before extract wrote one): the stored
        document is read here, once, so callers only see a ``Schema``."""
        if not self.schema_path.exists():
            return None
        stored = read_json_object(
            self.schema_path, repair=repair_advice(self.pipeline_hint), required=("name",)
        )
        return Schema.from_dict(stored)

    # -- normalized -----------------------------------------------------------------------
    def normalized_tables(self) -> dict[str, NormalizedTable]:
        """The normalize result stored with state ``normalized``: table -> output."""
        out: dict[str, NormalizedTable] = {}
        for name, record in self.meta.get("normalized_tables", {}).items():
            out[name] = NormalizedTable(
                table_name=name,
                folder=self.data_root / record["folder"],
                row_count=int(record["row_count"]),
                files=tuple(self.data_root / f for f in record.get("files", [])),
            )
        return out

    def verify_extracted(self) -> None:
        """Check every extracted file against the size and items recorded at extract.

        A copy cut by a crash or a full disk would otherwise load part of the input silently
        (a cut at a line boundary) or blame a line of the user's intact original (a cut
        mid-line). A cut or a lost file always changes the size, so the size is what is
        compared (counting the lines again would read every byte); the message gives both
        the recorded size and items.
        """
        remote = self.remote
        for file in self.extracted_files():
            where = f"extracted file {file.path} of package {self.root.name}"
            if remote is not None:
                where = f"extracted file {remote.where(file.path)} of package {self.root.name}"
                try:
                    size = self._storage("read", file.path, remote.size, file.path)
                except PackageStorageError as error:
                    if isinstance(error.__cause__, FileNotFoundError):
                        raise PackageIntegrityError(f"{where} is missing") from None
                    raise
            elif not file.path.is_file():
                raise PackageIntegrityError(f"{where} is missing")
            else:
                size = file.path.stat().st_size
            if file.size is not None and size != file.size:
                recorded = f"{file.size} bytes" + (
                    f" ({file.items} items)" if file.items is not None else ""
                )
                raise PackageIntegrityError(
                    f"{where} holds {size} bytes, package.json recorded {recorded}: the copy is "
                    "damaged"
                )

    def normalized_damage(self) -> str | None:
        """Why the normalized files cannot be loaded (missing, cut, other row count), or None.

        Reads each Parquet file's footer only; the package's extracted copy is still there,
        so a damaged output is normalized again rather than loaded in part.
        """
        import pyarrow.parquet as pq

        remote = self.remote
        for name, table in self.normalized_tables().items():
            rows = 0
            for path in table.files:
                try:
                    if remote is None:
                        rows += pq.read_metadata(path).num_rows
                    else:
                        with self._storage("read", path, remote.open_read, path) as handle:
                            rows += pq.read_metadata(handle).num_rows
                except PackageStorageError as error:
                    if remote is None or not isinstance(error.__cause__, FileNotFoundError):
                        raise  # the storage is unreachable: the files may well be fine
                    return f"normalized file {remote.where(path)} of table {name} is missing"
                except (OSError, ValueError) as error:
                    return f"normalized file {path} of table {name} is unreadable: {error}"
            if table.files and rows != table.row_count:
                return f"table {name} has {rows} normalized rows, {table.row_count} recorded"
        return None

    def delete_data(self) -> None:
        """Drop the data files of a loaded package, keeping its metadata for history."""
        for folder in (self.extracted_dir, self.normalized_dir):
            if folder.exists():
                shutil.rmtree(folder, ignore_errors=True)
        if self.data_root != self.root:
            shutil.rmtree(self.data_root, ignore_errors=True)
        if self.remote is not None:  # best effort: what is left there is never read again
            with contextlib.suppress(PackageStorageError):
                self._storage("delete", self.root, self.remote.remove_tree, self.root)

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.root.rglob("*") if p.is_file())

    def __repr__(self) -> str:
        return f"LoadPackage({self.root}, state={self.state})"


def _is_jsonl(path: Path) -> bool:
    name = path.name.lower().removesuffix(".gz")
    return name.endswith((".jsonl", ".ndjson"))


def _line(path: Path, number: int) -> bytes:
    """Line ``number`` (1-based) of a maybe gzipped file, without its end or a BOM."""
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    with opener(path, "rb") as handle:
        found = next(itertools.islice(handle, number - 1, None), b"")
    return bytes(found).removeprefix(b"\xef\xbb\xbf").rstrip(b"\r\n")


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None


def list_packages(packages_dir: Path) -> list[LoadPackage]:
    """All packages under ``packages_dir``, oldest load id first (skips foreign folders)."""
    packages_dir = Path(packages_dir)
    if not packages_dir.is_dir():
        return []
    found: list[LoadPackage] = []
    for child in packages_dir.iterdir():
        if child.is_dir() and (child / PACKAGE_FILE).exists():
            found.append(LoadPackage(child))
    return sorted(found, key=lambda p: _load_id_key(p.root.name))


def iter_pending(packages_dir: Path) -> Iterator[LoadPackage]:
    """Packages that a crash or failure left between extract and load, oldest first."""
    for package in list_packages(packages_dir):
        if package.is_pending:
            yield package


def _load_id_key(load_id: str) -> tuple[float, str]:
    try:
        return (float(load_id), load_id)
    except ValueError:
        return (float("inf"), load_id)
