"""The pipeline's lock belongs to its holder alone, and a dead holder's lock is taken over.

A child forked while the lock is held (the normalizer's pool workers) must not keep it; a
lock still held after its recorded holder died (by a process that holder left behind) is
taken over by the next run at once, with a note; ``info`` tells such a dead holder from a
live one.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from loadstone.cli import main
from loadstone.exceptions import PipelineLockedError
from loadstone.storage.pipeline_lock import PipelineLock, lock_path, lock_status

#: holds the lock file given as argv[1] and writes a holder record naming pid argv[2]
LEFTOVER = """
import fcntl, json, socket, sys
handle = open(sys.argv[1], "a+")
fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
handle.seek(0); handle.truncate()
handle.write(json.dumps({"pid": int(sys.argv[2]), "host": socket.gethostname(),
                         "command": "loadstone run killed.jsonl", "since": 0}))
handle.flush()
print("held", flush=True)
sys.stdin.readline()
"""


def pipelines_dir() -> Path:
    return Path(os.environ["LOADSTONE_HOME"]) / "pipelines"


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(done.stdout)


@pytest.fixture
def leftover() -> Iterator[subprocess.Popen[str]]:
    """A process holding the lock while the holder its file names is dead."""
    path = lock_path(pipelines_dir(), "p")
    path.parent.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(
        [sys.executable, "-c", LEFTOVER, str(path), str(dead_pid())],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdout.readline() == "held\n"
    yield process
    process.kill()
    process.wait()


def test_a_forked_child_does_not_hold_the_lock() -> None:
    lock = PipelineLock(pipelines_dir(), "p")
    lock.acquire(0)
    child = os.fork()
    if child == 0:  # the child only waits to be killed
        signal.pause()
        os._exit(0)
    try:
        lock.release()
        assert not lock_status(lock.path).held  # the child, alive, holds nothing
        again = PipelineLock(pipelines_dir(), "p")
        again.acquire(0)
        again.release()
    finally:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)


def test_a_lock_whose_holder_is_dead_is_taken_over_at_once_with_a_note(
    leftover: subprocess.Popen[str],
) -> None:
    status = lock_status(lock_path(pipelines_dir(), "p"))
    assert status.held and status.holder_dead and not status.running
    notes: list[str] = []
    lock = PipelineLock(pipelines_dir(), "p")
    lock.acquire(0, on_wait=notes.append)
    try:
        assert len(notes) == 1 and "is dead" in notes[0] and "taking the lock over" in notes[0]
        status = lock_status(lock.path)
        assert status.running and status.holder is not None
        assert status.holder.pid == os.getpid()
        with pytest.raises(PipelineLockedError):  # the new holder is alive: no second takeover
            PipelineLock(pipelines_dir(), "p").acquire(0)
    finally:
        lock.release()
    assert leftover.poll() is None  # the leftover process itself is left alone


def test_a_live_holder_is_waited_for_not_taken_over() -> None:
    lock = PipelineLock(pipelines_dir(), "p")
    lock.acquire(0)
    try:
        status = lock_status(lock.path)
        assert status.running and not status.holder_dead
        with pytest.raises(PipelineLockedError, match="is being run by process"):
            PipelineLock(pipelines_dir(), "p").acquire(0)
    finally:
        lock.release()


def test_info_tells_a_dead_holder_from_a_live_one(
    leftover: subprocess.Popen[str], capsys: pytest.CaptureFixture[str]
) -> None:
    Path("a.jsonl").write_text(json.dumps({"id": 1}) + "\n")
    (pipelines_dir() / "p" / "packages").mkdir(parents=True)
    assert main(["pipeline", "p", "info"]) == 0
    out = capsys.readouterr().out
    assert "running:         no:" in out and "died" in out and "next run takes over" in out
    assert "running:         yes" not in out


def test_a_holder_on_another_host_is_never_taken_over() -> None:
    path = lock_path(pipelines_dir(), "p")
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "pid": dead_pid(),
        "host": socket.gethostname() + "-other",
        "command": "x",
        "since": 0,
    }
    path.write_text(json.dumps(record))
    holder = lock_status(path).holder
    assert holder is None or not holder.is_dead  # not held: no holder to judge
    from loadstone.storage.pipeline_lock import read_holder

    found = read_holder(path)
    assert found is not None and not found.is_dead
