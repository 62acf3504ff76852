"""The bookkeeping files of a dataset folder, as dlt 1.31 writes them.

* ``init``: the marker of an initialized dataset (``{"initial_version":2,"current_version":2}``).
* ``_dlt_version/<schema>__<unix time>__<hash>.jsonl``: one record per schema version.
* ``_dlt_pipeline_state/<pipeline>__<load_id>__<hash>.jsonl``: the state of a load, written
  only when the state changed since the newest stored one.
* ``_dlt_loads/<schema>__<load_id>.jsonl``: written **last**: a load id without this file is
  not loaded, so readers and state restoring skip what a killed load left behind.

``<hash>`` is a SHA-256 of the schema's version hash (dlt puts a 64-hex-digit hash there too;
its derivation is not observable, so tools match these files by their prefix). Every record
is one JSON line written atomically, and the names of state and load records depend only on
the load id, so a retried load rewrites the same files instead of adding new ones.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import posixpath
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, cast

from loadstone.destinations.contract import (
    PipelineStateRow,
    SchemaVersionRow,
    StateDict,
    decode_state,
    encode_state,
)
from loadstone.storage.filesystem import write_bytes_atomic

if TYPE_CHECKING:
    import fsspec

    from loadstone.schema.stored import TStoredSchema

INIT_FILE = "init"
INIT_CONTENT = b'{"initial_version":2,"current_version":2}'
LOADS = "_dlt_loads"
VERSION = "_dlt_version"
STATE = "_dlt_pipeline_state"


def name_hash(version_hash: str) -> str:
    """The 64-hex-digit part of version and state file names."""
    return hashlib.sha256(version_hash.encode()).hexdigest()


def _now_iso() -> str:
    return _dt.datetime.now(tz=_dt.timezone.utc).isoformat()


def _write_record(fs: fsspec.AbstractFileSystem, path: str, record: Mapping[str, object]) -> None:
    line = json.dumps(record, separators=(",", ":"), default=str) + "\n"
    write_bytes_atomic(fs, path, line.encode())


#: one bookkeeping record: a JSON object of plain values (one line of a ``.jsonl`` file)
Record = dict[str, object]


def _read_record(fs: fsspec.AbstractFileSystem, path: str) -> Record:
    with fs.open(path, "rb") as handle:
        return cast(Record, json.loads(handle.readline()))


def _names(fs: fsspec.AbstractFileSystem, folder: str) -> list[str]:
    """File names in ``folder`` (none when it does not exist), hidden temp files left out."""
    if not fs.exists(folder):
        return []
    return sorted(
        posixpath.basename(p)
        for p in fs.ls(folder, detail=False)
        if not posixpath.basename(p).startswith(".")
    )


class DatasetRecords:
    """Reads and writes the bookkeeping files of one dataset folder."""

    def __init__(self, fs: fsspec.AbstractFileSystem, dataset_path: str) -> None:
        self.fs = fs
        self.root = dataset_path.rstrip("/")

    def folder(self, name: str) -> str:
        return f"{self.root}/{name}"

    # --- init marker -------------------------------------------------------------------

    def is_initialized(self) -> bool:
        return bool(self.fs.exists(self.folder(INIT_FILE)))

    def initialize(self) -> None:
        if not self.is_initialized():
            write_bytes_atomic(self.fs, self.folder(INIT_FILE), INIT_CONTENT)

    # --- loads -------------------------------------------------------------------------

    def completed_loads(self) -> dict[str, str]:
        """``{load_id: schema_name}`` of every load whose ``_dlt_loads`` record exists."""
        loads: dict[str, str] = {}
        for name in _names(self.fs, self.folder(LOADS)):
            stem = name.removesuffix(".jsonl")
            schema_name, _, load_id = stem.rpartition("__")
            loads[load_id] = schema_name
        return loads

    def is_loaded(self, load_id: str) -> bool:
        return load_id in self.completed_loads()

    def write_load(self, load_id: str, schema_name: str, version_hash: str) -> None:
        _write_record(
            self.fs,
            f"{self.folder(LOADS)}/{schema_name}__{load_id}.jsonl",
            {
                "load_id": load_id,
                "schema_name": schema_name,
                "status": 0,
                "inserted_at": _now_iso(),
                "schema_version_hash": version_hash,
            },
        )

    # --- schema versions ---------------------------------------------------------------

    def write_version(self, version: SchemaVersionRow) -> bool:
        """Record a schema version unless one with the same hash is stored; True if written."""
        schema_name = version.schema_name
        suffix = f"__{name_hash(version.version_hash)}.jsonl"
        for name in _names(self.fs, self.folder(VERSION)):
            if name.startswith(f"{schema_name}__") and name.endswith(suffix):
                return False
        path = f"{self.folder(VERSION)}/{schema_name}__{time.time()!r}{suffix}"
        _write_record(
            self.fs,
            path,
            {
                "version_hash": version.version_hash,
                "schema_name": schema_name,
                "version": version.version,
                "engine_version": version.engine_version,
                "inserted_at": _now_iso(),
                "schema": version.schema_json,
            },
        )
        return True

    def newest_schema(self, schema_name: str) -> TStoredSchema | None:
        candidates = []
        for name in _names(self.fs, self.folder(VERSION)):
            prefix, _, rest = name.partition("__")
            if prefix == schema_name and rest:
                candidates.append((float(rest.split("__", 1)[0]), name))
        if not candidates:
            return None
        record = _read_record(self.fs, f"{self.folder(VERSION)}/{max(candidates)[1]}")
        return cast("TStoredSchema", json.loads(str(record["schema"])))

    # --- pipeline state ----------------------------------------------------------------

    def _state_files(self, pipeline_name: str) -> list[tuple[float, str]]:
        """``(load_id, file name)`` of the state records of completed loads, oldest first."""
        completed = self.completed_loads()
        found = []
        for name in _names(self.fs, self.folder(STATE)):
            parts = name.removesuffix(".jsonl").split("__")
            if len(parts) >= 3 and "__".join(parts[:-2]) == pipeline_name:
                if parts[-2] in completed:
                    found.append((float(parts[-2]), name))
        return sorted(found)

    def write_state(self, load_id: str, row: PipelineStateRow, version_hash: str) -> bool:
        """Store the state of ``load_id`` unless the newest stored one has the same state and
        schema version (dlt 1.31 writes a new record when either changed)."""
        newest = self._state_files(row.pipeline_name)
        if newest and row.version_hash:
            name = newest[-1][1]
            last = _read_record(self.fs, f"{self.folder(STATE)}/{name}")
            same_schema = name.endswith(f"__{name_hash(version_hash)}.jsonl")
            if same_schema and last.get("version_hash") == row.version_hash:
                return False
        created = row.created_at or _dt.datetime.now(tz=_dt.timezone.utc)
        _write_record(
            self.fs,
            f"{self.folder(STATE)}/{row.pipeline_name}__{load_id}__{name_hash(version_hash)}.jsonl",
            {
                "version": row.version,
                "engine_version": row.engine_version,
                "pipeline_name": row.pipeline_name,
                "state": encode_state(row.state),
                "created_at": created.isoformat(),
                "version_hash": row.version_hash,
                "_dlt_load_id": load_id,
            },
        )
        return True

    def newest_state(self, pipeline_name: str) -> StateDict | None:
        found = self._state_files(pipeline_name)
        if not found:
            return None
        record = _read_record(self.fs, f"{self.folder(STATE)}/{found[-1][1]}")
        return decode_state(str(record["state"]))

    def system_rows(self, name: str) -> list[Record]:
        """Every record of one bookkeeping folder (for reading back through DuckDB)."""
        return [
            _read_record(self.fs, f"{self.folder(name)}/{n}")
            for n in _names(self.fs, self.folder(name))
        ]
