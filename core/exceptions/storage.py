"""Errors of the working folder, load packages and package storage."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from loadstone.exceptions.base import LoadstoneError

if TYPE_CHECKING:
    pass


class FilesystemError(LoadstoneError):
    """A URL names a filesystem that cannot be opened (unknown protocol, missing package)."""


class StorageError(LoadstoneError):
    """A file of the pipeline's working folder cannot be written (disk full, permissions)."""


class CorruptFileError(LoadstoneError):
    """A file loadstone reads back is missing a part or is not what it should hold."""

    def __init__(self, path: Path, cause: str, repair: str) -> None:
        self.path = Path(path)
        super().__init__(f"{path} is damaged ({cause}); {repair}")


class LoadPackageError(LoadstoneError):
    """A package folder is missing, corrupt or in an unexpected state."""


class PackageIntegrityError(LoadPackageError):
    """An extracted file is not what ``package.json`` recorded when extract wrote it."""


class DamagedCopyError(LoadPackageError):
    """A line of a package's extracted copy differs from the same line of its intact source."""


class PackageStorageError(LoadstoneError):
    """``packages.storage_url`` names storage loadstone cannot use or reach."""


class PipelineLockedError(LoadstoneError):
    """Another process runs the pipeline and did not finish within the lock timeout."""
