"""``RESTClient`` request options as a dlt user passes them (``timeout``, ``allow_redirects``,
``verify``, ``stream``, ``proxies``, ``cert``; and keys ``requests`` does not send with),
against a library given as an argument and a loopback HTTP server.

Recorded under dlt 1.31 by ``tests/compat/record_rest_client_send.py``
(``tests/fixtures/rest_api/dlt_rest_client_send.json``); compared by
``tests/sources/test_rest_client_send_options.py``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:  # quiet
        return None

    def _json(self, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.startswith("/redirect"):
            self.send_response(302)
            self.send_header("Location", "/items")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self._json([{"path": self.path, "cookie": self.headers.get("Cookie")}])

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self._json([{"type": (self.headers.get("Content-Type") or "").split(";")[0]}])


@contextmanager
def serving() -> Iterator[str]:
    """A loopback server's base URL for the duration of the block."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    # a short poll: shutdown() waits for the next one (0.5 s by default)
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def _outcome(action: Callable[[], Any]) -> Any:
    try:
        return {"result": action()}
    except Exception as error:  # the refusal is the outcome recorded
        return {"error": type(error).__name__, "message": str(error)}


def send_outcome(rest_client: type, base_url: str) -> dict[str, Any]:
    client = rest_client(base_url=base_url)

    def pages(**options: Any) -> list[list[Any]]:
        return [list(page) for page in client.paginate("/items", **options)]

    return {
        "get_timeout": _outcome(lambda: client.get("/items", timeout=5).json()),
        "get_no_redirects": _outcome(
            lambda: client.get("/redirect", allow_redirects=False).status_code
        ),
        "get_redirects": _outcome(lambda: client.get("/redirect").json()[0]["path"]),
        "get_verify_stream_proxies_cert": _outcome(
            lambda: (
                client.get("/items", verify=False, stream=True, proxies={}, cert=None).status_code
            )
        ),
        "get_cookies": _outcome(lambda: client.get("/items", cookies={"a": "1"}).status_code),
        "post_files": _outcome(lambda: client.post("/items", files={"f": ("a", b"x")}).json()),
        "post_data": _outcome(lambda: client.post("/items", data={"a": "b"}).json()),
        "request_options": _outcome(
            lambda: client.request("/redirect", timeout=3, allow_redirects=False).status_code
        ),
        "paginate_timeout": _outcome(lambda: pages(timeout=5)),
        "paginate_unknown": _outcome(lambda: pages(nonsense=1)),
    }
