"""The sources' state a package carries, taken back when that package is not loaded.

Why: a run moves its incremental cursors (and whatever resources keep in state) while it
extracts. Before issue 35 those changes stayed in the pipeline's state even when their package
never loaded -- set aside for a value its table cannot hold, or dropped with
``drop-pending-packages`` -- so the next run started after rows that were never loaded, and
they were lost for good (dlt 1.31 loses them the same way). Here a package records the
changes its extract made to ``state["sources"]`` (:func:`changes_since`, in ``package.json``
as ``state_changes``); a package set aside or dropped takes them back with it
(:func:`take_back`), so the next run reads those rows again.

A change is taken back only where the state still holds what the package left there: a later
package, or the user, that changed the same value since keeps its value.

Taking back is crash-safe through a journal in the working folder
(:data:`TAKE_BACK_FILE`): the changes are written there first, then the packages are moved
or deleted, then the state is saved and the journal removed; a run that finds the journal
finishes it (taking back is idempotent).
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypedDict

from loadstone.exceptions import LoadstoneError
from loadstone.storage.json_files import read_json_object, write_json_atomic
from loadstone.storage.state import to_live, to_stored
from loadstone.typing import TDataItem

if TYPE_CHECKING:
    from loadstone.storage.load_package import LoadPackage

__all__ = [
    "TAKE_BACK_FILE",
    "StateChange",
    "carried_changes",
    "changes_since",
    "clear_journal",
    "forget",
    "in_take_back_order",
    "read_journal",
    "record_changes",
    "sources_snapshot",
    "take_back",
    "write_journal",
]

#: the journal of changes being taken back (see the module docstring)
TAKE_BACK_FILE: Final = "state_take_back.json"
_SOURCES: Final = "sources"
#: load id -> the changes its extract made, as recorded in this process (see record_changes)
_LIVE: dict[str, list[StateChange]] = {}


class StateChange(TypedDict):
    """One value the extract of a package set, changed or removed in the state."""

    #: keys from the state's root (``["sources", "<source>", "resources", ...]``)
    path: list[str]
    had_before: bool
    before: TDataItem
    has_after: bool
    after: TDataItem


def _canonical(value: TDataItem) -> str:
    """A value as the state file stores it, for comparison (a datetime in memory equals the
    marked text it is written as)."""
    return json.dumps(to_stored(value), sort_keys=True, default=str)


def stored_changes(changes: Sequence[StateChange]) -> list[TDataItem]:
    """``changes`` as ``package.json`` and the journal store them (typed values marked)."""
    stored = to_stored(list(changes))
    assert isinstance(stored, list)
    return stored


def _live_changes(stored: object) -> list[StateChange]:
    """Changes read back from a file, their values typed again."""
    live = to_live(list(stored) if isinstance(stored, list) else [])
    assert isinstance(live, list)
    return live


def sources_snapshot(state: Mapping[str, TDataItem]) -> dict[str, TDataItem]:
    """The sources' state now (a copy the extract cannot change; values keep their types)."""
    return copy.deepcopy(dict(state.get(_SOURCES) or {}))


def changes_since(
    before: Mapping[str, TDataItem], state: Mapping[str, TDataItem]
) -> list[StateChange]:
    """What changed in ``state["sources"]`` since ``before`` (a :func:`sources_snapshot`):
    the deepest dict keys whose values differ, were added or were removed."""
    after = sources_snapshot(state)
    found: list[StateChange] = []
    _diff(before, after, [_SOURCES], found)
    return found


def record_changes(
    load_id: str, before: Mapping[str, TDataItem], state: Mapping[str, TDataItem]
) -> list[StateChange]:
    """:func:`changes_since`, also kept in this process for the package ``load_id``: taken
    back here, a value gets its own type again (a cursor's datetime), not the text
    ``package.json`` stores it as."""
    changes = changes_since(before, state)
    _LIVE[load_id] = changes
    return changes


def _diff(
    before: Mapping[str, TDataItem],
    after: Mapping[str, TDataItem],
    path: list[str],
    found: list[StateChange],
) -> None:
    for key in [*before, *(k for k in after if k not in before)]:
        had, has = key in before, key in after
        old, new = before.get(key), after.get(key)
        if had and has and isinstance(old, dict) and isinstance(new, dict):
            _diff(old, new, [*path, key], found)
        elif not (had and has and _canonical(old) == _canonical(new)):
            found.append(
                StateChange(path=[*path, key], had_before=had, before=old, has_after=has, after=new)
            )


def take_back(state: MutableMapping[str, TDataItem], changes: Iterable[StateChange]) -> bool:
    """Undo ``changes`` (in the order given) where the state still holds their result;
    True when the state changed."""
    changed = False
    for change in changes:
        parent: TDataItem = state
        for key in change["path"][:-1]:
            parent = parent.get(key) if isinstance(parent, dict) else None
        if not isinstance(parent, dict):
            continue  # the value's dict is gone since: nothing of this change is left
        key = change["path"][-1]
        if (key in parent) != change["has_after"]:
            continue
        if key in parent and _canonical(parent[key]) != _canonical(change["after"]):
            continue  # changed again since, by a later package or the user: theirs stays
        if change["had_before"]:
            parent[key] = copy.deepcopy(change["before"])
        else:
            del parent[key]
        changed = True
    return changed


def in_take_back_order(packages_changes: Sequence[Sequence[StateChange]]) -> list[StateChange]:
    """The changes of several packages (oldest first) in the order they are taken back:
    newest package first, each package's changes last first."""
    return [change for changes in reversed(packages_changes) for change in reversed(changes)]


def write_journal(working_dir: Path, changes: Sequence[StateChange]) -> None:
    write_json_atomic(Path(working_dir) / TAKE_BACK_FILE, {"changes": stored_changes(changes)})


def read_journal(working_dir: Path) -> list[StateChange] | None:
    """The changes a taking back that did not finish left (None: there is none)."""
    path = Path(working_dir) / TAKE_BACK_FILE
    if not path.exists():
        return None
    journal = read_json_object(
        path,
        repair="delete it: the sources' state of packages set aside or dropped stays as it is",
        required=("changes",),
    )
    return _live_changes(journal["changes"])


def clear_journal(working_dir: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        (Path(working_dir) / TAKE_BACK_FILE).unlink()


def forget(load_id: str) -> None:
    """A package loaded: its changes stay, nothing of them to keep in this process."""
    _LIVE.pop(load_id, None)


def carried_changes(package: LoadPackage) -> list[StateChange]:
    """The changes a package's extract made to the sources' state: as recorded in this
    process, else as its ``package.json`` holds them (none when its metadata is damaged:
    such a package is dropped all the same)."""
    with contextlib.suppress(LoadstoneError, OSError):
        live = _LIVE.pop(package.load_id, None)
        if live is not None:
            return live
        return _live_changes(package.meta.get("state_changes"))
    return []
