"""The pipe of a resource: what its data yields, page by page, and the steps that change it.

A *page* is what one ``yield`` gives: an item, a list of items or a marked item
(:mod:`loadstone.extract.mark`). ``iterate_data`` turns whatever a resource function returned
(sync or async, one value or many) into pages; a :data:`Step` maps pages to pages
(``add_map``, ``add_filter``, ``add_yield_map``, ``add_limit``) and keeps marks.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import AsyncGenerator, Callable, Collection, Iterable, Iterator, Mapping
from typing import NoReturn

from loadstone.extract.arrow_items import is_arrow_item
from loadstone.extract.mark import DataItemWithMeta, TableNameMeta, unwrap
from loadstone.typing import TDataItem

#: A step of a resource's pipe: pages in, pages out (``add_map``, ``add_limit`` ...).
Step = Callable[[Iterator[TDataItem]], Iterator[TDataItem]]


def maybe(value: TDataItem) -> list[TDataItem]:
    """``[value]``, or ``[]`` for ``None`` (a map returning ``None`` drops the item)."""
    return [] if value is None else [value]


def close_pages(pages: object) -> None:
    """Close a generator of pages early, so the user's ``finally`` blocks run now."""
    close = getattr(pages, "close", None)
    if close is not None:
        close()


def per_item(func: Callable[[TDataItem], list[TDataItem]]) -> Step:
    """A step applying ``func`` (item -> list of items) inside every page, marks kept."""

    def step(pages: Iterator[TDataItem]) -> Iterator[TDataItem]:
        try:
            for page in pages:
                data, rewrap = unwrap(page)
                if data is None:
                    yield page
                elif isinstance(data, list):
                    out = [new for item in data for new in func(item)]
                    if out:
                        yield rewrap(out)
                else:
                    out = func(data)
                    if len(out) == 1:
                        yield rewrap(out[0])
                    elif out:
                        yield rewrap(out)
        finally:
            close_pages(pages)

    return step


def limit_step(max_items: int | None, max_time: float | None, count_rows: bool) -> Step:
    """Stop after ``max_items`` yields (a yielded list is one; with ``count_rows`` its rows
    count) or after ``max_time`` seconds: dlt's ``add_limit``."""

    def limited(pages: Iterator[TDataItem]) -> Iterator[TDataItem]:
        if max_items is not None and max_items <= 0:
            close_pages(pages)
            return
        started = time.monotonic()
        count = 0
        try:
            for page in pages:
                yield page
                data, _ = unwrap(page)
                count += len(data) if count_rows and isinstance(data, list) else 1
                if max_items is not None and count >= max_items:
                    break
                if max_time is not None and time.monotonic() - started >= max_time:
                    break
        finally:
            close_pages(pages)

    return limited


def table_filter(names: Collection[str], table_of: Callable[[TDataItem], str] | None) -> Step:
    """Keep the items going to one of ``names`` (dlt's ``select_tables``): a page marked
    with a table name by its mark, an item by ``table_of`` (a dynamic table name); with a
    static table name nothing unmarked passes, as in dlt. Marks without data pass."""

    def step(pages: Iterator[TDataItem]) -> Iterator[TDataItem]:
        try:
            for page in pages:
                data, rewrap = unwrap(page)
                if isinstance(page, DataItemWithMeta) and isinstance(page.meta, TableNameMeta):
                    if page.meta.table_name in names:
                        yield page
                elif data is None:
                    yield page
                elif table_of is None:
                    continue
                elif isinstance(data, list):
                    kept = [item for item in data if table_of(item) in names]
                    if kept:
                        yield rewrap(kept)
                elif table_of(data) in names:
                    yield page
        finally:
            close_pages(pages)

    return step


def iterate_data(data: TDataItem) -> Iterator[TDataItem]:
    """The pages of what a resource function returned (sync or async, one value or many)."""
    if data is None:
        return iter(())
    if inspect.isasyncgen(data):
        return _sync_async(data)
    if inspect.iscoroutine(data):
        import asyncio  # only async resources need it (importing it cost every run ~6 ms)

        return iterate_data(asyncio.run(data))
    if isinstance(data, (Mapping, DataItemWithMeta)) or is_arrow_item(data):
        return iter([data])  # an Arrow table or DataFrame is one page, not its columns
    if isinstance(data, (str, bytes)) or not isinstance(data, Iterable):
        return iter([data])
    return iter(data)


def _sync_async(agen: AsyncGenerator[TDataItem, NoReturn]) -> Iterator[TDataItem]:
    """Drive an async generator on a private event loop, page by page."""
    import asyncio

    loop = asyncio.new_event_loop()
    try:
        while True:
            try:
                yield loop.run_until_complete(agen.__anext__())
            except StopAsyncIteration:
                break
    finally:
        loop.run_until_complete(agen.aclose())
        loop.close()


def flatten(data: TDataItem) -> Iterator[TDataItem]:
    """Items one by one: a dict is one item; a yielded list (a page) counts as its items."""
    if data is None:
        return
    if isinstance(data, Mapping) or is_arrow_item(data):
        yield data
        return
    for item in data:
        if isinstance(item, list):
            yield from item
        elif item is not None:
            yield item
