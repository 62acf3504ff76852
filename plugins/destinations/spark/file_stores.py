"""The six file operations a table's files need, on classic Spark and over Spark Connect.

``table_files.py`` makes a package visible by renaming files in a table's folder; it names
files and folders by the URI Spark reports (``file:/...``, ``hdfs://...``, ``s3a://...``) and
asks one of two stores to act on them:

* :class:`HadoopStore` (a classic session): Hadoop's FileSystem API through the session's JVM,
  so every filesystem Hadoop knows, with the credentials the session was configured with.
* :class:`FsspecStore` (a Spark Connect session, which has no JVM in this process): fsspec in
  this process, on the same storage the server writes to. This process must therefore reach
  the tables' folders: the same machine or a shared mount for a local warehouse, an object
  store with ``[destination.spark.credentials]`` (dlt's keys, as the filesystem
  destination's) for ``s3a://`` / ``s3://``. A folder it cannot see stops the load before
  anything moves.

The protocol of moves is the same on both, so a load is exactly once on both.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Protocol

from loadstone.exceptions import DestinationError
from loadstone.spark_session import is_remote_session
from loadstone.storage.filesystem import (
    configured_credentials,
    is_local,
    open_filesystem,
    split_url,
)

if TYPE_CHECKING:
    import fsspec
    from py4j.java_gateway import JavaObject  # type: ignore[import-untyped]  # py4j ships no types
    from pyspark.sql import SparkSession


class FileStore(Protocol):
    """File operations on URIs as Spark spells them."""

    def names(self, folder: str) -> list[str]:
        """Names of the files (not folders) directly in ``folder``; none if it is absent."""

    def move(self, source: str, target: str) -> None:
        """Rename a file (``target`` does not exist yet); raises if it did not move."""

    def make_folder(self, folder: str) -> None:
        """Create ``folder`` and its parents (nothing if it exists)."""

    def delete(self, path: str) -> None:
        """Delete a file, or a folder with everything in it (nothing if absent)."""

    def drop_if_empty(self, folder: str) -> None:
        """Delete ``folder`` if it exists and holds nothing (a folder a concurrent load just
        filled is kept)."""

    def write(self, path: str, data: bytes) -> None:
        """Write a (small) file, its folders made as needed: a system table's row, made in
        this process, costs a file write instead of a Spark job."""


def open_store(session: SparkSession, location: str) -> FileStore:
    """The store for a table at ``location``, by the kind of session (module docstring)."""
    if is_remote_session(session):
        return FsspecStore.open(location)
    return HadoopStore.open(session, location)


class HadoopStore:
    """Hadoop's FileSystem of one table's folder, reached through the session's JVM."""

    def __init__(self, path_class: JavaObject, fs: JavaObject) -> None:
        #: Hadoop's ``Path`` class, looked up once: each step of ``jvm.org.apache...`` is a
        #: round trip to the JVM
        self._path_class = path_class
        self._fs = fs

    @classmethod
    def open(cls, session: SparkSession, location: str) -> HadoopStore:
        jvm = session.sparkContext._jvm
        if jvm is None:  # a stopped session: no JVM to reach
            raise DestinationError(f"the Spark session has no JVM to move files in {location}")
        path_class = jvm.org.apache.hadoop.fs.Path
        configuration = session.sparkContext._jsc.hadoopConfiguration()
        return cls(path_class, path_class(location).getFileSystem(configuration))

    def _path(self, uri: str) -> JavaObject:
        return self._path_class(uri)

    def names(self, folder: str) -> list[str]:
        path = self._path(folder)
        if not self._fs.exists(path):
            return []
        return sorted(
            str(status.getPath().getName())
            for status in self._fs.listStatus(path)
            if status.isFile()
        )

    def move(self, source: str, target: str) -> None:
        if not self._fs.rename(self._path(source), self._path(target)):
            raise OSError(f"could not move {source} to {target}")

    def make_folder(self, folder: str) -> None:
        self._fs.mkdirs(self._path(folder))

    def delete(self, path: str) -> None:
        self._fs.delete(self._path(path), True)

    def drop_if_empty(self, folder: str) -> None:
        path = self._path(folder)
        if self._fs.exists(path) and not list(self._fs.listStatus(path)):
            self._fs.delete(path, False)

    def write(self, path: str, data: bytes) -> None:
        stream = self._fs.create(self._path(path), True)  # parents are made by Hadoop
        try:
            stream.write(bytearray(data))
        finally:
            stream.close()


def _fs_url(uri: str) -> str:
    """What :func:`open_filesystem` reads: Spark's ``file:/a/b`` is the local path ``/a/b``."""
    if uri.startswith("file:") and not uri.startswith("file://"):
        return uri[len("file:") :]
    return uri


class FsspecStore:
    """An fsspec filesystem of one table's folder, in this process (module docstring)."""

    def __init__(self, fs: fsspec.AbstractFileSystem, local: bool) -> None:
        self._fs = fs
        #: Hadoop's local filesystem keeps a ``.<name>.crc`` beside each file it wrote
        self._local = local

    @classmethod
    def open(cls, location: str) -> FsspecStore:
        credentials = configured_credentials(("destination", "spark"))
        fs, path = open_filesystem(_fs_url(location), credentials)
        local = is_local(_fs_url(location))
        # an object store has no empty folders: only a local one is known to be missing
        if local and not fs.exists(path):
            raise DestinationError(
                f"the table folder {location} (where the Spark Connect server keeps the table) "
                "is not reachable from this process: over Spark Connect the destination moves "
                "the table's files itself, so the tables must be on storage both sides see "
                "(a shared mount, or an object store)"
            )
        return cls(fs, local)

    def _path(self, uri: str) -> str:
        """The path in the filesystem; an object store's listings are read anew (the server
        wrote files since, and a stale listing would publish none of them)."""
        if self._local:
            return split_url(_fs_url(uri))[1]
        self._fs.invalidate_cache()
        return uri

    def _checksum(self, path: str) -> str:
        folder, name = posixpath.split(path)
        return posixpath.join(folder, f".{name}.crc")

    def names(self, folder: str) -> list[str]:
        path = self._path(folder)
        if not self._fs.exists(path):
            return []
        found = self._fs.ls(path, detail=True)
        return sorted(
            posixpath.basename(e["name"].rstrip("/")) for e in found if e["type"] == "file"
        )

    def move(self, source: str, target: str) -> None:
        source_path, target_path = self._path(source), self._path(target)
        self._fs.mv(source_path, target_path)
        if self._local and self._fs.exists(self._checksum(source_path)):
            self._fs.mv(self._checksum(source_path), self._checksum(target_path))

    def make_folder(self, folder: str) -> None:
        self._fs.makedirs(self._path(folder), exist_ok=True)

    def delete(self, path: str) -> None:
        target = self._path(path)
        if self._fs.exists(target):
            self._fs.rm(target, recursive=True)
        if self._local and self._fs.exists(self._checksum(target)):
            self._fs.rm(self._checksum(target))

    def drop_if_empty(self, folder: str) -> None:
        path = self._path(folder)
        if self._local and self._fs.exists(path) and not self._fs.ls(path):
            try:
                self._fs.rmdir(path)
            except OSError:  # a concurrent load put its folder there meanwhile: keep it
                pass

    def write(self, path: str, data: bytes) -> None:
        target = self._path(path)
        if self._local:
            self._fs.makedirs(posixpath.dirname(target), exist_ok=True)
        self._fs.pipe_file(target, data)
