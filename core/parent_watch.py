"""A forked helper process never outlives the process that started it.

A pool worker lives to serve its driver. When the driver dies without closing the pool
(``kill -9``, the OOM killer, a scheduler stopping the task), nothing else tells the worker:
it may sit blocked on a pipe nobody reads, holding memory and whatever it inherited (the
driver's Spark gateway pipe, open files), for ever. Issue 22 saw workers outlive a killed
driver by more than ten minutes, holding the pipeline's lock.

Two guards, both installed by :func:`exit_with_parent` in the child:

* On Linux the kernel sends the child SIGKILL when its parent dies (``prctl`` with
  ``PR_SET_PDEATHSIG``): at once, whatever the child is doing.
* Everywhere, a daemon thread compares ``os.getppid()`` with the parent's pid once a
  second: an orphan is re-parented, so the pid changes. This also covers the one gap of the
  signal (it follows the *thread* that forked the child, not the process) and systems
  without ``prctl``.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time

#: ``PR_SET_PDEATHSIG`` from <linux/prctl.h>
PR_SET_PDEATHSIG = 1
#: how often the watch thread looks at its parent
POLL_SECONDS = 1.0


def exit_with_parent(parent_pid: int) -> None:
    """Make this (child) process die as soon as ``parent_pid``, its parent, dies."""
    _parent_death_signal()
    watch_parent(parent_pid)


def watch_parent(parent_pid: int) -> None:
    """Exit as soon as ``parent_pid`` is no longer this process's parent (a daemon thread)."""
    if os.getppid() != parent_pid:  # the parent died already
        os._exit(1)
    watch = threading.Thread(
        target=_watch, args=(parent_pid,), name="loadstone-parent-watch", daemon=True
    )
    watch.start()


def _parent_death_signal() -> None:
    """Ask the kernel for SIGKILL when the parent dies (Linux; elsewhere a no-op)."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):  # no libc found: the watch remains
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)


def _watch(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(POLL_SECONDS)
    os._exit(1)
