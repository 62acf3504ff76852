"""Guessing where the records are and how the API pages, from the first response.

dlt 1.31 guesses both when a config names neither; these are its observed rules (run against
the tests' server, recorded in ``tests/fixtures/rest_api/detection_dlt.json``):

records
    a list body is the records; in an object, the first field (in the body's order) named
    like a collection (``data``, ``items``, ``results`` ...) holding a list, else the first
    field holding any list, looked for down to three levels; none: the object itself is
    the one record.
pagination, in this order
    a ``Link: <...>; rel="next"`` header; a next link: a field whose name starts with
    ``next`` (at any depth, ``{"href": ...}`` unwrapped) holding a URL (``http...`` or
    ``/...``); a field whose name says it counts pages (``total_pages``, ``totalPages``,
    ``pages``) at any depth: page numbers from 0, the first (unnumbered) request being
    page 0; a ``next...`` field holding anything else: a cursor sent back as ``?cursor=``;
    else one page.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from requests import Response

from loadstone.sources.helpers.rest_client.paginators import (
    BasePaginator,
    HeaderLinkPaginator,
    JSONLinkPaginator,
    JSONResponseCursorPaginator,
    PageNumberPaginator,
)
from loadstone.typing import TDataItem

#: field names dlt prefers for the records, over any other list
COLLECTION_NAMES = (
    "data",
    "items",
    "results",
    "entries",
    "records",
    "rows",
    "values",
    "objects",
    "payload",
    "content",
)
TOTAL_PAGES_NAMES = ("total_pages", "totalpages", "pages")
MAX_DEPTH = 3


def find_records_path(document: TDataItem) -> str | None:
    """The dotted path of the records in ``document``, or None (the body itself)."""
    if not isinstance(document, Mapping):
        return None
    for depth in range(1, MAX_DEPTH + 1):
        named = [
            p
            for p, v in _fields(document, depth)
            if isinstance(v, list) and p[-1] in COLLECTION_NAMES
        ]
        if named:
            return ".".join(named[0])
    for depth in range(1, MAX_DEPTH + 1):
        lists = [p for p, v in _fields(document, depth) if isinstance(v, list)]
        if lists:
            return ".".join(lists[0])
    return None


def _fields(
    document: Mapping[str, TDataItem], depth: int
) -> Iterator[tuple[tuple[str, ...], TDataItem]]:
    """(path, value) of every field exactly ``depth`` levels down, in document order."""
    for key, value in document.items():
        if depth == 1:
            yield (str(key),), value
        elif isinstance(value, Mapping):
            for path, inner in _fields(value, depth - 1):
                yield (str(key), *path), inner


def _all_fields(document: TDataItem, limit: int = 5) -> Iterator[tuple[tuple[str, ...], TDataItem]]:
    if not isinstance(document, Mapping):
        return
    for depth in range(1, limit + 1):
        yield from _fields(document, depth)


def detect_paginator(response: Response, document: TDataItem) -> BasePaginator | None:
    """The paginator the first ``response`` suggests, or None (a single page)."""
    if response.links.get("next", {}).get("url"):
        return HeaderLinkPaginator()
    path, reference = _next_reference(document)
    if isinstance(reference, str) and reference.startswith(("http://", "https://", "/")):
        return JSONLinkPaginator(next_url_path=".".join(path))
    for total_path, value in _all_fields(document):
        if total_path[-1].lower() in TOTAL_PAGES_NAMES and type(value) is int:
            return PageNumberPaginator(total_path=".".join(total_path))
    if reference is not None:
        return JSONResponseCursorPaginator(cursor_path=".".join(path))
    return None


def _next_reference(document: TDataItem) -> tuple[tuple[str, ...], TDataItem]:
    """The first ``next...`` field with a value (its path and value), or ``((), None)``."""
    for path, value in _all_fields(document):
        if not _names_next(path) or value is None or isinstance(value, (list, bool)):
            continue
        if isinstance(value, Mapping):
            if value.get("href") is None:
                continue
            return (*path, "href"), value["href"]
        return path, value
    return (), None


def _names_next(path: tuple[str, ...]) -> bool:
    return path[-1].lower().startswith("next")
