"""An S3-compatible server on loopback for the ``s3://`` tests: moto's standalone server.

Started as its own process (``python -m moto.server``) on a free 127.0.0.1 port by the
session fixture ``s3_server`` of ``conftest.py``: one server per pytest worker (each start is
~2 CPU-s of imports). Tests keep apart by bucket: each test makes fresh buckets
(:meth:`S3Server.new_bucket`). moto is a test dependency: without it the fixture fails, it
never skips.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from typing import Any

import attrs


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


@contextlib.contextmanager
def running_server() -> Iterator[S3Server]:
    """moto's server on a free loopback port, for the ``with`` block (stopped after it)."""
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for(port, process)
        yield S3Server(f"http://127.0.0.1:{port}")
    finally:
        process.terminate()
        process.wait(timeout=10)
