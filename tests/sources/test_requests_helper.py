"""``from loadstone.sources.helpers import requests``: dlt's retrying drop-in for requests.

Against a real HTTP server on loopback; the outcomes are dlt 1.31's (run as a black box on
the same server): retries on 429/5xx, ``HTTPError`` for an error status once the attempts are
used up, ``raise_for_status=False`` returning the last answer, requests' own exceptions.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator

import pytest
import requests as plain_requests

from loadstone.sources.helpers import requests


class _Server(http.server.ThreadingHTTPServer):
    hits = 0


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *args: object) -> None:  # quiet: the test reads the answers
        return

    def do_GET(self) -> None:
        self.server.hits += 1
        if self.path.startswith("/busy"):  # busy twice, then fine
            if self.server.hits % 3:
                self._answer(503, b"busy")
                return
        if self.path.startswith("/down"):
            self._answer(503, b"down")
            return
        if self.path.startswith("/missing"):
            self._answer(404, b"nope")
            return
        self._answer(200, json.dumps({"path": self.path}).encode())

    do_POST = do_GET

    def _answer(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(name="server")
def server_fixture(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Server]:
    server = _Server(("127.0.0.1", 0), _Handler)
    # a short poll: shutdown() waits for the next one (0.5 s by default, at every test)
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield server
    server.shutdown()


def _url(server: _Server, path: str) -> str:
    return f"http://127.0.0.1:{server.server_port}{path}"


def _client(**kwargs: object) -> requests.Client:
    return requests.Client(request_backoff_factor=0, **kwargs)  # type: ignore[arg-type]


def test_get_and_post_answer_as_requests_does(server: _Server) -> None:
    assert requests.get(_url(server, "/x"), params={"a": 1}).json() == {"path": "/x?a=1"}
    assert requests.post(_url(server, "/p"), json={"a": 1}).status_code == 200


def test_a_busy_server_is_asked_again_until_it_answers(server: _Server) -> None:
    response = _client().get(_url(server, "/busy"))
    assert (response.status_code, server.hits) == (200, 3)


def test_an_error_status_raises_requests_own_http_error_after_the_attempts(
    server: _Server,
) -> None:
    with pytest.raises(plain_requests.HTTPError, match="503 Server Error"):
        _client(request_max_attempts=3).get(_url(server, "/down"))
    assert server.hits == 3


def test_a_client_error_is_not_retried(server: _Server) -> None:
    with pytest.raises(requests.HTTPError, match="404 Client Error"):
        _client().get(_url(server, "/missing"))
    assert server.hits == 1


def test_raise_for_status_false_returns_the_last_answer(server: _Server) -> None:
    response = _client(raise_for_status=False, request_max_attempts=2).get(_url(server, "/down"))
    assert (response.status_code, server.hits) == (503, 2)


def test_a_refused_connection_raises_requests_connection_error() -> None:
    with pytest.raises(plain_requests.ConnectionError):
        _client(request_max_attempts=2).get("http://127.0.0.1:1/x")


def test_the_attempts_come_from_the_runtime_settings(
    server: _Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNTIME__REQUEST_MAX_ATTEMPTS", "2")
    with pytest.raises(requests.HTTPError):
        _client().get(_url(server, "/down"))
    assert server.hits == 2


def test_a_retry_condition_retries_what_the_user_names(server: _Server) -> None:
    asked: list[int] = []

    def empty_body(response: plain_requests.Response | None, error: BaseException | None) -> bool:
        asked.append(1)
        return response is not None and response.json() == {"path": "/ok"} and len(asked) < 2

    response = _client(retry_condition=empty_body).get(_url(server, "/ok"))
    assert (response.status_code, server.hits) == (200, 2)


def test_a_session_raises_for_status_unless_told_not_to(server: _Server) -> None:
    with pytest.raises(requests.HTTPError):
        requests.Session().get(_url(server, "/missing"))
    assert requests.Session(raise_for_status=False).get(_url(server, "/missing")).status_code == 404
