"""``RESTClient``: requests against one API, page after page, as dlt's ``rest_client``.

``paginate(path)`` sends a request, lets the response hooks look at the answer (the
``rest_api`` source's ``response_actions`` are such hooks), selects the records
(``data_selector``, else the guess of :mod:`.detector`), hands the response to the paginator
(the configured one, else the one the first response suggests) and yields the records as a
:class:`PageData`, until the paginator says there is no next page. Every send goes through
:mod:`.retries`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Generic, TypedDict, TypeVar
from urllib.parse import urljoin

import requests
from requests.auth import AuthBase

from loadstone.exceptions import IgnoreResponseException, RESTClientError
from loadstone.sources.helpers.rest_client import detector, retries
from loadstone.sources.helpers.rest_client.auth import AuthConfigBase
from loadstone.sources.helpers.rest_client.jsonpath import find_values
from loadstone.sources.helpers.rest_client.paginators import BasePaginator, SinglePagePaginator
from loadstone.typing import TDataItem

if TYPE_CHECKING:
    from typing_extensions import Unpack

T = TypeVar("T")
#: ``hook(response, *args, **kwargs)``: a new response, or None to keep the one it was given
ResponseHook = Callable[..., "requests.Response | None"]
#: ``{"response": [hook, ...]}``
Hooks = Mapping[str, list[ResponseHook]]


class RequestExtras(TypedDict, total=False):
    """What a request may carry beyond its query, body and auth: headers, a body, and the
    options ``requests`` sends it with (``Session.send``'s, as dlt passes them on; any other
    key fails there with ``requests``' own ``TypeError``)."""

    headers: Mapping[str, str] | None
    #: a form or raw body, as ``requests`` takes it
    data: TDataItem
    #: seconds (or ``(connect, read)``) for this request, over ``runtime.request_timeout``
    timeout: float | tuple[float, float] | None
    allow_redirects: bool
    stream: bool
    verify: bool | str
    proxies: Mapping[str, str]
    cert: str | tuple[str, str] | None


class _Authed(RequestExtras, total=False):
    auth: AuthBase | None


class GetOptions(_Authed, total=False):
    """The keyword arguments of :meth:`RESTClient.get` beside ``params``."""

    json: TDataItem


class PostOptions(_Authed, total=False):
    """The keyword arguments of :meth:`RESTClient.post` beside ``json``."""

    #: query parameters: the user's values, as ``requests`` encodes them
    params: Mapping[str, TDataItem] | None


class RequestOptions(GetOptions, PostOptions, total=False):
    """The keyword arguments of :meth:`RESTClient.request`."""


class PaginateOptions(TypedDict, total=False):
    """The keyword arguments of the module's :func:`paginate` beside ``headers``."""

    params: Mapping[str, TDataItem] | None
    json: TDataItem
    auth: AuthBase | None
    paginator: BasePaginator | None
    data_selector: str | None
    hooks: Hooks | None
    data: TDataItem


class PageData(list[T], Generic[T]):
    """The records of one page, with the request, response, paginator and auth behind them."""

    def __init__(
        self,
        records: list[T],
        request: requests.Request,
        response: requests.Response,
        paginator: BasePaginator,
        auth: AuthBase | None,
    ) -> None:
        super().__init__(records)
        self.request = request
        self.response = response
        self.paginator = paginator
        self.auth = auth


def _send_options(extra: RequestExtras) -> dict[str, object]:
    """The keyword arguments that go to ``Session.send`` (all but the request's parts)."""
    return {key: value for key, value in extra.items() if key not in ("headers", "data")}


class RESTClient:
    """A base URL, default headers, an auth, a default paginator and a records selector."""

    def __init__(
        self,
        base_url: str,
        headers: Mapping[str, str] | None = None,
        auth: AuthBase | None = None,
        paginator: BasePaginator | None = None,
        data_selector: str | None = None,
        session: requests.Session | None = None,
        retry_policy: retries.RetryPolicy | None = None,
    ) -> None:
        self.base_url = base_url
        self.headers = dict(headers or {})
        self.auth = auth
        self.paginator = paginator
        self.data_selector = data_selector
        self.session = session or requests.Session()
        self.retry_policy = retry_policy or retries.RetryPolicy.from_config()

    # -- single requests -------------------------------------------------------------------
    def request(
        self, path: str = "", method: str = "GET", **kwargs: Unpack[RequestOptions]
    ) -> requests.Response:
        """One request (retried: 429 and 5xx), the answer as it is, an error status too (dlt
        1.31's ``get`` returns a 404 for the caller to look at; ``paginate`` raises)."""
        params = kwargs.pop("params", None)
        json = kwargs.pop("json", None)
        auth = kwargs.pop("auth", None)
        request = self._build(path, method, params, json, auth, kwargs)
        return self._send(request, _send_options(kwargs))

    def get(
        self,
        path: str,
        params: Mapping[str, TDataItem] | None = None,
        **kwargs: Unpack[GetOptions],
    ) -> requests.Response:
        return self.request(path, method="GET", params=params, **kwargs)

    def post(
        self, path: str, json: TDataItem = None, **kwargs: Unpack[PostOptions]
    ) -> requests.Response:
        return self.request(path, method="POST", json=json, **kwargs)

    # -- pages -----------------------------------------------------------------------------
    def paginate(
        self,
        path: str = "",
        method: str = "GET",
        params: Mapping[str, TDataItem] | None = None,
        json: TDataItem = None,
        auth: AuthBase | None = None,
        paginator: BasePaginator | None = None,
        data_selector: str | None = None,
        hooks: Hooks | None = None,
        **kwargs: Unpack[RequestExtras],
    ) -> Iterator[PageData[TDataItem]]:
        """The records of ``path``, page by page (see the module docstring)."""
        request = self._build(path, method, params, json, auth, kwargs)
        chosen = paginator or self.paginator
        pages = copy.deepcopy(chosen) if chosen is not None else None
        if pages is not None:
            pages.init_request(request)
        selector = data_selector or self.data_selector
        describe = self._describer(request.auth)
        while True:
            response = self._send(request, _send_options(kwargs))
            try:
                for hook in (hooks or {}).get("response", []):
                    response = hook(response) or response
            except IgnoreResponseException:
                return
            retries.raise_for_status(response, describe)
            document = _json_of(response, describe)
            records = extract_records(document, selector)
            if pages is None:
                pages = detector.detect_paginator(response, document) or SinglePagePaginator()
            pages.update_state(response, records)
            yield PageData(records, copy.copy(request), response, pages, auth or self.auth)
            if not pages.has_next_page:
                return
            pages.update_request(request)

    # -- plumbing --------------------------------------------------------------------------
    def _build(
        self,
        path: str,
        method: str,
        params: Mapping[str, TDataItem] | None,
        json: TDataItem,
        auth: AuthBase | None,
        extra: RequestExtras,
    ) -> requests.Request:
        url = path if path.startswith(("http://", "https://")) else _join(self.base_url, path)
        headers = {**self.headers, **(extra.get("headers") or {})}
        return requests.Request(
            method=method.upper(),
            url=url,
            headers=headers,
            params=dict(params or {}),
            json=json,
            data=extra.get("data"),
            auth=auth or self.auth,
        )

    def _send(self, request: requests.Request, options: Mapping[str, object]) -> requests.Response:
        prepared = self.session.prepare_request(request)
        describe = self._describer(request.auth)
        return retries.send(self.session, prepared, self.retry_policy, describe, options=options)

    @staticmethod
    def _describer(auth: object) -> Callable[[str], str]:
        names = auth.query_param_names() if isinstance(auth, AuthConfigBase) else []
        secrets = auth.secret_values() if isinstance(auth, AuthConfigBase) else []
        return lambda url: retries.masked_url(url, names, secrets)


def _join(base_url: str, path: str) -> str:
    """``https://api/v1`` + ``users`` -> ``https://api/v1/users`` (a leading ``/`` too)."""
    if not base_url:
        return path
    return urljoin(base_url.rstrip("/") + "/", path.lstrip("/"))


def _json_of(response: requests.Response, describe: Callable[[str], str]) -> TDataItem:
    if not response.content:
        return None
    try:
        return response.json()
    except ValueError:
        raise RESTClientError(
            f"{describe(str(response.url))} answered {response.status_code} with a body that "
            "is not JSON"
        ) from None


def extract_records(document: TDataItem, data_selector: str | None) -> list[TDataItem]:
    """The records of one answer: at ``data_selector``, else where dlt would look."""
    if data_selector is None:
        path = detector.find_records_path(document)
        data = document if path is None else find_values(path, document)[0]
    else:
        found = find_values(data_selector, document)
        data = found[0] if len(found) == 1 else found
    if data is None:
        return []
    return list(data) if isinstance(data, list) else [data]


def paginate(
    url: str,
    method: str = "GET",
    headers: Mapping[str, str] | None = None,
    **kwargs: Unpack[PaginateOptions],
) -> Iterator[PageData[TDataItem]]:
    """Pages of one absolute ``url`` without making a client first."""
    return RESTClient(base_url="", headers=headers).paginate(url, method=method, **kwargs)
