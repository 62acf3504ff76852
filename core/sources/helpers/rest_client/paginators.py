"""Paginators: how to ask an API for the next page, as dlt's ``rest_client.paginators``.

A paginator sees each response (``update_state``) and then rewrites the request for the next
page (``update_request``): a page number or offset in the query, a cursor from the body, or a
whole next URL from the body or the ``Link`` header. ``init_request`` sets up the first
request. The classes, their arguments and their stopping rules are dlt 1.31's, so a
paginator written for dlt (a subclass of :class:`BasePaginator`) ports unchanged.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from urllib.parse import urljoin

from requests import Request, Response

from loadstone.exceptions import PaginatorError
from loadstone.sources.helpers.rest_client.jsonpath import find_first, set_value
from loadstone.typing import TDataItem


class BasePaginator(ABC):
    """The contract: ``init_request``, ``update_state``, ``update_request``, ``has_next_page``."""

    def __init__(self) -> None:
        self._has_next_page = True

    @property
    def has_next_page(self) -> bool:
        """False once the last page was seen: the client stops asking."""
        return self._has_next_page

    def init_request(self, request: Request) -> None:  # noqa: B027 - optional hook, as dlt's
        """Set up the first request (a page number or an offset in the query)."""

    @abstractmethod
    def update_state(self, response: Response, data: list[TDataItem] | None = None) -> None:
        """Read where the next page is from ``response`` (and the page's ``data``)."""

    @abstractmethod
    def update_request(self, request: Request) -> None:
        """Point ``request`` at the next page."""

    def fresh(self) -> BasePaginator:
        """A copy at the first page: one configured paginator serves many endpoint calls."""
        return copy.deepcopy(self)

    def __repr__(self) -> str:
        shown = {k: v for k, v in vars(self).items() if not k.startswith("_")}
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in shown.items())})"


class SinglePagePaginator(BasePaginator):
    """The endpoint answers everything at once."""

    def update_state(self, response: Response, data: list[TDataItem] | None = None) -> None:
        self._has_next_page = False

    def update_request(self, request: Request) -> None:
        return


class RangePaginator(BasePaginator):
    """A number in the query (or, with ``param_body_path``, in the JSON body) that moves by
    a step: pages and offsets.

    It stops after an empty page (``stop_after_empty_page``), when the number reaches the
    ``total`` found at ``total_path`` (plus ``base_index``), when it reaches
    ``maximum_value``, or when ``has_more_path`` reads false.
    """

    #: the name of the limit argument, as the refusal of a paginator that never stops says it
    maximum_name = "maximum_value"

    def __init__(
        self,
        param_name: str | None,
        initial_value: int,
        value_step: int,
        base_index: int = 0,
        maximum_value: int | None = None,
        total_path: str | None = None,
        error_message_items: str = "items",
        stop_after_empty_page: bool = True,
        *,
        has_more_path: str | None = None,
        param_body_path: str | None = None,
    ) -> None:
        super().__init__()
        if total_path is None and maximum_value is None and not stop_after_empty_page:
            if has_more_path is None:
                raise PaginatorError(  # dlt 1.31's words: the paginator would never stop
                    f"One of `total_path`, `{self.maximum_name}`, `has_more_path`, or "
                    "`stop_after_empty_page` must be provided."
                )
        self.param_name = param_name
        self.current_value = initial_value
        self.value_step = value_step
        self.base_index = base_index
        self.maximum_value = maximum_value
        self.total_path = total_path
        self.error_message_items = error_message_items
        self.stop_after_empty_page = stop_after_empty_page
        self.has_more_path = has_more_path
        self.param_body_path = param_body_path

    def init_request(self, request: Request) -> None:
        self._put(request, self.param_name, self.param_body_path, self.current_value)

    def update_state(self, response: Response, data: list[TDataItem] | None = None) -> None:
        if self.stop_after_empty_page and not data:
            self._has_next_page = False
            return
        body = _json_or_none(response)
        total = None
        if self.total_path is not None:
            total = find_first(self.total_path, body)
            if total is None:
                raise PaginatorError(
                    f"{type(self).__name__}: total {self.error_message_items} not found at "
                    f"{self.total_path!r} in the response of {response.url}"
                )
        self.current_value += self.value_step
        if total is not None and self.current_value >= int(total) + self.base_index:
            self._has_next_page = False
        if self.maximum_value is not None and self.current_value >= self.maximum_value:
            self._has_next_page = False
        if self.has_more_path is not None and not find_first(self.has_more_path, body):
            self._has_next_page = False

    def update_request(self, request: Request) -> None:
        self._put(request, self.param_name, self.param_body_path, self.current_value)

    @staticmethod
    def _put(request: Request, param: str | None, body_path: str | None, value: int) -> None:
        """``value`` at ``body_path`` of the JSON body when given, else in the query."""
        if body_path is not None:
            put_in_body(request, body_path, value)
        elif param is not None:
            request.params = {**query_of(request), param: value}


class PageNumberPaginator(RangePaginator):
    """``?page=N``, from ``page`` (default: ``base_page``) up; pages below ``maximum_page``."""

    maximum_name = "maximum_page"

    def __init__(
        self,
        base_page: int = 0,
        page: int | None = None,
        page_param: str | None = None,
        total_path: str | None = "total",
        maximum_page: int | None = None,
        stop_after_empty_page: bool = True,
        *,
        has_more_path: str | None = None,
        page_body_path: str | None = None,
    ) -> None:
        """The page goes into ``page_param`` (default ``page``) of the query, or to
        ``page_body_path`` of the JSON body (not both, as dlt refuses)."""
        _one_place("page", page_param, page_body_path)
        super().__init__(
            param_name=page_param or ("page" if page_body_path is None else None),
            initial_value=base_page if page is None else page,
            value_step=1,
            base_index=base_page,
            maximum_value=maximum_page,
            total_path=total_path,
            error_message_items="pages",
            stop_after_empty_page=stop_after_empty_page,
            has_more_path=has_more_path,
            param_body_path=page_body_path,
        )


class OffsetPaginator(RangePaginator):
    """``?offset=N&limit=L``, the offset moving by ``limit``; offsets below ``maximum_offset``."""

    maximum_name = "maximum_offset"

    def __init__(
        self,
        limit: int,
        offset: int = 0,
        offset_param: str | None = None,
        limit_param: str | None = None,
        total_path: str | None = "total",
        maximum_offset: int | None = None,
        stop_after_empty_page: bool = True,
        *,
        has_more_path: str | None = None,
        offset_body_path: str | None = None,
        limit_body_path: str | None = None,
    ) -> None:
        """The offset and limit go into ``offset_param`` / ``limit_param`` of the query
        (defaults ``offset`` / ``limit``), or to their ``*_body_path`` of the JSON body."""
        _one_place("offset", offset_param, offset_body_path)
        _one_place("limit", limit_param, limit_body_path)
        super().__init__(
            param_name=offset_param or ("offset" if offset_body_path is None else None),
            initial_value=offset,
            value_step=limit,
            maximum_value=maximum_offset,
            total_path=total_path,
            error_message_items="items",
            stop_after_empty_page=stop_after_empty_page,
            has_more_path=has_more_path,
            param_body_path=offset_body_path,
        )
        self.limit = limit
        self.limit_param = limit_param or ("limit" if limit_body_path is None else None)
        self.limit_body_path = limit_body_path

    def init_request(self, request: Request) -> None:
        super().init_request(request)
        self._put(request, self.limit_param, self.limit_body_path, self.limit)

    def update_request(self, request: Request) -> None:
        super().update_request(request)
        self._put(request, self.limit_param, self.limit_body_path, self.limit)


class BaseReferencePaginator(BasePaginator):
    """The response names the next page (a URL or a cursor); none means the last page."""

    def __init__(self) -> None:
        super().__init__()
        self._next_reference: TDataItem = None

    def _set_reference(self, reference: TDataItem) -> None:
        self._next_reference = reference
        self._has_next_page = reference not in (None, "")


class BaseNextUrlPaginator(BaseReferencePaginator):
    """The reference is a URL (relative ones are resolved against the current one)."""

    def update_request(self, request: Request) -> None:
        request.url = urljoin(str(request.url), str(self._next_reference))
        request.params = {}  # the next URL carries the whole query


class HeaderLinkPaginator(BaseNextUrlPaginator):
    """The ``Link: <url>; rel="next"`` header (GitHub and many others)."""

    def __init__(self, links_next_key: str = "next") -> None:
        super().__init__()
        self.links_next_key = links_next_key

    def update_state(self, response: Response, data: list[TDataItem] | None = None) -> None:
        self._set_reference(response.links.get(self.links_next_key, {}).get("url"))


class JSONLinkPaginator(BaseNextUrlPaginator):
    """A next URL in the body, at ``next_url_path``."""

    def __init__(self, next_url_path: str = "next") -> None:
        super().__init__()
        self.next_url_path = next_url_path

    def update_state(self, response: Response, data: list[TDataItem] | None = None) -> None:
        self._set_reference(find_first(self.next_url_path, _json_or_none(response)))


class HeaderCursorPaginator(BaseReferencePaginator):
    """A cursor in a response header (``cursor_key``), sent back as the query parameter
    ``cursor_param``; no such header means the last page."""

    def __init__(self, cursor_key: str = "next", cursor_param: str = "cursor") -> None:
        super().__init__()
        self.cursor_key = cursor_key
        self.cursor_param = cursor_param

    def update_state(self, response: Response, data: list[TDataItem] | None = None) -> None:
        self._set_reference(response.headers.get(self.cursor_key))

    def update_request(self, request: Request) -> None:
        request.params = {**query_of(request), self.cursor_param: self._next_reference}


#: dlt's older name of :class:`JSONLinkPaginator`
JSONResponsePaginator = JSONLinkPaginator


class JSONResponseCursorPaginator(BaseReferencePaginator):
    """A cursor in the body at ``cursor_path``, sent back as ``cursor_param`` (or in the JSON
    body at ``cursor_body_path``)."""

    def __init__(
        self,
        cursor_path: str = "cursors.next",
        cursor_param: str | None = None,
        cursor_body_path: str | None = None,
        *,
        stop_after_empty_page: bool = False,
        has_more_path: str | None = None,
    ) -> None:
        """Besides a missing cursor, an empty page stops (``stop_after_empty_page``), and so
        does a false value at ``has_more_path``."""
        super().__init__()
        self.stop_after_empty_page = stop_after_empty_page
        self.has_more_path = has_more_path
        _one_place("cursor", cursor_param, cursor_body_path)
        self.cursor_path = cursor_path
        self.cursor_param = (
            cursor_param if cursor_body_path is not None else cursor_param or "cursor"
        )
        self.cursor_body_path = cursor_body_path

    def update_state(self, response: Response, data: list[TDataItem] | None = None) -> None:
        body = _json_or_none(response)
        self._set_reference(find_first(self.cursor_path, body))
        if self.stop_after_empty_page and not data:
            self._has_next_page = False
        if self.has_more_path is not None and not find_first(self.has_more_path, body):
            self._has_next_page = False

    def update_request(self, request: Request) -> None:
        if self.cursor_body_path is not None:
            put_in_body(request, self.cursor_body_path, self._next_reference)
        else:
            request.params = {**query_of(request), str(self.cursor_param): self._next_reference}


def _one_place(name: str, param: str | None, body_path: str | None) -> None:
    """Refuse a value sent both in the query and in the body (dlt 1.31 refuses it too, with
    this message): which one the server reads would be a guess."""
    if param is not None and body_path is not None:
        raise PaginatorError(
            f"Either '{name}_param' or '{name}_body_path' must be provided, not both."
        )


def put_in_body(request: Request, path: str, value: TDataItem) -> None:
    """``value`` at ``path`` of the request's JSON body (a copy: the config's dict stays)."""
    body: dict[str, TDataItem] = (
        copy.deepcopy(request.json) if isinstance(request.json, dict) else {}
    )
    set_value(path, body, value)
    request.json = body


def query_of(request: Request) -> dict[str, TDataItem]:
    """The request's query parameters as a dict (the client always builds them as one)."""
    params = request.params
    return dict(params) if isinstance(params, dict) else {}


def _json_or_none(response: Response) -> TDataItem:
    try:
        return response.json()
    except ValueError:
        return None
