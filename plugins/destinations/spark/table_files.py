"""The files of one catalog table, and the moves that make a package's rows appear once.

A table of the Spark destination is a folder of Parquet files (a ``USING parquet`` table of
the catalog); readers list the folder when they read it, skipping names that start with ``_``
or ``.``. A package therefore becomes visible by *renames*, never by rewriting:

1. its rows are written by Spark into ``<table>/_loadstone_staging/<load_id>/`` (hidden;
   the one-row files of the system tables are written there by this process, no Spark job);
2. ``replace`` moves the table's current files into ``<table>/_loadstone_replaced/<load_id>/``
   (hidden, kept until the package is recorded, so a failure can put them back);
3. each staged file is renamed into the table as ``ls-<load_id>-<name>``;
4. after the ``_dlt_loads`` row (itself one renamed file) the set-aside files are deleted.

Every file a package adds carries its load id in its name, so :meth:`TableFolder.undo` can
take back an attempt that failed or was killed at any point (delete its files, move set-aside
files back, drop the staging folder) and a rerun loads the package exactly once. Files are
moved through the session's JVM (Hadoop's FileSystem API) on classic Spark and with fsspec in
this process over Spark Connect (``file_stores.py``); the moves are the same on both.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import attrs

from loadstone.plugins.destinations.spark.file_stores import FileStore, open_store

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
    """The folder of one table (its URI as Spark reports it) and the store that moves files."""

    location: str
    store: FileStore

    @classmethod
    def open(cls, session: SparkSession, location: str) -> TableFolder:
        return cls(location, open_store(session, location))

    def _child(self, *names: str) -> str:
        return "/".join([self.location.rstrip("/"), *names])

    def staging(self, load_id: str) -> str:
        """Where Spark writes the package's rows of this table (hidden from readers)."""
        return self._child(STAGING, load_id)

    def data_files(self) -> list[str]:
        """Names of the files readers see."""
        return [n for n in self.store.names(self.location) if not _hidden(n)]

    def stage_file(self, load_id: str, name: str, data: bytes) -> None:
        """A file made in this process (a system table's row) into the package's staging."""
        self.store.write(self._child(STAGING, load_id, name), data)

    def add_file(self, data: bytes) -> None:
        """A file outside any package (a ``_dlt_version`` row): written out of sight, then
        renamed in, so that a reader never lists a half-written file."""
        name = f"ls-add-{uuid.uuid4().hex}.parquet"
        hidden = self._child(STAGING, name)
        self.store.write(hidden, data)
        self.store.move(hidden, self._child(name))
        self.store.drop_if_empty(self._child(STAGING))

    def set_aside(self, load_id: str) -> None:
        """``replace``: move every visible file out of sight, keeping it until the commit."""
        self.store.make_folder(self._child(REPLACED, load_id))
        for name in self.data_files():
            self.store.move(self._child(name), self._child(REPLACED, load_id, name))

    def publish(self, load_id: str) -> int:
        """Rename the staged files into the table; returns how many there were."""
        staged = self._child(STAGING, load_id)
        names = [n for n in self.store.names(staged) if not _hidden(n)]
        for name in names:
            self.store.move(
                self._child(STAGING, load_id, name), self._child(load_prefix(load_id) + name)
            )
        self.store.delete(staged)
        self.store.drop_if_empty(self._child(STAGING))
        return len(names)

    def undo(self, load_id: str) -> bool:
        """Take back every trace of an attempt to load ``load_id`` (idempotent); True when
        readers' files changed (so that sessions which listed them list them again)."""
        prefix = load_prefix(load_id)
        added = [name for name in self.data_files() if name.startswith(prefix)]
        for name in added:
            self.store.delete(self._child(name))
        aside = self._child(REPLACED, load_id)
        set_aside = self.store.names(aside)
        for name in set_aside:
            self.store.move(self._child(REPLACED, load_id, name), self._child(name))
        self.store.delete(aside)
        self.store.delete(self._child(STAGING, load_id))
        self.store.drop_if_empty(self._child(REPLACED))
        self.store.drop_if_empty(self._child(STAGING))
        return bool(added or set_aside)

    def forget_replaced(self, load_id: str) -> None:
        """After the commit: the files a ``replace`` set aside are gone for good."""
        self.store.delete(self._child(REPLACED, load_id))
        self.store.drop_if_empty(self._child(REPLACED))
