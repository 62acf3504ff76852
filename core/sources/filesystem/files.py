"""The files of a folder or bucket as dlt's *file items*: one dict per file, opened on demand.

dlt's ``filesystem`` resource yields a dict per file with these keys (observed in dlt 1.31)::

    file_name          "b.csv"
    relative_path      "sub/b.csv"            (relative to bucket_url)
    file_url           "file:///data/sub/b.csv" or "s3://bucket/data/sub/b.csv"
    mime_type          "text/csv"; "application/<ext>" when unknown; "application/octet-stream"
    modification_date  datetime in UTC
    size_in_bytes      int
    encoding           "gzip" (only when the name says so, ``x.csv.gz``)
    file_content       bytes (only with extract_content=True)

:class:`FileItemDict` is that dict plus the filesystem it came from, so a reader calls
``item.open()`` (gzip decompressed by default) or ``item.read_bytes()``. The filesystem is an
attribute, never a key: credentials do not travel with the data.
"""

from __future__ import annotations

import datetime as _dt
import gzip
import mimetypes
import posixpath
import urllib.parse
from collections.abc import Iterator, Mapping
from typing import IO, TYPE_CHECKING, Any, Literal, TypedDict

from loadstone.exceptions import FileReadError
from loadstone.storage.filesystem import split_url
from loadstone.typing import TDataItem

if TYPE_CHECKING:
    import fsspec

#: the mime type of a file whose extension says nothing
OCTET_STREAM = "application/octet-stream"


class _FileItemKeys(TypedDict):
    file_url: str
    file_name: str
    relative_path: str
    mime_type: str
    modification_date: _dt.datetime


class FileItem(_FileItemKeys, total=False):
    """One file as dlt's ``filesystem`` resource yields it (see the module docstring)."""

    encoding: str
    size_in_bytes: int
    file_content: bytes


def guess_mime_type(file_name: str) -> tuple[str, str | None]:
    """(mime type, encoding) as dlt reports them: Python's table, else ``application/<ext>``."""
    mime, encoding = mimetypes.guess_type(file_name, strict=False)
    if mime is None:
        _, ext = posixpath.splitext(file_name)
        mime = f"application/{ext[1:]}" if ext else OCTET_STREAM
    return mime, encoding


class FileItemDict(dict[str, TDataItem]):
    """A :class:`FileItem` that can open its file (``open``, ``read_bytes``, ``fsspec``); a
    dict the user reads and adds to, as dlt's (``item["file_content"] = ...``)."""

    def __init__(
        self, mapping: Mapping[str, object], fsspec: fsspec.AbstractFileSystem | None = None
    ) -> None:
        super().__init__(mapping)
        self._fs = fsspec

    @property
    def fsspec(self) -> fsspec.AbstractFileSystem:
        """The filesystem holding the file (the local one when the item came without)."""
        if self._fs is None:
            from fsspec.implementations.local import LocalFileSystem

            self._fs = LocalFileSystem()
        return self._fs

    @property
    def local_file_path(self) -> str | None:
        """The file's path on this machine's disk, or None for an object in a bucket."""
        protocol, path = split_url(self["file_url"])
        return urllib.parse.unquote(path) if protocol == "file" else None

    def _path(self) -> str:
        protocol, path = split_url(self["file_url"])
        return urllib.parse.unquote(path) if protocol == "file" else path

    def open(
        self,
        mode: str = "rb",
        compression: Literal["auto", "disable", "enable"] = "auto",
        **kwargs: Any,
    ) -> IO[Any]:
        """The file, opened; gzip is decompressed when the name says gzip (``auto``),
        always (``enable``) or never (``disable``), as dlt's ``FileItemDict.open``."""
        if compression not in ("auto", "disable", "enable"):
            raise ValueError(f"compression must be auto, disable or enable, got {compression!r}")
        gzipped = compression == "enable" or (
            compression == "auto" and self.get("encoding") == "gzip"
        )
        try:
            if not gzipped:
                return self.fsspec.open(self._path(), mode, **kwargs)  # type: ignore[no-any-return,unused-ignore]  # fsspec is untyped
            raw = self.fsspec.open(self._path(), "rb")
            text_mode = "b" not in mode
            return gzip.open(raw, "rt" if text_mode else "rb", **kwargs)  # type: ignore[return-value,unused-ignore]  # gzip.open's overloads
        except OSError as error:
            raise FileReadError(self["file_url"], error) from None

    def read_bytes(self) -> bytes:
        """The file's bytes as stored (never decompressed)."""
        try:
            return bytes(self.fsspec.cat_file(self._path()))
        except OSError as error:
            raise FileReadError(self["file_url"], error) from None


def _modification_date(info: Mapping[str, object]) -> _dt.datetime:
    """The file's modification time in UTC, from what fsspec's ``info`` reports."""
    for key in ("mtime", "LastModified", "last_modified", "created"):
        value = info.get(key)
        if value is None:
            continue
        if isinstance(value, _dt.datetime):
            return value.astimezone(_dt.timezone.utc)
        if isinstance(value, (int, float)):
            return _dt.datetime.fromtimestamp(value, tz=_dt.timezone.utc)
        return _dt.datetime.fromisoformat(str(value)).astimezone(_dt.timezone.utc)
    return _dt.datetime.fromtimestamp(0, tz=_dt.timezone.utc)


def file_url(protocol: str, path: str) -> str:
    """``file:///abs/path`` for a local file, percent-encoded as dlt 1.31's
    (``file:///data/s%20p/a%40b.csv``; ``local_file_path`` decodes it),
    ``<protocol>://bucket/key`` otherwise."""
    if protocol == "file":
        return "file://" + urllib.parse.quote(path)
    return f"{protocol}://{path}"


def _listed(
    fs: fsspec.AbstractFileSystem, protocol: str, pattern: str
) -> list[tuple[str, dict[str, Any]]]:
    """The paths ``pattern`` matches with their fsspec details, in dlt 1.31's order.

    On this machine's disk dlt lists as Python's ``glob.glob(recursive=True)`` does (seen
    path for path): in the folder's own order (``os.listdir``), for ``**/*.csv`` a folder's
    files before its subfolders', and never a hidden file or folder (``.DS_Store``,
    ``.git/``). The order matters: the first file read types a column the files disagree on
    (``3`` in one, ``1.5`` in another). In a bucket: fsspec's glob, sorted.
    """
    if protocol != "file":
        found = fs.glob(pattern, detail=True)
        return [(path, found[path]) for path in sorted(found)]
    import glob
    import os

    paths = [p for p in glob.glob(pattern, recursive=True) if os.path.isfile(p)]
    return [(path, fs.info(path)) for path in paths]


def glob_files(
    fs: fsspec.AbstractFileSystem, bucket_url: str, file_glob: str = "*"
) -> Iterator[FileItem]:
    """The files under ``bucket_url`` whose relative path matches ``file_glob``, in the
    order dlt 1.31 lists them (see :func:`_listed`).

    ``*`` matches in the folder itself, ``**/*`` in every subfolder (fsspec's glob rules,
    as dlt). Folders are never items.
    """
    protocol, root = split_url(bucket_url)
    root = root.rstrip("/")
    pattern = posixpath.join(root, file_glob.lstrip("/")) if file_glob else root
    for path, info in _listed(fs, protocol, pattern):
        if info.get("type") == "directory":
            continue
        path = path if protocol != "file" else "/" + path.lstrip("/")
        relative = posixpath.relpath(path, root) if path != root else posixpath.basename(path)
        name = posixpath.basename(path)
        mime, encoding = guess_mime_type(name)
        item: FileItem = {
            "file_name": name,
            "relative_path": relative,
            "file_url": file_url(protocol, path),
            "mime_type": mime,
            "modification_date": _modification_date(info),
            "size_in_bytes": int(info.get("size") or 0),
        }
        if encoding is not None:
            item["encoding"] = encoding
        yield item
