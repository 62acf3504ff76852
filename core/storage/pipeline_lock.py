"""One run at a time per pipeline: an advisory lock beside the pipeline's working folder.

Two runs of one pipeline share its packages: without a lock, one run deletes or re-normalizes
the package the other is writing. Every step that changes the working folder (run, extract,
normalize, load, dropping packages) holds ``<pipelines_dir>/.<pipeline>.lock`` with
``flock``. The kernel releases that lock when the last descriptor of the open file closes,
so a lock of a dead process is never in the way -- provided no other process shares the
descriptor. The file holds the holder's pid, host and command (messages, and the check
below).

Only the holder holds it. A child forked by the holder (the normalizer's pool workers, a
user's own ``fork``) would inherit the descriptor, and with it the lock, for as long as the
child lives: a driver killed with ``kill -9`` would leave its orphaned workers holding the
pipeline (issue 22). So every forked child closes its copies at once (``os.register_at_fork``;
``exec`` closes them anyway: Python opens files close-on-exec). Should the lock still be held
while the pid it records is dead (a process on this host that no longer exists), whatever
holds it is a leftover: the next run takes the lock over at once, with a note, by putting a
new lock file in place of the old one. Takeovers and the holder's record are written under
``<lock>.takeover`` (held for an instant), and a run that got the lock checks it still holds
the file at the path, so two runs never both win.

The file sits beside the working folder, not inside it: ``drop`` and dev mode delete the
working folder, and a lock on a deleted file would not exclude a run that makes a new one.
A second run waits (and says so through ``on_wait``) up to ``timeout`` seconds, then fails
before touching anything; ``timeout`` 0 fails at once. Within one process the lock is
reentrant (a run calls normalize and load, which lock too).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import attrs

from loadstone import config
from loadstone.exceptions import PipelineLockedError

#: Seconds a second run waits for the first by default (config ``pipeline.lock_timeout``).
DEFAULT_TIMEOUT = 1800.0
#: How often a waiting run tries again.
POLL_SECONDS = 0.2


@attrs.frozen
class LockHolder:
    """Who holds (or last held) a pipeline's lock, as its lock file says."""

    pid: int
    host: str
    command: str
    since: float

    def describe(self) -> str:
        where = "" if self.host == socket.gethostname() else f" on {self.host}"
        return f"process {self.pid}{where} ({self.command})"

    @property
    def is_dead(self) -> bool:
        """Known dead: a process of this host that no longer exists (another host's: unknown)."""
        if self.host != socket.gethostname() or self.pid <= 0:
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:  # alive, another user's
            return False
        return False


@attrs.frozen
class LockStatus:
    """Whether a pipeline's lock is held, and by whom, as seen from outside the holder."""

    held: bool
    holder: LockHolder | None

    @property
    def holder_dead(self) -> bool:
        """Held, but the recorded holder is dead: a leftover holds it; the next run takes over."""
        return self.held and self.holder is not None and self.holder.is_dead

    @property
    def running(self) -> bool:
        """A live process runs the pipeline right now."""
        return self.held and not self.holder_dead


def configured_timeout(explicit: float | None = None) -> float:
    """Seconds a run waits for the lock: ``explicit``, else ``pipeline.lock_timeout``."""
    return config.get_float(
        "pipeline.lock_timeout", DEFAULT_TIMEOUT, explicit=explicit, expected="a number of seconds"
    )


def lock_path(pipelines_dir: Path, pipeline_name: str) -> Path:
    return Path(pipelines_dir) / f".{pipeline_name}.lock"


def read_holder(path: Path) -> LockHolder | None:
    """The holder written in the lock file; None when there is none or it is unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return LockHolder(int(data["pid"]), str(data["host"]), str(data["command"]), data["since"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def is_held(path: Path) -> bool:
    """Whether any process holds the lock at ``path`` right now (without taking it)."""
    if not path.exists():
        return False
    with open(path, "a+") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    return False


def lock_status(path: Path) -> LockStatus:
    """Held or not, and the recorded holder (``info`` tells a dead holder from a live one)."""
    held = is_held(path)
    return LockStatus(held, read_holder(path) if held else None)


#: the locks this process holds: a forked child closes their descriptors (see module doc)
_HELD: weakref.WeakSet[PipelineLock] = weakref.WeakSet()


def _forget_in_child() -> None:
    """In a child just forked: close the inherited lock files; the parent keeps its lock."""
    for lock in list(_HELD):
        lock._forget()


os.register_at_fork(after_in_child=_forget_in_child)


class PipelineLock:
    """The lock of one pipeline for one process (reentrant across threads of a step)."""

    def __init__(self, pipelines_dir: Path, pipeline_name: str) -> None:
        self.pipeline_name = pipeline_name
        self.path = lock_path(pipelines_dir, pipeline_name)
        self._handle: IO[str] | None = None
        self._depth = 0
        self._owner: int | None = None
        self._guard = threading.RLock()

    @property
    def held(self) -> bool:
        return self._depth > 0

    def acquire(self, timeout: float, on_wait: Callable[[str], None] | None = None) -> None:
        """Take the lock, waiting up to ``timeout`` seconds for another process to finish."""
        with self._guard:
            if self._depth and self._owner == threading.get_ident():
                self._depth += 1
                return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + max(0.0, timeout)
        told = False
        while True:
            handle = self._try_lock(on_wait)
            if handle is not None:
                break
            holder = read_holder(self.path)
            if time.monotonic() >= deadline:
                raise PipelineLockedError(self._busy_message(holder, timeout))
            if not told and on_wait is not None:
                on_wait(self._wait_message(holder, timeout))
                told = True
            time.sleep(POLL_SECONDS)
        with self._guard:
            self._handle, self._depth, self._owner = handle, 1, threading.get_ident()
        _HELD.add(self)

    def _try_lock(self, on_wait: Callable[[str], None] | None) -> IO[str] | None:
        """The lock file's handle, locked and recording this process; None while held."""
        handle = open(self.path, "a+")  # held open for as long as the lock
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            return self._take_over(on_wait)
        with self._takeover_guard():
            if _same_file(handle, self.path):
                self._write_holder(handle)
                return handle
        handle.close()  # a takeover put a new file in place meanwhile: wait for that one
        return None

    def _take_over(self, on_wait: Callable[[str], None] | None) -> IO[str] | None:
        """When the recorded holder is dead, a new locked lock file in place of the old one."""
        with self._takeover_guard():
            holder = read_holder(self.path)
            if holder is None or not holder.is_dead or not is_held(self.path):
                return None
            fresh = self.path.with_name(f"{self.path.name}.{os.getpid()}.new")
            handle = open(fresh, "w+")
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # a new file: free
            self._write_holder(handle)
            os.replace(fresh, self.path)
        if on_wait is not None:
            on_wait(
                f"pipeline {self.pipeline_name!r}: its lock was still held although "
                f"{holder.describe()} is dead (a process it left behind holds the old lock "
                "file); taking the lock over"
            )
        return handle

    @contextlib.contextmanager
    def _takeover_guard(self) -> Iterator[None]:
        """Serialises takeovers and holder records among processes (held for an instant)."""
        with open(self.path.with_name(self.path.name + ".takeover"), "a+") as guard:
            fcntl.flock(guard.fileno(), fcntl.LOCK_EX)
            yield

    def release(self) -> None:
        with self._guard:
            self._depth -= 1
            if self._depth > 0:
                return
            handle, self._handle, self._owner = self._handle, None, None
        _HELD.discard(self)
        if handle is not None:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
            handle.close()

    def _forget(self) -> None:
        """In a forked child: close the inherited descriptor without unlocking it (the lock
        belongs to the open file, which the parent still has); the child holds nothing."""
        handle, self._handle, self._depth, self._owner = self._handle, None, 0, None
        self._guard = threading.RLock()  # another thread of the parent may have held it
        if handle is not None:
            with contextlib.suppress(OSError):
                handle.close()

    def _write_holder(self, handle: IO[str]) -> None:
        record = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "command": " ".join(sys.argv)[:200] or "python",
            "since": time.time(),
        }
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps(record))
        handle.flush()

    def _wait_message(self, holder: LockHolder | None, timeout: float) -> str:
        who = holder.describe() if holder else "another process"
        return (
            f"pipeline {self.pipeline_name!r} is being run by {who}; waiting for it to finish "
            f"(up to {timeout:.0f} s, config pipeline.lock_timeout)"
        )

    def _busy_message(self, holder: LockHolder | None, timeout: float) -> str:
        who = holder.describe() if holder else "another process"
        waited = "" if timeout <= 0 else f" after waiting {timeout:.0f} s"
        return (
            f"pipeline {self.pipeline_name!r} is being run by {who}; nothing was changed"
            f"{waited}. Run again when it has finished (or raise pipeline.lock_timeout / "
            f"--lock-timeout to wait longer)"
        )


def _same_file(handle: IO[str], path: Path) -> bool:
    """Whether ``handle`` is still the file at ``path`` (a takeover replaces it)."""
    try:
        found = path.stat()
    except FileNotFoundError:
        return False
    mine = os.fstat(handle.fileno())
    return (found.st_dev, found.st_ino) == (mine.st_dev, mine.st_ino)
