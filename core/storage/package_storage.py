"""Where load packages keep their data files: ``packages.storage_url``.

A package's metadata (``package.json``, hints, schema) always stays in the pipeline's
working folder, where its state switches are atomic renames (object stores have none). Its
*data* files (extracted input, normalized Parquet, quarantined lines) go to
``packages.storage_url`` when set (env ``PACKAGES__STORAGE_URL``), so that Spark tasks on
other machines read their input and write their output there. Default: inside the package
folder, as on one machine.

Two kinds of storage:

* a local path or ``file://`` URL: a mount every executor shares at the same path (NFS, a
  cluster file system). Data files are plain files under ``<storage>/<pipeline>/<load_id>/``.
  A JSONL input that already lies under it is read there by the executors, not copied.
* an object store (``s3://bucket/prefix``, or any protocol fsspec knows), reached through
  :mod:`loadstone.storage.filesystem` with dlt's credential keys under
  ``[packages.credentials]`` (env ``PACKAGES__CREDENTIALS__ENDPOINT_URL`` ...). The package's
  data files keep their local *names* (``<package>/extracted/f.jsonl``) and live at the same
  relative path under ``<storage_url>/<pipeline>/<load_id>/``: :class:`RemoteData` maps one to
  the other, so code that names files by path needs no second vocabulary. A file is written
  locally and uploaded whole; a loader gets local copies for the time of the load
  (:meth:`RemoteData.local_copies`).
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING
from urllib.parse import unquote, urlparse

import attrs

from loadstone import config
from loadstone.exceptions import PackageStorageError
from loadstone.storage import filesystem

if TYPE_CHECKING:
    import fsspec

#: The setting naming the storage.
STORAGE_URL_KEY = "packages.storage_url"
#: The section whose ``credentials`` reach an object store (dlt's keys).
CREDENTIALS_SECTION = ("packages",)


def _configured_url() -> str | None:
    url = config.resolve(STORAGE_URL_KEY, default=None)
    return str(url) if url else None


def is_remote_url(url: str) -> bool:
    """True for an object store URL (anything but a path or ``file://``)."""
    return not filesystem.is_local(url)


def storage_root(url: str) -> Path:
    """The local folder of a storage URL (a path or ``file://``)."""
    parsed = urlparse(url)
    if parsed.scheme in ("", "file"):
        path = Path(unquote(parsed.path) if parsed.scheme else url).expanduser()
        if not path.is_absolute():
            path = path.absolute()
        return path
    raise PackageStorageError(f"{STORAGE_URL_KEY} = {url!r} is not a local path or file:// URL")


def is_shared(path: Path) -> bool:
    """Whether an input file already lies on a mounted package storage (read there)."""
    url = _configured_url()
    if not url or is_remote_url(url):
        return False
    return Path(path).absolute().is_relative_to(storage_root(url))


def data_dir(pipeline_name: str) -> Path | None:
    """The mounted folder for ``pipeline_name``'s package data, or None (default or remote)."""
    url = _configured_url()
    if not url or is_remote_url(url):
        return None
    root = storage_root(url)
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PackageStorageError(f"{STORAGE_URL_KEY} = {url!r} cannot be created: {exc}") from None
    return root / pipeline_name


def data_url(pipeline_name: str) -> str | None:
    """The object store URL for ``pipeline_name``'s package data, or None (not remote)."""
    url = _configured_url()
    if not url or not is_remote_url(url):
        return None
    return filesystem.join_url(url, pipeline_name)


def object_fingerprint(pipeline_name: str, url: str) -> tuple[int, str | None]:
    """Size and etag of an input object read where it is (``url`` on the package storage)."""
    store = data_url(pipeline_name)
    if store is None:
        raise PackageStorageError(f"{url} is not on a package storage ({STORAGE_URL_KEY})")
    remote = RemoteData.for_package(Path("/"), store)
    return remote.fingerprint(remote.name_of(url))


#: objects a glob or folder URL picks to be read in place (JSON lines, gzipped too)
IN_PLACE_SUFFIXES = (".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz")
_GLOB_CHARS = ("*", "?", "[")


def is_object_pattern(url: str) -> bool:
    """An object-store URL naming many objects: a glob (``s3://b/e/2024-*/*.jsonl.gz``) or a
    folder (``s3://b/events/``)."""
    if not isinstance(url, str) or not is_remote_url(url):
        return False
    path = filesystem.split_url(url)[1]
    return url.endswith("/") or any(char in path for char in _GLOB_CHARS)


def expand_objects(url: str) -> list[str]:
    """The JSON-lines object URLs a glob or folder URL names, sorted; another URL as is.

    Listed with the package storage's credentials (``[packages.credentials]``): objects read
    in place are read by the executors with those. No match is an error naming the URL.
    """
    if not is_object_pattern(url):
        return [url]
    protocol, path = filesystem.split_url(url)
    fs = filesystem.open_filesystem(url, configured_credentials().as_dict())[0]
    fs.invalidate_cache()
    try:
        keys = fs.glob(path) if any(c in path for c in _GLOB_CHARS) else fs.find(path)
    except Exception as exc:
        raise PackageStorageError(f"listing {url} failed: {exc}") from exc
    found = sorted(f"{protocol}://{key}" for key in keys if key.lower().endswith(IN_PLACE_SUFFIXES))
    if not found:
        raise PackageStorageError(
            f"{url} names no JSON-lines objects ({', '.join(IN_PLACE_SUFFIXES)})"
        )
    return found


def configured_credentials() -> filesystem.FilesystemCredentials:
    """dlt's credential keys under ``[packages.credentials]`` (env ``PACKAGES__CREDENTIALS__*``)."""
    return filesystem.configured_credentials(CREDENTIALS_SECTION)


_OPEN: dict[tuple[int, str, tuple[tuple[str, str], ...]], fsspec.AbstractFileSystem] = {}


@attrs.frozen(eq=False)
class RemoteData:
    """One package's data files on an object store, named by their local paths.

    ``local_root`` is the package's data folder on the driver (``<package>/``); the file
    ``<local_root>/normalized/t/1.parquet`` is the object ``<url>/normalized/t/1.parquet``.
    Picklable (it travels to Spark tasks inside the engine's configuration); the
    filesystem is opened once per process.
    """

    local_root: str
    url: str
    credentials: Mapping[str, str] = attrs.field(factory=dict, repr=False)

    @classmethod
    def for_package(cls, local_root: Path, url: str) -> RemoteData:
        return cls(str(local_root), url, configured_credentials().as_dict())

    # -- names --------------------------------------------------------------------------
    def url_of(self, path: str | os.PathLike[str]) -> str:
        """The object URL of a local data file name.

        An input read where it is (``s3://bucket/in/e.jsonl``) is named
        ``<local_root>/s3:/bucket/in/e.jsonl`` (:meth:`name_of`).
        """
        relative = Path(os.path.relpath(os.fspath(path), self.local_root)).as_posix()
        if relative.startswith(".."):
            raise PackageStorageError(f"{path} is not a data file of the package {self.local_root}")
        first, _, rest = relative.partition("/")
        if first.endswith(":"):
            return f"{first}//{rest}"
        return self.url if relative == "." else filesystem.join_url(self.url, relative)

    def name_of(self, url: str) -> Path:
        """The local name of an object outside the package (an input read where it is)."""
        protocol, path = filesystem.split_url(url)
        if protocol != filesystem.split_url(self.url)[0]:
            raise PackageStorageError(
                f"{url} is not on the package storage's filesystem ({self.url}): "
                f"{STORAGE_URL_KEY} and the input must use the same protocol"
            )
        return Path(self.local_root) / f"{protocol}:" / path

    def fingerprint(self, path: str | os.PathLike[str]) -> tuple[int, str | None]:
        """Size and etag (or modification time) of an object, to tell if it changed."""
        info = self._fs().info(self._key(path))
        tag = info.get("ETag") or info.get("etag") or info.get("LastModified") or info.get("mtime")
        return int(info["size"]), None if tag is None else str(tag)

    def _fs(self) -> fsspec.AbstractFileSystem:
        """The filesystem, without remembered listings: executors write objects this
        process has not seen, so a cached listing would hide them (or show deleted ones)."""
        # per process: a forked worker must not share the parent's connections
        key = (os.getpid(), self.url, tuple(sorted(self.credentials.items())))
        if key not in _OPEN:
            _OPEN[key] = filesystem.open_filesystem(self.url, self.credentials)[0]
        fs = _OPEN[key]
        fs.invalidate_cache()
        return fs

    def _key(self, path: str | os.PathLike[str]) -> str:
        return filesystem.split_url(self.url_of(path))[1]

    @property
    def endpoint(self) -> str:
        return self.credentials.get("endpoint_url") or filesystem.split_url(self.url)[0]

    def where(self, path: str | os.PathLike[str]) -> str:
        """The object URL and the endpoint, for messages."""
        return f"{self.url_of(path)} (endpoint {self.endpoint})"

    # -- reading ------------------------------------------------------------------------
    def open_read(self, path: str | os.PathLike[str]) -> IO[bytes]:
        """The object for reading; any failure is an OSError naming object and endpoint."""
        fs = self._fs()
        try:
            handle: IO[bytes] = fs.open(self._key(path), "rb")
        except OSError:
            raise
        except Exception as exc:  # botocore / aiohttp: still storage, not data
            raise OSError(self.storage_error("read", path, exc)) from exc
        return handle

    def size(self, path: str | os.PathLike[str]) -> int:
        """The object's size; FileNotFoundError when it is not there."""
        fs = self._fs()
        return int(fs.info(self._key(path))["size"])

    def list_files(self, folder: str | os.PathLike[str]) -> list[str]:
        """Local names of every object under ``folder`` (none when it does not exist)."""
        try:
            found = self._fs().find(self._key(folder))
        except FileNotFoundError:
            return []
        except Exception as exc:
            raise PackageStorageError(self.storage_error("list", folder, exc)) from exc
        base = filesystem.split_url(self.url)[1]
        return [os.path.join(self.local_root, key[len(base) :].lstrip("/")) for key in found]

    # -- writing ------------------------------------------------------------------------
    def upload(self, local_file: str | os.PathLike[str], as_path: str | os.PathLike[str]) -> None:
        """Put a local file at the object named by ``as_path`` (whole or not at all)."""
        try:
            filesystem.put_file_atomic(self._fs(), os.fspath(local_file), self._key(as_path))
        except Exception as exc:
            raise PackageStorageError(self.storage_error("write", as_path, exc)) from exc

    def publish_tree(self, folder: str | os.PathLike[str]) -> list[str]:
        """Upload every local file under ``folder`` to its object, then delete it here."""
        published = []
        for root, _, names in os.walk(os.fspath(folder)):
            for name in sorted(names):
                path = os.path.join(root, name)
                self.upload(path, path)
                published.append(path)
        for path in published:
            os.unlink(path)
        return published

    def remove(self, paths: Sequence[str]) -> None:
        if not paths:
            return
        try:
            self._fs().rm([self._key(p) for p in paths])
        except Exception as exc:
            raise PackageStorageError(self.storage_error("delete", paths[0], exc)) from exc

    def remove_tree(self, folder: str | os.PathLike[str]) -> None:
        """Delete every object under ``folder`` (nothing when there is none)."""
        self.remove(self.list_files(folder))

    @contextlib.contextmanager
    def local_copies(self, paths: Sequence[str | os.PathLike[str]]) -> Iterator[None]:
        """The objects downloaded to their local names for the block (a loader reads them)."""
        fs = self._fs()
        fetched: list[str] = []
        try:
            for path in paths:
                target = os.fspath(path)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                fs.get_file(self._key(path), target)
                fetched.append(target)
            yield
        finally:
            for target in fetched:
                with contextlib.suppress(OSError):
                    os.unlink(target)

    def storage_error(self, action: str, path: str | os.PathLike[str], exc: BaseException) -> str:
        """One line for a storage failure: host, object, endpoint and the cause."""
        return (
            f"package storage on {socket.gethostname()} cannot {action} {self.where(path)}: "
            f"{type(exc).__name__}: {exc}".rstrip()
        )
