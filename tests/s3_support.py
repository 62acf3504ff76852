"""An S3-compatible server on loopback for the ``s3://`` tests: moto's standalone server.

Started as its own process (``python -m moto.server``) on a free 127.0.0.1 port, once per
test process: every module that uses the ``s3_server`` fixture imports it by name, which
makes a fixture of its own in each module, so the server is kept here, not in pytest's
fixture cache (one server per pytest worker instead of one per module; each start is ~2
CPU-s of imports). Tests keep apart by bucket: each test makes fresh buckets
(:meth:`S3Server.new_bucket`). The server stops when the process exits. moto is a test
dependency: without it the fixture fails, it never skips.
"""

from __future__ import annotations

import atexit
import os
import socket
import subprocess
import sys
import time
import uuid
from typing import Any

import attrs
import pytest


@attrs.frozen
class S3Server:
    """Where the server listens and the credentials it accepts (any, as moto does)."""

    endpoint_url: str
    _clients: dict[int, Any] = attrs.field(factory=dict, eq=False, repr=False)

    @property
    def credentials(self) -> dict[str, str]:
        return {
            "aws_access_key_id": "testing",
            "aws_secret_access_key": "testing",
            "region_name": "us-east-1",
            "endpoint_url": self.endpoint_url,
        }

    def new_bucket(self) -> str:
        """A fresh bucket, returned as its name."""
        name = f"loadstone-{uuid.uuid4().hex[:12]}"
        self._client().create_bucket(Bucket=name)
        return name

    def _client(self) -> Any:
        """One boto3 client per process (a client costs ~50 ms of CPU to make)."""
        client = self._clients.get(os.getpid())
        if client is None:
            import boto3

            client = boto3.client("s3", **self.credentials)
            self._clients[os.getpid()] = client
        return client


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for(port: int, process: subprocess.Popen[bytes], seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"moto server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"moto server did not listen on 127.0.0.1:{port} in {seconds} s")


#: this process's server: (pid of the process that started it, server process, server)
_RUNNING: list[tuple[int, subprocess.Popen[bytes], S3Server]] = []


def _stop() -> None:
    for owner, process, _ in _RUNNING:
        if owner == os.getpid() and process.poll() is None:
            process.terminate()
            process.wait(timeout=10)
    _RUNNING.clear()


atexit.register(_stop)


def shared_server() -> S3Server:
    """This process's server, started on first use (again if it has died)."""
    if _RUNNING:
        owner, process, server = _RUNNING[0]
        if owner == os.getpid() and process.poll() is None:
            return server
        _stop()
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for(port, process)
    except BaseException:
        process.kill()
        process.wait()
        raise
    server = S3Server(f"http://127.0.0.1:{port}")
    _RUNNING.append((os.getpid(), process, server))
    return server


@pytest.fixture(scope="session")
def s3_server() -> S3Server:
    """moto's standalone S3 server on loopback, one for every module of this process."""
    return shared_server()
