"""``loadstone.sources.helpers.rest_client``: paging, guessing, auth and retries against the
tests' own HTTP server, compared with what dlt 1.31 did (tests/fixtures/rest_api/)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import rest_api_app as A
from rest_api_app import App
from rest_api_cases import DETECTION_CASES
from rest_api_support import api_fixture  # noqa: F401 - the fixture "api"

from loadstone.exceptions import HTTPStatusError, RequestFailed
from loadstone.sources.helpers.rest_client import RESTClient, paginate
from loadstone.sources.helpers.rest_client.auth import (
    APIKeyAuth,
    BearerTokenAuth,
    HttpBasicAuth,
    OAuth2ClientCredentials,
)
from loadstone.sources.helpers.rest_client.paginators import (
    HeaderLinkPaginator,
    JSONLinkPaginator,
    JSONResponseCursorPaginator,
    OffsetPaginator,
    PageNumberPaginator,
    SinglePagePaginator,
)

FIXTURES = Path(__file__).parent.parent / "fixtures" / "rest_api"


def ids(pages: Any) -> list[int]:
    return [record["id"] for page in pages for record in page]


@pytest.mark.parametrize(
    ("route", "paginator"),
    [
        ("page_number/posts", PageNumberPaginator(base_page=1, total_path="total_pages")),
        ("header_link/posts", HeaderLinkPaginator()),
        ("json_link/posts", JSONLinkPaginator(next_url_path="next")),
        ("offset/posts", OffsetPaginator(limit=3)),
        ("cursor/posts", JSONResponseCursorPaginator(cursor_path="cursors.next")),
    ],
)
def test_every_paginator_reads_all_pages_once(api: App, route: str, paginator: Any) -> None:
    client = RESTClient(base_url=api.url, paginator=paginator)
    assert ids(client.paginate(route)) == list(range(1, 11))
    assert ids(client.paginate(route)) == list(range(1, 11))  # a paginator serves many calls


def test_single_page_paginator_asks_once(api: App) -> None:
    pages = list(
        RESTClient(base_url=api.url).paginate("page_number/posts", paginator=SinglePagePaginator())
    )
    assert ids(pages) == [1, 2, 3] and len(api.requests) == 1


def test_next_links_replace_the_first_requests_query_as_in_dlt(api: App) -> None:
    client = RESTClient(base_url=api.url)
    list(client.paginate("header_link/posts", params={"per_page": 3, "page": 1}))
    assert api.asked("/header_link/posts") == [
        {"per_page": ["3"], "page": ["1"]},
        {"page": ["2"]},
        {"page": ["3"]},
        {"page": ["4"]},
    ]


@pytest.mark.parametrize("index", range(len(DETECTION_CASES)))
def test_records_and_paginator_are_guessed_as_dlt_guesses(index: int) -> None:
    expected = json.loads((FIXTURES / "detection_dlt.json").read_text())[index]
    case = DETECTION_CASES[index]
    with _one_answer(case["body"], case.get("headers", {})) as server:
        pages = list(RESTClient(base_url=server.url).paginate("/x"))
    paginator = pages[0].paginator
    path = next(
        (
            getattr(paginator, a)
            for a in ("next_url_path", "cursor_path", "total_path")
            if hasattr(paginator, a)
        ),
        None,
    )
    assert (type(paginator).__name__, path, list(pages[0]), server.count) == (
        expected["paginator"],
        expected["path"],
        expected["records"],
        expected["requests"],
    )


class _one_answer:
    """A server answering ``body`` (and ``headers``) first, then an empty list."""

    def __init__(self, body: Any, headers: dict[str, str]) -> None:
        self.count = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                """Quiet."""

            def do_GET(self) -> None:
                outer.count += 1
                first = outer.count == 1
                data = json.dumps(body if first else []).encode()
                self.send_response(200)
                for key, value in (headers if first else {}).items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> _one_answer:
        threading.Thread(target=self.server.serve_forever, args=(0.01,), daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize(
    ("route", "auth"),
    [
        ("bearer/posts", BearerTokenAuth(token=A.TOKEN)),
        ("apikey/posts", APIKeyAuth(name="X-API-Key", api_key=A.API_KEY)),
        ("apikeyquery/posts", APIKeyAuth(name="api_key", api_key=A.API_KEY, location="query")),
        ("basic/posts", HttpBasicAuth(A.USER, A.PASSWORD)),
    ],
)
def test_every_auth_kind_is_accepted_and_its_absence_refused(
    api: App, route: str, auth: Any
) -> None:
    assert ids(RESTClient(base_url=api.url, auth=auth).paginate(route)) == list(range(1, 11))
    with pytest.raises(HTTPStatusError, match=r"^401 Unauthorized for GET http://127\.0\.0\.1"):
        list(RESTClient(base_url=api.url).paginate(route))


def test_get_and_post_return_an_error_status_for_the_caller(api: App) -> None:
    """dlt 1.31's ``RESTClient.get`` / ``post`` return a 401, 404 or (retries used up) 503
    as the response (differential program p466); loadstone raised HTTPStatusError, so a
    program checking ``response.status_code`` failed."""
    client = RESTClient(base_url=api.url)
    assert client.get("bearer/posts").status_code == 401
    assert client.post("bearer/posts", json={"a": 1}).status_code == 401
    api.flaky_failures = [503] * 3
    assert client.get("flaky/posts").status_code == 503
    assert len(api.asked("/flaky/posts")) == 3


def test_dlts_exceptions_module_ports_a_hook_that_ignores_a_response(api: App) -> None:
    """``from dlt.sources.helpers.rest_client.exceptions import IgnoreResponseException``
    (dlt 1.31's module, differential program p482) failed with ModuleNotFoundError."""
    from loadstone.sources.helpers.rest_client.exceptions import (
        IgnoreResponseException,
        PaginatorSetupError,
    )

    def ignore_401(response: Any, *args: Any, **kwargs: Any) -> Any:
        if response.status_code == 401:
            raise IgnoreResponseException
        return response

    pages = RESTClient(base_url=api.url).paginate("bearer/posts", hooks={"response": [ignore_401]})
    assert list(pages) == []
    assert issubclass(PaginatorSetupError, ValueError)


def test_oauth2_client_credentials_fetch_a_token_once(api: App) -> None:
    auth = OAuth2ClientCredentials(f"{api.url}/oauth/token", A.CLIENT_ID, A.CLIENT_SECRET)
    client = RESTClient(base_url=api.url, auth=auth)
    assert ids(client.paginate("oauthed/posts")) == list(range(1, 11))
    assert ids(client.paginate("oauthed/posts")) == list(range(1, 11))
    assert [r["path"] for r in api.requests].count("/oauth/token") == 1


def test_a_429_and_a_500_are_retried_and_every_page_read_once(api: App) -> None:
    client = RESTClient(
        base_url=api.url, paginator=PageNumberPaginator(base_page=1, total_path="total_pages")
    )
    assert ids(client.paginate("flaky/posts")) == list(range(1, 11))
    assert [q["page"] for q in api.asked("/flaky/posts")] == [
        ["1"],
        ["1"],
        ["1"],
        ["2"],
        ["3"],
        ["4"],
    ]


def test_used_up_retries_fail_in_one_line_naming_the_url_not_the_key(api: App) -> None:
    api.flaky_failures = [503] * 3
    auth = APIKeyAuth(name="api_key", api_key=A.API_KEY, location="query")
    with pytest.raises(HTTPStatusError) as failed:
        list(RESTClient(base_url=api.url, auth=auth).paginate("flaky/posts"))
    message = str(failed.value)
    assert "\n" not in message and A.API_KEY not in message
    assert f"for GET {api.url}/flaky/posts?api_key=***" in message
    assert len(api.asked("/flaky/posts")) == 3


def test_an_unreachable_server_fails_after_the_attempts_in_one_line(api: App) -> None:
    api.stop()
    with pytest.raises(RequestFailed) as failed:
        list(paginate(f"{api.url}/single/posts", auth=BearerTokenAuth(A.TOKEN)))
    message = str(failed.value)
    assert message == f"GET {api.url}/single/posts failed after 3 attempt(s): connection refused"


def test_paginate_sends_json_bodies_and_selects_records(api: App) -> None:
    pages = RESTClient(base_url=api.url).paginate(
        "search/posts", method="POST", json={"ids": "2,3"}, data_selector="data"
    )
    assert ids(pages) == [2, 3]
