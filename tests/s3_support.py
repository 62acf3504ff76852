"""An S3-compatible server on loopback for the ``s3://`` tests: moto's standalone server.

Started as its own process (``python -m moto.server``) on a free 127.0.0.1 port, once per
test session. moto is a test dependency: without it the fixture fails, it never skips.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator

import attrs
import pytest


@attrs.frozen
class S3Server:
    """Where the server listens and the credentials it accepts (any, as moto does)."""

    endpoint_url: str

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
        import boto3

        name = f"loadstone-{uuid.uuid4().hex[:12]}"
        client = boto3.client(
            "s3",
            endpoint_url=self.endpoint_url,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            region_name="us-east-1",
        )
        client.create_bucket(Bucket=name)
        return name


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


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """moto's standalone S3 server on loopback for the whole session."""
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
