"""``loadstone.common.storages.fsspec_filesystem``: dlt's path of ``FileItemDict`` and
``FileItem``, the files ``filesystem()`` yields (``loadstone.sources.filesystem``'s)."""

from __future__ import annotations

from loadstone.sources.filesystem import FileItem, FileItemDict

__all__ = ["FileItem", "FileItemDict"]
