"""A small SaaS-like JSON API on loopback, the server the rest_api tests talk to.

It serves the same ten posts (and two comments per post) behind every kind of pagination a
real API uses (page numbers, ``Link`` headers, ``next`` links in the body, offsets, cursors,
one page), behind every kind of auth (bearer, API key in a header or the query, HTTP basic,
OAuth2 client credentials), a ``/flaky`` route that answers 429 once and 500 once, and an
``/events`` route with a ``since`` filter for incremental loading. Every request is recorded
(path, query, headers) so tests can say what the client asked for. Standard library only: the
dlt recording script imports it too.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

PAGE_SIZE = 3
TOKEN = "s3cr3t-token"
API_KEY = "k3y-123"
USER, PASSWORD = "ann", "pa55"
CLIENT_ID, CLIENT_SECRET = "client-1", "client-secret-1"
OAUTH_TOKEN = "oauth-access-9"

Reply = tuple[int, Any, dict[str, str]]


def make_posts() -> list[dict[str, Any]]:
    return [
        {"id": i, "title": f"post {i}", "updated_at": f"2024-01-{i:02d}T00:00:00Z"}
        for i in range(1, 11)
    ]


def make_boards(count: int = 5) -> list[dict[str, Any]]:
    return [
        {"id": i, "name": f"board {i}", "updated_at": f"2024-03-{i:02d}T00:00:00Z"}
        for i in range(1, count + 1)
    ]


def make_events(count: int = 5) -> list[dict[str, Any]]:
    return [
        {"id": i, "kind": "push", "updated_at": f"2024-02-{i:02d}T00:00:00Z"}
        for i in range(1, count + 1)
    ]


class App:
    """The API's data and routes; one instance per test (it is the server's state)."""

    def __init__(self) -> None:
        self.posts = make_posts()
        self.events = make_events()
        self.boards = make_boards()
        #: seconds each request waits before it is answered (the extract benchmark's latency)
        self.latency = 0.0
        #: board children wait here for each other: only requests in flight together pass
        self.rendezvous: threading.Barrier | None = None
        self.requests: list[dict[str, Any]] = []
        self.flaky_failures = [429, 500]
        self.die_after: int | None = None  # /events: drop the connection after N pages
        self.server: ThreadingHTTPServer | None = None
        self.port = 0

    # -- running ---------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> App:
        handler = type("Handler", (_Handler,), {"app": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, args=(0.01,), daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def asked(self, path: str) -> list[dict[str, list[str]]]:
        """The query of every request made to ``path``, in order."""
        return [r["query"] for r in self.requests if r["path"] == path]

    # -- routing ---------------------------------------------------------------------------
    def handle(
        self, method: str, path: str, query: dict[str, list[str]], headers: Any, body: bytes
    ) -> Reply:
        self.requests.append(
            {
                "method": method,
                "path": path,
                "query": query,
                "headers": dict(headers),
                "body": body.decode(errors="replace"),
            }
        )
        one = {k: v[-1] for k, v in query.items()}
        parts = path.strip("/").split("/")
        if self.latency:
            time.sleep(self.latency)
        if parts[0] == "boards" and len(parts) == 3:
            return self.board_children(int(parts[1]), parts[2])
        if parts[0] == "posts" and len(parts) == 3 and parts[2] == "comments":
            post = int(parts[1])
            return 200, [{"id": post * 100 + j, "body": f"c{j} on {post}"} for j in (1, 2)], {}
        if parts[0] == "posts" and len(parts) == 2:
            return 200, {"post": self.posts[int(parts[1]) - 1]}, {}
        route: Callable[..., Reply] | None = getattr(self, "route_" + "_".join(parts), None)
        if route is None:
            return 404, {"error": f"no route {path}"}, {}
        auth = self._check_auth(parts[0], one, headers)
        if auth is not None:
            return auth
        if method == "POST" and parts[0] != "oauth":
            one.update(json.loads(body or b"{}"))
        return route(one, body)

    def _check_auth(self, kind: str, query: dict[str, str], headers: Any) -> Reply | None:
        given = headers.get("Authorization", "")
        wanted = {
            "bearer": given == f"Bearer {TOKEN}",
            "apikey": headers.get("X-API-Key") == API_KEY,
            "apikeyquery": query.get("api_key") == API_KEY,
            "basic": given == "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode(),
            "oauthed": given == f"Bearer {OAUTH_TOKEN}",
        }.get(kind, True)
        return None if wanted else (401, {"error": "unauthorized"}, {})

    def _page(self, number: int) -> list[dict[str, Any]]:
        return self.posts[(number - 1) * PAGE_SIZE : number * PAGE_SIZE]

    def _pages(self) -> int:
        return -(-len(self.posts) // PAGE_SIZE)

    # -- routes: pagination ----------------------------------------------------------------
    def route_page_number_posts(self, q: dict[str, str], _: bytes) -> Reply:
        page = int(q.get("page", 1))
        return 200, {"data": self._page(page), "total_pages": self._pages()}, {}

    def route_header_link_posts(self, q: dict[str, str], _: bytes) -> Reply:
        page = int(q.get("page", 1))
        headers = {}
        if page < self._pages():
            headers["Link"] = f'<{self.url}/header_link/posts?page={page + 1}>; rel="next"'
        return 200, self._page(page), headers

    def route_json_link_posts(self, q: dict[str, str], _: bytes) -> Reply:
        page = int(q.get("page", 1))
        nxt = f"{self.url}/json_link/posts?page={page + 1}" if page < self._pages() else None
        return 200, {"results": self._page(page), "next": nxt}, {}

    def route_offset_posts(self, q: dict[str, str], _: bytes) -> Reply:
        offset, limit = int(q.get("offset", 0)), int(q.get("limit", PAGE_SIZE))
        return 200, {"items": self.posts[offset : offset + limit], "total": len(self.posts)}, {}

    def route_cursor_posts(self, q: dict[str, str], _: bytes) -> Reply:
        start = int(q["cursor"][1:]) if q.get("cursor") else 0
        nxt = f"c{start + PAGE_SIZE}" if start + PAGE_SIZE < len(self.posts) else None
        return 200, {"items": self.posts[start : start + PAGE_SIZE], "cursors": {"next": nxt}}, {}

    def route_header_cursor_posts(self, q: dict[str, str], _: bytes) -> Reply:
        """A list body; the next cursor in the ``next`` and ``X-Next-Cursor`` headers."""
        start = int(q["cursor"][1:]) if q.get("cursor") else 0
        more = start + PAGE_SIZE < len(self.posts)
        headers = {"next": f"c{start + PAGE_SIZE}", "X-Next-Cursor": f"c{start + PAGE_SIZE}"}
        return 200, self.posts[start : start + PAGE_SIZE], headers if more else {}

    def route_has_more_posts(self, q: dict[str, str], _: bytes) -> Reply:
        """A cursor on every page (an empty page at the end) and a ``has_more`` flag."""
        start = int(q["cursor"][1:]) if q.get("cursor") else 0
        more = start + PAGE_SIZE < len(self.posts)
        body = {"items": self.posts[start : start + PAGE_SIZE], "has_more": more}
        return 200, {**body, "cursor": f"c{start + PAGE_SIZE}"}, {}

    def route_nested_posts(self, q: dict[str, str], _: bytes) -> Reply:
        """Posts in two groups, three levels down; the page count and next page deep too."""
        page = int(q.get("page", 1))
        posts = self._page(page)
        groups = [{"kind": "odd", "posts": [p for p in posts if p["id"] % 2]}]
        groups.append({"kind": "even", "posts": [p for p in posts if not p["id"] % 2]})
        links = [{"rel": "self", "href": f"{self.url}/nested/posts?page={page}"}]
        if page < self._pages():
            links.append({"rel": "next", "href": f"{self.url}/nested/posts?page={page + 1}"})
        meta = {"paging": {"total_pages": self._pages()}, "links": links}
        return 200, {"result": {"groups": groups}, "meta": meta}, {}

    def route_single_posts(self, q: dict[str, str], _: bytes) -> Reply:
        return 200, {"data": self.posts}, {}

    def route_search_posts(self, q: dict[str, str], _: bytes) -> Reply:
        wanted = {int(i) for i in str(q.get("ids", "")).split(",") if i}
        return 200, {"data": [p for p in self.posts if p["id"] in wanted]}, {}

    # -- routes: auth ----------------------------------------------------------------------
    def route_bearer_posts(self, q: dict[str, str], b: bytes) -> Reply:
        return self.route_single_posts(q, b)

    route_apikey_posts = route_bearer_posts
    route_apikeyquery_posts = route_bearer_posts
    route_basic_posts = route_bearer_posts
    route_oauthed_posts = route_bearer_posts

    def route_oauth_token(self, q: dict[str, str], body: bytes) -> Reply:
        form = {k: v[-1] for k, v in parse_qs(body.decode()).items()}
        ok = form == {
            "grant_type": "client_credentials",
            "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET,
        }
        if not ok:
            return 401, {"error": "invalid_client", "got": form}, {}
        return 200, {"access_token": OAUTH_TOKEN, "token_type": "bearer", "expires_in": 3600}, {}

    # -- routes: boards, a parent with two children -----------------------------------------
    def route_boards(self, q: dict[str, str], _: bytes) -> Reply:
        """Boards changed since ``since``, two per page."""
        rows = [b for b in self.boards if b["updated_at"] >= q.get("since", "")]
        page = int(q.get("page", 1))
        chunk = rows[(page - 1) * 2 : page * 2]
        return 200, {"data": chunk, "total_pages": max(1, -(-len(rows) // 2))}, {}

    def board_children(self, board: int, kind: str) -> Reply:
        """Three cards and two members per board."""
        if self.rendezvous is not None:
            self.rendezvous.wait()
        if kind == "cards":
            return 200, [{"id": board * 10 + j, "title": f"card {j}"} for j in (1, 2, 3)], {}
        if kind == "members":
            return 200, [{"id": board * 100 + j, "name": f"member {j}"} for j in (1, 2)], {}
        return 404, {"error": f"no route boards/{board}/{kind}"}, {}

    # -- routes: failures and incremental --------------------------------------------------
    def route_flaky_posts(self, q: dict[str, str], b: bytes) -> Reply:
        if self.flaky_failures:
            status = self.flaky_failures.pop(0)
            return status, {"error": "try again"}, {"Retry-After": "0"} if status == 429 else {}
        return self.route_page_number_posts(q, b)

    def route_events(self, q: dict[str, str], _: bytes) -> Reply:
        since = q.get("since", "")
        page = int(q.get("page", 1))
        if self.die_after is not None and page > self.die_after:
            threading.Thread(target=self.stop, daemon=True).start()  # the server dies
            return -1, None, {}  # and this request's connection is dropped
        rows = [e for e in self.events if e["updated_at"] >= since]
        chunk = rows[(page - 1) * 2 : page * 2]
        return 200, {"data": chunk, "total_pages": max(1, -(-len(rows) // 2))}, {}


class _Handler(BaseHTTPRequestHandler):
    app: App

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the tests read ``App.requests`` instead."""

    def _serve(self, method: str) -> None:
        split = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        status, payload, headers = self.app.handle(
            method, split.path, parse_qs(split.query), self.headers, body
        )
        if status < 0:
            self.close_connection = True
            self.connection.shutdown(2)
            return
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")
