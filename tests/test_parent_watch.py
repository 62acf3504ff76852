"""A process that asked to die with its parent exits when the parent is killed (kill -9).

The parent is a real process that forks the child, prints the child's pid and waits; the
test kills the parent with SIGKILL and waits for the child to exit by itself. Both guards
are tried: the whole of ``exit_with_parent`` (the kernel's parent-death signal, then the
watch), and the watch thread alone (what remains where the signal does not exist).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

PARENT = """
import os, sys, time
from loadstone import parent_watch

parent = os.getpid()
child = os.fork()
if child == 0:
    getattr(parent_watch, sys.argv[1])(parent)
    while True:
        time.sleep(60)
print(child, flush=True)
while True:
    time.sleep(60)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.parametrize("guard", ["exit_with_parent", "watch_parent"])
def test_a_child_exits_when_its_parent_is_killed(guard: str) -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, guard], stdout=subprocess.PIPE, text=True
    )
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    assert _alive(child)
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    for _ in range(600):  # generous: the guards act at once, a busy machine is slow
        if not _alive(child):
            return
        time.sleep(0.05)
    os.kill(child, signal.SIGKILL)
    raise AssertionError(f"the child {child} outlived its parent")
