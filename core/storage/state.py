"""Pipeline state: the small dict that lets a pipeline continue where it stopped.

The state names the pipeline's dataset, destination and schemas and holds the sources'
persistent state (``loadstone.current.source_state()``). It is saved locally
(``<pipelines_dir>/<pipeline>/state.json``) after every step and sent to the destination's
``_dlt_pipeline_state`` with every load, so that a pipeline whose local folder is lost is
restored from its destination on the next run. ``_local`` holds what must never leave the
machine (first run flag, timestamps) and is stripped before the state is sent.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from loadstone.storage.json_files import read_json_object, write_json_atomic
from loadstone.storage.typed_marks import marked, unmarked
from loadstone.typing import TDataItem

if TYPE_CHECKING:
    from loadstone.schema import Schema
    from loadstone.storage.load_package import LoadPackage

STATE_ENGINE_VERSION = 4
#: a pipeline's state: its bookkeeping and the sources' state, which is user data
PipelineState = dict[str, TDataItem]
STATE_FILE = "state.json"


def stored_value(value: TDataItem) -> TDataItem:
    """One value as the stored state holds it: a datetime, date, time, decimal or bytes as
    dlt's marked text (:mod:`loadstone.storage.typed_marks`), anything else as it is."""
    return marked(value)


def live_value(value: TDataItem) -> TDataItem:
    """One value read back from a stored state: dlt's marked text as the value it stands
    for (what ``pipeline.state`` shows, as dlt's does), anything else as it is."""
    return unmarked(value)


def to_stored(state: TDataItem) -> TDataItem:
    """A (nested) state as it is written: typed values marked (:func:`stored_value`)."""
    if isinstance(state, Mapping):
        return {key: to_stored(value) for key, value in state.items()}
    if isinstance(state, (list, tuple)):
        return [to_stored(value) for value in state]
    return stored_value(state)


def to_live(state: TDataItem) -> TDataItem:
    """A (nested) state as it was read: marked values typed again (:func:`live_value`)."""
    if isinstance(state, dict):
        return {key: to_live(value) for key, value in state.items()}
    if isinstance(state, list):
        return [to_live(value) for value in state]
    return live_value(state)


def new_state(pipeline_name: str) -> PipelineState:
    """The state of a pipeline that never ran."""
    return {
        "_state_version": 0,
        "_state_engine_version": STATE_ENGINE_VERSION,
        "pipeline_name": pipeline_name,
        "dataset_name": None,
        "destination_name": None,
        "default_schema_name": None,
        "schema_names": [],
        # no "sources" until a source keeps state, as dlt's (``state.get("sources")`` is None)
        # dlt's local values: ``get_local_state_val("initial_cwd")`` is where it was made
        "_local": {"first_run": True, "initial_cwd": os.path.abspath(os.getcwd())},
    }


def shareable(state: Mapping[str, TDataItem]) -> PipelineState:
    """The state without ``_local`` (what goes to the destination), as it is stored."""
    stored = to_stored({k: v for k, v in state.items() if k != "_local"})
    assert isinstance(stored, dict)
    return stored


def state_hash(state: Mapping[str, TDataItem]) -> str:
    """Content hash of the shareable state, ignoring the version fields."""
    content = {
        k: v for k, v in shareable(state).items() if k not in ("_state_version", "_version_hash")
    }
    digest = hashlib.sha256(json.dumps(content, sort_keys=True, default=str).encode()).digest()
    return base64.b64encode(digest).decode("ascii")


def bump_version(state: PipelineState) -> bool:
    """Increase ``_state_version`` when the content changed; True when it did."""
    new_hash = state_hash(state)
    if state.get("_version_hash") == new_hash:
        return False
    state["_state_version"] = int(state.get("_state_version", 0)) + 1
    state["_version_hash"] = new_hash
    return True


def load_local(working_dir: Path) -> PipelineState | None:
    """The locally saved state, or None when the pipeline folder has none."""
    path = Path(working_dir) / STATE_FILE
    if not path.exists():
        return None
    stored = read_json_object(
        path,
        repair=(
            "delete it: the next run restores the state from the destination (pending "
            "packages carry their own copy)"
        ),
        required=("_state_version",),
    )
    live = to_live(stored)
    assert isinstance(live, dict)
    return live


def save_local(working_dir: Path, state: Mapping[str, TDataItem]) -> None:
    Path(working_dir).mkdir(parents=True, exist_ok=True)
    write_json_atomic(Path(working_dir) / STATE_FILE, to_stored(state))


def merge_restored(local: PipelineState, restored: Mapping[str, TDataItem]) -> PipelineState:
    """Take the destination's state when it is newer than the local one (keeps ``_local``)."""
    if int(restored.get("_state_version", 0)) <= int(local.get("_state_version", 0)):
        return local
    merged = {k: to_live(copy.deepcopy(v)) for k, v in restored.items() if k != "_local"}
    merged["_local"] = dict(local.get("_local", {}))
    return merged


def state_row_count(package: LoadPackage, schema: Schema) -> dict[str, int]:
    """The state row a package carries, counted as dlt counts it (one row, or none)."""
    if not package.meta.get("carries_state", True):
        return {}
    return {schema.state_table_name: 1}
