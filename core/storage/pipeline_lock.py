"""One run at a time per pipeline: an advisory lock beside the pipeline's working folder.

Two runs of one pipeline share its packages: without a lock, one run deletes or re-normalizes
the package the other is writing. Every step that changes the working folder (run, extract,
normalize, load, dropping packages) holds ``<pipelines_dir>/.<pipeline>.lock`` with
``flock``. The kernel releases that lock when its process dies, however it dies (``kill -9``
included), so a lock of a dead process is never in the way: the file outlives it, the lock
does not. The file holds the holder's pid, host and command, for messages only.

The file sits beside the working folder, not inside it: ``drop`` and dev mode delete the
working folder, and a lock on a deleted file would not exclude a run that makes a new one.
A second run waits (and says so through ``on_wait``) up to ``timeout`` seconds, then fails
before touching anything; ``timeout`` 0 fails at once. Within one process the lock is
reentrant (a run calls normalize and load, which lock too).
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import attrs

from loadstone.errors import LoadstoneError

#: Seconds a second run waits for the first by default (config ``pipeline.lock_timeout``).
DEFAULT_TIMEOUT = 1800.0
#: How often a waiting run tries again.
POLL_SECONDS = 0.2


class PipelineLockedError(LoadstoneError):
    """Another process runs the pipeline and did not finish within the lock timeout."""


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
    """Whether a live process holds the lock at ``path`` right now (without taking it)."""
    if not path.exists():
        return False
    with open(path, "a+") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    return False


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
        handle = open(self.path, "a+")  # held open for as long as the lock
        deadline = time.monotonic() + max(0.0, timeout)
        told = False
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                holder = read_holder(self.path)
                if time.monotonic() >= deadline:
                    handle.close()
                    raise PipelineLockedError(self._busy_message(holder, timeout)) from None
                if not told and on_wait is not None:
                    on_wait(self._wait_message(holder, timeout))
                    told = True
                time.sleep(POLL_SECONDS)
        self._write_holder(handle)
        with self._guard:
            self._handle, self._depth, self._owner = handle, 1, threading.get_ident()

    def release(self) -> None:
        with self._guard:
            self._depth -= 1
            if self._depth > 0:
                return
            handle, self._handle, self._owner = self._handle, None, None
        if handle is not None:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
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
