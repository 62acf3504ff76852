"""The preloaded parent (a zygote) that ``preloaded_children.py`` starts: it imports the
modules it is given, then forks one child per request, and reports each child's exit status.

Why: the crash tests start dozens of short Python programs, and each used to pay Python's
start-up and the imports of loadstone, DuckDB, pyarrow, deltalake and pyiceberg (about 1.5
CPU-s) before doing a second of work. A forked child has them already.

Fork safety: this process only imports. It checks, before it serves anything, that no import
started a thread but jemalloc's background threads (pyarrow's and deltalake's allocators start
one at load; jemalloc's own fork handlers stop and restart them, which is why the product's
own ``fork`` worker pool is safe after these imports too): no Python thread, no thread pool,
no tokio runtime. (``preloaded_children`` starts this process with ``OPENBLAS_NUM_THREADS=1``
so that numpy's BLAS keeps no pool of its own here.) Each child is then a
process of its own (own pid, own session if asked, its environment, working directory,
``sys.argv``, ``sys.path`` and standard streams set as ``python`` would set them) that runs
the program as ``__main__`` and ends as a Python process ends (``SystemExit``, a traceback
and status 1, non-daemon threads joined, ``atexit`` handlers). A signal that kills it shows
as the negative signal number, as ``subprocess`` reports it.

Protocol (JSON lines): requests on standard input; replies on the file descriptor that was
standard output (``{"ready": pid}``, ``{"started": pid}``, ``{"exited": pid, "code": c}``);
``{"stop": true}`` or the end of input ends the server.

Lifetime: the server and every child it forked end with the fixture that started it, never
later. The end of input alone could not promise it: any process forked from the pytest worker
while the server runs (the product's fork pool in an in-process run, a test's ``os.fork``)
holds a copy of the pipe's writing end, and the server would wait for that process too. So
the fixture says ``stop``, and on stop (or end of input) the server kills the children still
running (a child in a session of its own with its process group) before it exits. If the
pytest worker dies without stopping it, the kernel kills the server (``PR_SET_PDEATHSIG``;
the server also checks its parent's pid between requests), and each child with it.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import ctypes.util
import gc
import importlib
import json
import os
import runpy
import select
import signal
import sys
import threading
import traceback
import types
from typing import Any

#: native threads that survive a fork by design (see above)
FORK_SAFE_THREADS = ("jemalloc_bg_thd",)
#: ``PR_SET_PDEATHSIG`` from <linux/prctl.h>
PR_SET_PDEATHSIG = 1
#: how often (seconds) the server, idle, looks whether its parent is still the one it had
PARENT_CHECK = 1.0
#: the environment variable naming the pid of the process that started the server
PARENT_PID = "PRELOADED_PARENT_PID"


def die_with_parent(parent: int) -> None:
    """SIGKILL for this process when its parent dies (and exit now if it already did)."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:  # died before the signal was asked for
        os._exit(1)


def _thread_name(task: str) -> str:
    with open(f"/proc/self/task/{task}/comm") as handle:
        return handle.read().strip()


def _base_path() -> list[str]:
    """``sys.path`` without this script's folder and this process's ``PYTHONPATH``."""
    own = set(filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep)))
    return [entry for entry in sys.path[1:] if entry not in own]


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def _streams(request: dict[str, Any]) -> None:
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    out = os.open(request["stdout"], flags, 0o644)
    os.dup2(out, 1)
    err = out if request["stderr"] == request["stdout"] else os.open(request["stderr"], flags)
    os.dup2(err, 2)


def _program(request: dict[str, Any], base: list[str]) -> None:
    """Run the request's program as ``__main__``, with ``sys.argv``/``sys.path`` as ``python``
    sets them for ``-c CODE``, ``SCRIPT`` or ``-m MODULE``."""
    extra = [p for p in request["env"].get("PYTHONPATH", "").split(os.pathsep) if p]
    if "module" in request:
        sys.argv = ["-m", *request["argv"]]
        sys.path[:] = [os.getcwd(), *extra, *base]
        runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
        return
    main = types.ModuleType("__main__")
    if "script" in request:
        script = os.path.abspath(request["script"])
        sys.argv = [request["script"], *request["argv"]]
        sys.path[:] = [os.path.dirname(os.path.realpath(script)), *extra, *base]
        with open(script) as handle:
            code = compile(handle.read(), script, "exec")
        main.__file__ = script
    else:
        sys.argv = ["-c", *request["argv"]]
        sys.path[:] = ["", *extra, *base]
        code = compile(request["code"], "<string>", "exec")
    sys.modules["__main__"] = main
    exec(code, main.__dict__)


def _child(request: dict[str, Any], base: list[str], channels: list[int], server: int) -> None:
    """In the forked child: become the requested process, run, end as Python ends."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for fd in channels:
        os.close(fd)
    die_with_parent(server)
    if request.get("new_session"):
        os.setsid()
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    _streams(request)
    code = 0
    try:
        _program(request, base)
    except SystemExit as exc:
        code = _exit_code(exc)
    except BaseException:
        traceback.print_exc()
        code = 1
    try:
        threading._shutdown()  # type: ignore[attr-defined]  # reason: what Python's exit does
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def _reap(reply: Any, running: dict[int, bool]) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        running.pop(pid, None)
        reply({"exited": pid, "code": os.waitstatus_to_exitcode(status)})


def _end_children(running: dict[int, bool]) -> None:
    """SIGKILL the children still running (a child that made its own session: its group)
    and wait for them: none outlives the fixture."""
    for pid, own_session in running.items():
        # ProcessLookupError: it ended meanwhile (reaped below), or has no session yet
        if own_session:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    for pid in running:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


def serve(modules: list[str]) -> None:
    parent = int(os.environ.pop(PARENT_PID))
    die_with_parent(parent)
    for name in modules:
        importlib.import_module(name)
    others = [task for task in os.listdir("/proc/self/task") if int(task) != os.getpid()]
    threads = [_thread_name(task) for task in others]
    if threading.active_count() != 1 or set(threads) - set(FORK_SAFE_THREADS):
        raise RuntimeError(f"importing {modules} started threads {threads}: forking is unsafe")
    # the imported objects go to the collector's permanent generation: no child's collection
    # walks (and so copies) the pages it shares with this process (as the product's own
    # fork pool does, local_pool.py)
    gc.freeze()
    channel = os.dup(1)
    os.dup2(2, 1)  # nothing printed here may mix with the replies
    running: dict[int, bool] = {}  # pid -> whether it made a session of its own
    try:
        _serve_requests(parent, channel, running)
    finally:
        _end_children(running)


def _serve_requests(parent: int, channel: int, running: dict[int, bool]) -> None:
    """Fork a child per request until ``stop``, the end of input, or the parent's death."""
    base = _base_path()
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    requests = os.fdopen(0, "rb", buffering=0)

    def reply(message: dict[str, Any]) -> None:
        os.write(channel, (json.dumps(message) + "\n").encode())

    server = os.getpid()
    reply({"ready": server})
    pending = b""
    while os.getppid() == parent:
        ready, _, _ = select.select([0, wake_r], [], [], PARENT_CHECK)
        if wake_r in ready:
            os.read(wake_r, 4096)
        _reap(reply, running)
        if 0 not in ready:
            continue
        chunk = requests.read(65536)
        if not chunk:
            return
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            request = json.loads(line)
            if request.get("stop"):
                return
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _child(request, base, [channel, wake_r, wake_w], server)
            running[pid] = bool(request.get("new_session"))
            reply({"started": pid})


if __name__ == "__main__":
    serve(sys.argv[1:])
