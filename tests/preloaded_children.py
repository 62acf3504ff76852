"""Child processes forked from a preloaded parent (``preloaded_server.py``) instead of started
from scratch: the same real processes (own pid, killed by a real SIGKILL, exit status waited
for), without paying Python's start-up and the heavy imports for each.

A test module starts one :class:`Preloaded` parent (a module-scoped fixture) naming the modules
its children import; each :meth:`Preloaded.run` or :meth:`Preloaded.start` forks one child
that runs a program (``-c`` code, a script, or ``-m`` module) as ``python`` would, in the
working directory and environment given (by default the test's own, as ``subprocess`` does),
its output captured in files. The parent only imports, so forking it is safe (it checks that
no import started a thread); whatever a program starts (DuckDB, deltalake's runtime, thread
pools, worker processes) starts in the child.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from preloaded_server import PARENT_PID

SERVER = Path(__file__).resolve().parent / "preloaded_server.py"

#: what a ``loadstone run`` (the CLI or ``pipeline.run``) imports on DuckDB, the filesystem
#: (files, Delta, Iceberg) and PostgreSQL, normalizing on the local pool
#: what any ``loadstone run`` imports, whatever its destination and engine
LOADSTONE_RUN = (
    "loadstone",
    "loadstone.cli",
    "loadstone.cli.run_command",
    "loadstone.cli.pipeline_command",
    "loadstone.cli.plugins_command",
    "loadstone.pipelines.pipeline",
    "loadstone.extract.step",
    "loadstone.normalize.step",
    "loadstone.load.step",
    "loadstone.plugins.naming.snake_case",
    "loadstone.plugins.normalizers.relational.normalizer",
)
PIPELINE_RUN = (
    *LOADSTONE_RUN,
    "loadstone.plugins.normalizers.relational.local_pool",
    "loadstone.plugins.normalizers.relational.native",
    "loadstone.plugins.destinations.duckdb.client",
    "loadstone.plugins.destinations.duckdb.overlap",
    "loadstone.plugins.destinations.filesystem.client",
    "loadstone.plugins.destinations.filesystem.delta",
    "loadstone.plugins.destinations.filesystem.iceberg",
    "loadstone.plugins.destinations.filesystem.records",
    "loadstone.plugins.destinations.postgres.client",
    "concurrent.futures.process",
    "multiprocessing.popen_fork",
    "multiprocessing.synchronize",
    "duckdb",
    "pyarrow",
    "pyarrow.parquet",
    "deltalake",
    "pyiceberg",
    "psycopg",
)


class Preloaded:
    """One preloaded parent process; children are forked from it on request."""

    def __init__(self, modules: Sequence[str], wrapper: Sequence[str] = ()) -> None:
        """``wrapper``: a command the parent runs under (``unshare -m``: it and every child
        share one private mount namespace); it must ``exec`` the parent (which dies with this
        process, its parent: ``preloaded_server.py``)."""
        self._process = subprocess.Popen(
            [*wrapper, sys.executable, str(SERVER), *modules],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            # OPENBLAS_NUM_THREADS: see preloaded_server.py
            env={**os.environ, "OPENBLAS_NUM_THREADS": "1", PARENT_PID: str(os.getpid())},
        )
        self._exits: dict[int, int] = {}
        self._buffer = b""
        try:
            ready = self._message(timeout=300)
            if "ready" not in ready:
                raise RuntimeError(f"the preloaded parent did not start: {ready}")
        except BaseException:
            self._end()
            raise
        self._outputs = Path(tempfile.mkdtemp(prefix="preloaded_"))

    def close(self) -> None:
        """Stop the parent: it kills any child still running, then exits (see
        ``preloaded_server.py`` for why ``stop`` is said, not only the input closed)."""
        try:
            self._end()
        finally:
            shutil.rmtree(self._outputs, ignore_errors=True)

    def _end(self) -> None:
        assert self._process.stdin is not None
        with contextlib.suppress(BrokenPipeError):  # it died already: waited for below
            self._process.stdin.write(b'{"stop": true}\n')
            self._process.stdin.flush()
        with contextlib.suppress(BrokenPipeError):
            self._process.stdin.close()
        try:
            self._process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self._process.kill()  # not left running after its fixture, whatever the cause
            self._process.wait()
            raise
        finally:
            assert self._process.stdout is not None
            self._process.stdout.close()

    def start(
        self,
        code: str | None = None,
        args: Sequence[str] = (),
        *,
        script: str | None = None,
        module: str | None = None,
        cwd: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        output: str | Path | None = None,
        new_session: bool = False,
    ) -> Child:
        """Fork a child running ``code`` (as ``python -c``), ``script`` or ``module`` (``-m``)
        with ``args``; its stdout and stderr go to ``output`` (one file, as
        ``stderr=STDOUT``), else to two files of their own read by :meth:`Child.wait`."""
        request: dict[str, Any] = {
            "argv": list(args),
            "cwd": str(Path(cwd or os.getcwd()).absolute()),
            "env": dict(os.environ if env is None else env),
            "new_session": new_session,
        }
        if script is not None:
            request["script"] = script
        elif module is not None:
            request["module"] = module
        else:
            request["code"] = code
        streams = Path(tempfile.mkdtemp(dir=self._outputs))
        request["stdout"] = str(Path(output).absolute() if output else streams / "out")
        request["stderr"] = str(Path(output).absolute() if output else streams / "err")
        assert self._process.stdin is not None
        self._process.stdin.write((json.dumps(request) + "\n").encode())
        self._process.stdin.flush()
        while "started" not in (message := self._message(timeout=60)):
            self._record(message)
        return Child(self, int(message["started"]), request, output is not None)

    def run(
        self, *args: Any, timeout: float = 300, **kwargs: Any
    ) -> subprocess.CompletedProcess[str]:
        """:meth:`start`, then :meth:`Child.wait`: ``subprocess.run`` with ``capture_output``."""
        return self.start(*args, **kwargs).wait(timeout)

    def wait_for(self, pid: int, timeout: float, kill: bool = True) -> int:
        """The exit status of child ``pid`` (negative: the signal that ended it); on timeout
        the child is killed (unless ``kill`` is false) and ``TimeoutExpired`` raised."""
        while pid not in self._exits:
            try:
                self._record(self._message(timeout))
            except subprocess.TimeoutExpired:
                if kill:
                    os.kill(pid, signal.SIGKILL)  # not to leave it running after the test
                raise
        return self._exits.pop(pid)

    def _record(self, message: dict[str, Any]) -> None:
        if "exited" in message:
            self._exits[int(message["exited"])] = int(message["code"])

    def _message(self, timeout: float) -> dict[str, Any]:
        assert self._process.stdout is not None
        channel = self._process.stdout.fileno()
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([channel], [], [], timeout)
            if not ready:
                raise subprocess.TimeoutExpired("preloaded child", timeout)
            chunk = os.read(channel, 65536)
            if not chunk:
                raise RuntimeError(f"the preloaded parent died: {self._process.wait()}")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return dict(json.loads(line))


class Child:
    """A forked child: its pid, and its exit status and output once it ended."""

    def __init__(self, parent: Preloaded, pid: int, request: dict[str, Any], shared: bool) -> None:
        self.pid = pid
        self._parent = parent
        self._request = request
        self._shared = shared
        self.returncode: int | None = None

    def wait(self, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        if self.returncode is None:
            self.returncode = self._parent.wait_for(self.pid, timeout)
        out = Path(self._request["stdout"]).read_text(errors="replace")
        err = "" if self._shared else Path(self._request["stderr"]).read_text(errors="replace")
        return subprocess.CompletedProcess([self.pid], self.returncode, out, err)

    def first_line(self) -> str:
        """The first line the child wrote to its stderr, waited for while it runs (or ""
        if it ended without writing one)."""
        path = Path(self._request["stderr"])
        while True:
            ended = self.poll() is not None
            text = path.read_text(errors="replace") if path.exists() else ""
            if "\n" in text or ended:
                return text.splitlines(keepends=True)[0] if text else ""
            time.sleep(0.02)

    def poll(self) -> int | None:
        """The exit status if the child has ended, else None (never blocks)."""
        if self.returncode is None:
            try:
                self.returncode = self._parent.wait_for(self.pid, 0, kill=False)
            except subprocess.TimeoutExpired:
                return None
        return self.returncode


def preloaded(*modules: str, wrapper: Sequence[str] = ()) -> Iterator[Preloaded]:
    """The body of a module-scoped fixture: one preloaded parent for the module's tests."""
    parent = Preloaded(modules, wrapper)
    try:
        yield parent
    finally:
        parent.close()
