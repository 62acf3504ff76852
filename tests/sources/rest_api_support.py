"""The ``api`` fixture of the rest_api tests (import it by name into a test module)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from rest_api_app import App


@pytest.fixture(name="api")
def api_fixture(monkeypatch: pytest.MonkeyPatch) -> Iterator[App]:
    """The API on a free loopback port, one per test; dlt's retry settings made quick."""
    monkeypatch.setenv("RUNTIME__REQUEST_BACKOFF_FACTOR", "0")
    monkeypatch.setenv("RUNTIME__REQUEST_MAX_ATTEMPTS", "3")
    running = App().start()
    yield running
    running.stop()
