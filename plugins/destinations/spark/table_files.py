"""The files of one catalog table, and the moves that make a package's rows appear once.

A table of the Spark destination is a folder of Parquet files (a ``USING parquet`` table of
the catalog); readers list the folder when they read it, skipping names that start with ``_``
or ``.``. A package therefore becomes visible by *renames*, never by rewriting:

1. its rows are written by Spark into ``<table>/_loadstone_staging/<load_id>/`` (hidden);
2. ``replace`` moves the table's current files into ``<table>/_loadstone_replaced/<load_id>/``
   (hidden, kept until the package is recorded, so a failure can put them back);
3. each staged file is renamed into the table as ``ls-<load_id>-<name>``;
4. after the ``_dlt_loads`` row (itself one renamed file) the set-aside files are deleted.

Every file a package adds carries its load id in its name, so :meth:`TableFolder.undo` can
take back an attempt that failed or was killed at any point (delete its files, move set-aside
files back, drop the staging folder) and a rerun loads the package exactly once. Files are
moved with Hadoop's FileSystem API through the session's JVM, so the same moves work on local
disks, HDFS and object stores Hadoop knows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

STAGING = "_loadstone_staging"
REPLACED = "_loadstone_replaced"


def load_prefix(load_id: str) -> str:
    """The name prefix of the files package ``load_id`` adds to a table."""
    return f"ls-{load_id}-"


def _hidden(name: str) -> bool:
    return name.startswith(("_", "."))


@attrs.frozen
class TableFolder:
    """The folder of one table, with Hadoop FileSystem handles (JVM objects)."""

    location: str
    fs: Any
    path: Any
    jvm: Any

    @classmethod
    def open(cls, session: SparkSession, location: str) -> TableFolder:
        jvm = session.sparkContext._jvm
        if jvm is None:  # a stopped session (or Spark Connect): no JVM to reach
            raise RuntimeError(f"the Spark session has no JVM to move files in {location}")
        path = jvm.org.apache.hadoop.fs.Path(location)
        fs = path.getFileSystem(session.sparkContext._jsc.hadoopConfiguration())
        return cls(location, fs, path, jvm)

    def _child(self, *names: str) -> Any:
        path = self.path
        for name in names:
            path = self.jvm.org.apache.hadoop.fs.Path(path, name)
        return path

    def _names(self, folder: Any) -> list[str]:
        if not self.fs.exists(folder):
            return []
        return sorted(
            str(status.getPath().getName())
            for status in self.fs.listStatus(folder)
            if status.isFile()
        )

    def staging(self, load_id: str) -> str:
        """Where Spark writes the package's rows of this table (hidden from readers)."""
        return str(self._child(STAGING, load_id).toString())

    def data_files(self) -> list[str]:
        """Names of the files readers see."""
        return [n for n in self._names(self.path) if not _hidden(n)]

    def _move(self, source: Any, target: Any) -> None:
        if not self.fs.rename(source, target):
            raise OSError(f"could not move {source.toString()} to {target.toString()}")

    def set_aside(self, load_id: str) -> None:
        """``replace``: move every visible file out of sight, keeping it until the commit."""
        aside = self._child(REPLACED, load_id)
        self.fs.mkdirs(aside)
        for name in self.data_files():
            self._move(self._child(name), self._child(REPLACED, load_id, name))

    def publish(self, load_id: str) -> int:
        """Rename the staged files into the table; returns how many there were."""
        staged = self._child(STAGING, load_id)
        names = [n for n in self._names(staged) if not _hidden(n)]
        for name in names:
            self._move(
                self._child(STAGING, load_id, name), self._child(load_prefix(load_id) + name)
            )
        self.fs.delete(staged, True)
        self._drop_if_empty(self._child(STAGING))
        return len(names)

    def _drop_if_empty(self, folder: Any) -> None:
        """Leave no empty hidden folder behind once the last load using it is done."""
        if self.fs.exists(folder) and not list(self.fs.listStatus(folder)):
            self.fs.delete(folder, False)

    def undo(self, load_id: str) -> None:
        """Take back every trace of an attempt to load ``load_id`` (idempotent)."""
        prefix = load_prefix(load_id)
        for name in self.data_files():
            if name.startswith(prefix):
                self.fs.delete(self._child(name), False)
        aside = self._child(REPLACED, load_id)
        for name in self._names(aside):
            self._move(self._child(REPLACED, load_id, name), self._child(name))
        self.fs.delete(aside, True)
        self.fs.delete(self._child(STAGING, load_id), True)

    def forget_replaced(self, load_id: str) -> None:
        """After the commit: the files a ``replace`` set aside are gone for good."""
        self.fs.delete(self._child(REPLACED, load_id), True)
        self._drop_if_empty(self._child(REPLACED))
