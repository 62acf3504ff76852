"""The file inputs a pipeline has loaded, so that the same unchanged file is not loaded twice.

``loadstone run events.jsonl`` run again -- by a user retrying a command whose process was
killed in its last instant, after the load had committed -- would load every row a second
time: the package that held the file is no longer pending, so nothing says the file is in
the destination already (issue 22). The pipeline therefore remembers each loaded input
(path or URL, size, and modification time or etag: an :class:`InputFingerprint`) with the
load id of the package that loaded it and the tables it went to, in
``<working folder>/loaded_inputs.json``.

The record is written after the destination committed the package and *before* the
package's own switch to ``loaded``: a kill before the record leaves the package pending
(its inputs are then found there, and the load sees its ``_dlt_loads`` row), a kill after it
finds the record. Either way a rerun loads nothing twice. A file that changed (other size or
time) is a new input; the latest load of each path is kept. Dropping tables forgets the
inputs that went to them; ``drop`` removes the whole folder.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs

from loadstone.storage.json_files import read_json_object, write_json_atomic
from loadstone.storage.load_package import InputFingerprint, LoadPackage

LOADED_INPUTS_FILE = "loaded_inputs.json"
REPAIR = (
    "delete it: it only lists the files already loaded (the next run of one of them loads it again)"
)


@attrs.frozen
class LoadedInput:
    """One file input as it was when a package loaded it."""

    fingerprint: InputFingerprint
    load_id: str
    tables: tuple[str, ...]


class LoadedInputs:
    """The loaded file inputs of one pipeline (a thin view over its JSON file)."""

    def __init__(self, working_dir: Path) -> None:
        self.path = Path(working_dir) / LOADED_INPUTS_FILE

    def _read(self) -> dict[str, dict[str, Any]]:
        if not self.path.exists():
            return {}
        return dict(read_json_object(self.path, repair=REPAIR).get("inputs") or {})

    def _write(self, records: dict[str, dict[str, Any]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.path, {"inputs": records})

    def find(self, fingerprint: InputFingerprint) -> LoadedInput | None:
        """The load of exactly this input (same path, size and version), or None."""
        record = self._read().get(fingerprint.path)
        if record is None:
            return None
        found = LoadedInput(
            InputFingerprint(
                fingerprint.path,
                int(record.get("size", -1)),
                int(record.get("mtime_ns", 0)),
                str(record.get("etag", "")),
            ),
            str(record.get("load_id")),
            tuple(record.get("tables") or ()),
        )
        return found if found.fingerprint == fingerprint else None

    def record(self, package: LoadPackage) -> None:
        """Remember the inputs of ``package``, which the destination holds now."""
        inputs = package.inputs()
        if not inputs:
            return
        records = self._read()
        tables = package.extracted_tables()
        for fingerprint in inputs:
            records[fingerprint.path] = {
                **fingerprint.asdict(),
                "load_id": package.load_id,
                "tables": tables,
            }
        self._write(records)

    def forget_tables(self, tables: Iterable[str]) -> None:
        """Forget the inputs loaded into any of ``tables`` (they were dropped or emptied)."""
        dropped = set(tables)
        records = self._read()
        kept = {
            path: record
            for path, record in records.items()
            if not dropped.intersection(record.get("tables") or ())
        }
        if len(kept) != len(records):
            self._write(kept)
