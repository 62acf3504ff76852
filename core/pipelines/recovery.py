"""Crash recovery: what a run finds in the working folder before it does its own work.

A run killed at any moment leaves packages in one of their states (see
:mod:`loadstone.storage.load_package`); the next run finishes them before it extracts
anything. This module holds those decisions, each a function of the
:class:`~loadstone.runtime.working_folder.WorkingFolder`:

* a package still ``extracting`` never counted: it is deleted;
* a package whose data can never load is set aside in ``failed_packages/`` with its cause;
* an input file a pending package already holds is not extracted again; one loaded unchanged
  before is not loaded again (``reload=True`` does);
* a package the destination already committed is marked loaded, not loaded twice;
* a lost folder takes state and schemas back from the destination.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, cast

from loadstone.exceptions import LoadstoneError
from loadstone.extract.extractor import input_files_of
from loadstone.extract.step import fingerprint
from loadstone.runtime.package_outcome import FAILURE_KEY, complete_package
from loadstone.schema import Schema
from loadstone.storage import state as state_module
from loadstone.storage.load_package import (
    EXTRACTED,
    EXTRACTING,
    NORMALIZED,
    InputFingerprint,
    iter_pending,
    list_packages,
)
from loadstone.storage.loaded_inputs import LoadedInputs
from loadstone.typing import TDataItems

if TYPE_CHECKING:
    from loadstone.destinations.contract import DestinationClient
    from loadstone.runtime.recorder import StepRecorder
    from loadstone.runtime.target import DestinationTarget
    from loadstone.runtime.working_folder import WorkingFolder

#: what a run that found pending packages says (it loads them and returns, as dlt's run)
PENDING_FIRST = (
    "pending load packages were loaded first and the run stopped there, as dlt's run does: "
    "the data given to this run was not extracted; run again to load it"
)


# -- packages that can never load -----------------------------------------------------------
def failed_packages(folder: WorkingFolder) -> list[tuple[str, str]]:
    """(load id, cause) of every package set aside, oldest first."""
    found = []
    for package in list_packages(folder.failed_packages_dir):
        cause = package.damage or str(package.meta.get(FAILURE_KEY) or "unknown cause")
        found.append((package.root.name, cause))
    return found


# -- packages left behind -------------------------------------------------------------------
def drop_incomplete_extracts(folder: WorkingFolder) -> None:
    """A package still ``extracting`` was cut off mid-write: its data never counted."""
    for package in list_packages(folder.packages_dir):
        if package.damage is None and package.state == EXTRACTING:
            package.delete_data()
            shutil.rmtree(package.root, ignore_errors=True)


def mark_damaged_normalized(folder: WorkingFolder, recorder: StepRecorder) -> None:
    """A package whose normalized files are missing or damaged goes back to ``extracted``,
    to be normalized again from its extracted copy (never loaded in part)."""
    for package in iter_pending(folder.packages_dir):
        damage = package.normalized_damage() if package.state == NORMALIZED else None
        if damage is not None:
            recorder.notice("load", f"package {package.load_id}: {damage}; normalizing it again")
            package.set_state(EXTRACTED, normalized_tables={})


def has_normalized(folder: WorkingFolder) -> bool:
    return any(p.state == NORMALIZED for p in iter_pending(folder.packages_dir))


def committed_packages(
    folder: WorkingFolder, target: DestinationTarget, schema: Callable[[], Schema]
) -> list[str]:
    """Load ids of pending packages the destination already committed (read only).

    A run killed between the destination's COMMIT and the package's state switch leaves
    a package that looks pending; its ``_dlt_loads`` row says it is loaded.
    """
    normalized = [
        p for p in iter_pending(folder.packages_dir) if p.damage is None and p.state == NORMALIZED
    ]
    if not normalized or not target.reachable():
        return []
    with target.client(schema()) as client:
        return [p.load_id for p in normalized if client.is_package_loaded(p.load_id)]


def drop_pending_packages(
    folder: WorkingFolder, target: DestinationTarget, schema: Callable[[], Schema]
) -> list[str]:
    """Delete every package that is not loaded, with the changes its extract made to the
    sources' state; one the destination already committed is marked loaded instead; one
    whose own metadata is damaged is dropped all the same."""
    dropped: list[str] = []
    with contextlib.suppress(LoadstoneError, OSError):
        committed = set(committed_packages(folder, target, schema))
        for package in iter_pending(folder.packages_dir):
            if package.load_id in committed:
                complete_package(folder, package, skipped=True, keep=False)
    doomed = [
        p for p in list_packages(folder.packages_dir) if p.is_pending or p.state == EXTRACTING
    ]

    def delete() -> None:
        for package in doomed:
            with contextlib.suppress(LoadstoneError, OSError):
                package.delete_data()  # its metadata may be damaged
            shutil.rmtree(package.root, ignore_errors=True)
            dropped.append(package.root.name)

    # the sources' state their extracts changed goes with them: the next run reads it again
    folder.remove_packages(doomed, delete)
    return dropped


# -- inputs seen before ---------------------------------------------------------------------
def _held_fingerprint(pipeline_name: str, path: Path | str) -> InputFingerprint | None:
    """The fingerprint to look up, or None where the input cannot be read (the extract
    step then says why, naming it)."""
    try:
        return fingerprint(pipeline_name, path)
    except Exception:  # a missing file or unreachable store: reported by the extract
        return None


def _rest(files: list[Path | str], remaining: list[Path | str], data: TDataItems) -> TDataItems:
    """``data`` as the run goes on with it: as given, the remaining files, or None."""
    if len(remaining) == len(files):
        return data
    if not remaining:
        return None
    return remaining if len(remaining) > 1 else remaining[0]


def without_extracted_inputs(
    folder: WorkingFolder, data: TDataItems, recorder: StepRecorder
) -> TDataItems:
    """``data`` without the input files a pending package already holds (None if all)."""
    files = input_files_of(data)
    if not files:
        return data
    held = {
        print_: package.load_id
        for package in iter_pending(folder.packages_dir)
        for print_ in package.inputs()
    }
    remaining: list[Path | str] = []
    for path in files:
        found = _held_fingerprint(folder.pipeline_name, path) if held else None
        load_id = held.get(found) if found is not None else None
        if load_id is None:
            remaining.append(path)
        else:
            recorder.notice(
                "extract",
                f"{path} was extracted into package {load_id} by an interrupted run: "
                "finishing that package instead of extracting it again",
            )
    return _rest(files, remaining, data)


def without_loaded_inputs(
    folder: WorkingFolder, data: TDataItems, recorder: StepRecorder
) -> TDataItems:
    """``data`` without the input files already loaded unchanged (None if all).

    Running the same command again after it finished -- or after a kill in its last
    instant, when the load had committed -- must not load the same rows twice.
    """
    files = input_files_of(data)
    if not files:
        return data
    loaded = LoadedInputs(folder.root)
    remaining: list[Path | str] = []
    skipped: list[str] = []
    for path in files:
        print_ = _held_fingerprint(folder.pipeline_name, path)
        found = loaded.find(print_) if print_ is not None else None
        if found is None:
            remaining.append(path)
        else:
            skipped.append(f"{path} (package {found.load_id})")
    if not skipped:
        return data
    more = f" and {len(skipped) - 1} more" if len(skipped) > 1 else ""
    recorder.notice(
        "extract",
        f"{skipped[0]}{more} already loaded unchanged: not loaded again (`--reload` or "
        "run(reload=True) loads it again)",
    )
    return _rest(files, remaining, data)


# -- a lost folder, or a newer state ---------------------------------------------------------
def restore_from_destination(
    folder: WorkingFolder, target: DestinationTarget, schema: Callable[[], Schema]
) -> bool:
    """Take state and schemas from the destination when its state is newer than the local
    one (a lost folder, or another machine's run of this pipeline since, as dlt's run syncs
    them); a schema the state names but the folder lacks (deleted: damaged) is taken too.

    True when something was taken (the pipeline then names its dataset again and saves).
    ``schema`` gives the schema to open the client with, only when one is opened.
    """
    first_sync, folder.synced = not folder.synced, True
    if not target.reachable():  # a DuckDB file not made yet holds nothing: not created here
        restart = first_sync and _may_start_afresh(folder)
        if restart:
            folder.start_afresh()
        folder.had_local_state = True
        return restart
    with target.client(schema()) as client:
        restored = client.get_stored_state(folder.pipeline_name)
        if restored is None and first_sync and _may_start_afresh(folder):
            if not _has_tables(client):
                folder.start_afresh()
                folder.had_local_state = True
                return True
        newer = restored is not None and _version(restored) > _version(folder.state)
        if restored is not None and newer:
            had_local = folder.had_local_state
            folder.state = state_module.merge_restored(folder.state, restored)
            local = folder.local_state()
            local["first_run"] = bool(had_local and local.get("first_run", True))
            local["restored_from_destination"] = True
            # the destination holds this state: a run that leaves it unchanged sends none
            local["_last_extracted_hash"] = folder.state.get("_version_hash")
        folder.had_local_state = True
        names = list(folder.state.get("schema_names") or [])
        taken = [name for name in names if _take_schema(folder, client, name, newer)]
    return newer or bool(taken)


def _may_start_afresh(folder: WorkingFolder) -> bool:
    """A pipeline object meeting a dataset that does not exist (another dataset name, another
    database file, a dropped dataset) starts from a fresh state and schemas, as dlt 1.31's
    does: its cursors load the whole range into the new dataset. Only with a saved local
    state and no package waiting to load (nothing extracted is ever thrown away)."""
    return folder.had_local_state and not any(iter_pending(folder.packages_dir))


def _has_tables(client: DestinationClient) -> bool:
    """Whether the dataset holds any table (a destination that cannot tell, a sink, does)."""
    try:
        return bool(client.table_names())
    except LoadstoneError:
        return True


def _version(state: Mapping[str, object]) -> int:
    return int(cast("int", state.get("_state_version") or 0))


def _take_schema(folder: WorkingFolder, client: DestinationClient, name: str, newer: bool) -> bool:
    """Take the stored schema ``name`` when the folder lacks it, or (a newer state was
    taken) when the stored one is a newer version."""
    local = folder.schemas.get(name)
    if local is not None and not newer:
        return False
    stored = client.get_stored_schema(name)
    if not stored or (local is not None and int(stored.get("version") or 0) <= local.version):
        return False
    folder.save_schema(Schema.from_dict(stored))
    return True
