"""The ``_dlt_*`` columns the engine adds to every row, and the row keys it computes.

A root row's key is random unless the table needs a deterministic one: a digest of the
primary key (upsert, insert-only) or of the whole item (scd2's version hash). A nested row's
key is a digest of its parent's key, its table and its list index, as dlt computes it.
"""

from __future__ import annotations

import os
from binascii import a2b_base64, b2a_base64
from hashlib import shake_128
from typing import Protocol

from loadstone.plugins.normalizers.relational.type_rules import json_text, sorted_json_text
from loadstone.typing import TDataItem


class RootSpec(Protocol):
    """What a root row's key reads of its table's spec
    (:class:`~loadstone.plugins.normalizers.relational.task.RootSpec` is the one): named by
    protocol, as the task module imports this one."""

    @property
    def primary_key(self) -> tuple[str, ...]: ...

    @property
    def row_hash(self) -> bool: ...


LOAD_ID = "_dlt_load_id"
ROW_ID = "_dlt_id"
PARENT_ID = "_dlt_parent_id"
LIST_IDX = "_dlt_list_idx"
ROOT_ID = "_dlt_root_id"
VALID_FROM = "_dlt_valid_from"


class _RandomBytes:
    """``os.urandom`` drawn in blocks: one system call per 4,096 root keys instead of one per
    row (2% of a chunk's CPU on GitHub events). A forked process starts with an empty block,
    so no two workers ever hand out the same bytes."""

    BLOCK = 10 * 4096

    def __init__(self) -> None:
        self.block = b""
        self.at = 0
        os.register_at_fork(after_in_child=self.forget)

    def forget(self) -> None:
        self.block, self.at = b"", 0

    def take(self, count: int) -> bytes:
        if self.at + count > len(self.block):
            self.block, self.at = os.urandom(max(self.BLOCK, count)), 0
        at = self.at
        self.at = at + count
        return self.block[at : at + count]


_random = _RandomBytes()


def _key(ten: bytes) -> str:
    """A row key of 10 bytes as dlt writes it: base64 without its padding."""
    return b2a_base64(ten, newline=False)[:-2].decode()


def new_random_id() -> str:
    """dlt's random row key: 10 random bytes."""
    return _key(_random.take(10))


def give_back(keys: list[str]) -> None:
    """Root keys drawn and never written go back to the source, to be drawn again in order
    (a chunk the native core hands back gets the keys the Python engine would have got).
    Keys :func:`new_random_id` did not make (a replaced function) are not given back."""
    try:
        unused = b"".join(a2b_base64(key + "==") for key in keys)
    except (ValueError, TypeError):
        return
    if unused:
        _random.block, _random.at = unused + _random.block[_random.at :], 0


def random_ids(count: int) -> list[str]:
    """``count`` random row keys (an Arrow table's ``_dlt_id`` column)."""
    block = _random.take(10 * count)
    return [_key(block[i : i + 10]) for i in range(0, 10 * count, 10)]


def digest_id(text: str) -> str:
    """dlt's deterministic row key: a 10-byte SHAKE-128 digest of ``text``."""
    return _key(shake_128(text.encode()).digest(10))


def root_row_id(item: dict[str, TDataItem], row: dict[str, TDataItem], spec: RootSpec) -> str:
    """The key of a root row that brings no ``_dlt_id`` of its own."""
    if spec.primary_key:
        key = {k: row.get(k) for k in spec.primary_key}
        return digest_id(json_text(dict(sorted(key.items()))))
    if spec.row_hash:
        # scd2: a version hash of the whole source item (nested data included)
        content = {k: v for k, v in item.items() if not k.startswith("_dlt")}
        return digest_id(sorted_json_text(content))
    return new_random_id()
