"""The ``_dlt_*`` columns the engine adds to every row, and the row keys it computes.

A root row's key is random unless the table needs a deterministic one: a digest of the
primary key (upsert, insert-only) or of the whole item (scd2's version hash). A nested row's
key is a digest of its parent's key, its table and its list index, as dlt computes it.
"""

from __future__ import annotations

import base64
import hashlib
import os
from typing import TYPE_CHECKING

from loadstone.plugins.normalizers.relational.type_rules import json_text, sorted_json_text
from loadstone.typing import TDataItem

if TYPE_CHECKING:
    from loadstone.plugins.normalizers.relational.task import RootSpec

LOAD_ID = "_dlt_load_id"
ROW_ID = "_dlt_id"
PARENT_ID = "_dlt_parent_id"
LIST_IDX = "_dlt_list_idx"
ROOT_ID = "_dlt_root_id"
VALID_FROM = "_dlt_valid_from"


def new_random_id() -> str:
    return base64.b64encode(os.urandom(10)).decode("ascii")[:-2]


def digest_id(text: str) -> str:
    """base64 (no '=') of a 10-byte SHAKE-128 digest: dlt's deterministic row keys."""
    return base64.b64encode(hashlib.shake_128(text.encode("utf-8")).digest(10)).decode("ascii")[:-2]


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
