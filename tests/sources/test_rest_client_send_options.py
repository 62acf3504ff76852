"""``RESTClient.get/post/request/paginate`` pass ``requests``' send options on, as dlt 1.31.

``timeout``, ``allow_redirects``, ``verify``, ``stream``, ``proxies`` and ``cert`` reach
``Session.send``; a key it does not take fails with ``requests``' own ``TypeError``. The
programs of ``tests/compat/rest_client_send_probes.py`` ran under dlt against the same
loopback server; its answers are in ``tests/fixtures/rest_api/dlt_rest_client_send.json``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import locations
import pytest

from loadstone.sources.helpers.rest_client import RESTClient
from tests.compat.rest_client_send_probes import send_outcome, serving

RECORDED: dict[str, Any] = json.loads(
    (locations.FIXTURES / "rest_api" / "dlt_rest_client_send.json").read_text()
)["outcome"]


@pytest.fixture(scope="module")
def outcome() -> Iterator[dict[str, Any]]:
    with serving() as base_url:
        yield send_outcome(RESTClient, base_url)


@pytest.mark.parametrize("case", sorted(RECORDED))
def test_request_options_reach_requests_as_in_dlt(outcome: dict[str, Any], case: str) -> None:
    assert outcome[case] == RECORDED[case]
