"""Folder names for normalized tables that every file system accepts.

A table identifier may hold any Unicode (``duck_case``, ``direct``), path separators or names
that differ only in case; the folder name must not. Plain ASCII identifiers keep their name
(readable packages); anything else gets a sanitized prefix plus a hash of the identifier, so
two tables never share a folder, even on case-insensitive file systems.
"""

from __future__ import annotations

import hashlib
import re

_PLAIN = re.compile(r"[a-z0-9_]{1,100}")
_UNSAFE = re.compile(r"[^A-Za-z0-9_]+")


def safe_folder(table_name: str) -> str:
    """A file-system-safe, collision-free folder name for ``table_name``."""
    if _PLAIN.fullmatch(table_name) and table_name not in (".", ".."):
        return table_name
    digest = hashlib.sha1(table_name.encode("utf-8")).hexdigest()[:12]
    prefix = _UNSAFE.sub("_", table_name)[:60].lower()
    return f"{prefix}-{digest}"
