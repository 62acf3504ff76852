"""Schema versions: a content hash, a counter, and the hashes that came before.

Why: a destination must know whether it already holds the tables a schema describes (it
stores every ``version_hash`` it migrated to), and a hand-edited schema file must be noticed
so the edit becomes a new version instead of being silently overwritten.

* ``version_hash`` is a content hash of the stored dict **without** ``version``,
  ``version_hash``, ``previous_hashes`` and ``imported_version_hash``. Dict key order is
  ignored (keys are sorted), but the order of columns inside a table counts (it is the
  column order at the destination): columns are hashed as a list.
  Encoding: base64 of SHA3-256 over compact, key-sorted JSON (44 characters, the same shape
  as dlt's hashes). dlt 1.31 shows the same *behaviour* (key order ignored, column order
  noticed, table order ignored) but its exact bytes could not be reproduced from the outside;
  so a schema file made by dlt loads here as a modified file (its version goes up by one and
  dlt's hash becomes the newest ``previous_hashes`` entry), exactly what dlt itself does with a
  file loadstone wrote.
* ``version`` grows by one with each saved change (:func:`bump_version`).
* ``previous_hashes`` keeps the last :data:`MAX_PREVIOUS_HASHES` hashes, newest first
  (dlt keeps 10).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Final

from loadstone.digests import digest256

__all__ = [
    "ENGINE_VERSION",
    "HASH_EXCLUDED_KEYS",
    "MAX_PREVIOUS_HASHES",
    "bump_version",
    "content_hash",
]

#: the stored-schema format version loadstone reads and writes (dlt's current one).
ENGINE_VERSION: Final = 11
MAX_PREVIOUS_HASHES: Final = 10
HASH_EXCLUDED_KEYS: Final = frozenset(
    {"version", "version_hash", "previous_hashes", "imported_version_hash"}
)


def _hashable_table(table: Mapping[str, object]) -> dict[str, object]:
    """A table without its ``name``, with columns as a list (their order counts)."""
    hashed = {k: v for k, v in table.items() if k != "name"}
    columns = hashed.get("columns") or {}
    if isinstance(columns, Mapping):
        hashed["columns"] = [
            {"name": name, **{k: v for k, v in dict(col or {}).items() if k != "name"}}
            for name, col in columns.items()
        ]
    return hashed


def _hashable_form(stored: Mapping[str, object]) -> dict[str, object]:
    content = {k: v for k, v in stored.items() if k not in HASH_EXCLUDED_KEYS}
    tables = content.get("tables")
    if isinstance(tables, Mapping):
        content["tables"] = {
            name: _hashable_table(table) if isinstance(table, Mapping) else table
            for name, table in tables.items()
        }
    return content


def content_hash(stored: Mapping[str, object]) -> str:
    """The version hash of a stored schema dict (see module docs for what it covers)."""
    payload = json.dumps(
        _hashable_form(stored),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        default=str,
    )
    return digest256(payload)


def bump_version(
    version: int, previous_hash: str | None, new_hash: str, previous_hashes: Sequence[str]
) -> tuple[int, list[str]]:
    """The next ``(version, previous_hashes)`` after a change from ``previous_hash``.

    Nothing changes when the hash is the same; otherwise the version grows by one and the
    former hash goes first in the bounded history, unless the history holds it already (a
    schema back at an earlier content): then it keeps its place, as in dlt 1.31.
    """
    if previous_hash == new_hash:
        return version, list(previous_hashes)
    history = list(previous_hashes)
    if previous_hash is not None and previous_hash not in history:
        history = [previous_hash, *history]
    return version + 1, history[:MAX_PREVIOUS_HASHES]
