"""The steps of a resource's pipe and the pages its data yields.

A *page* is what one ``yield`` gives: an item, a list of items or a marked item
(:mod:`loadstone.extract.mark`). ``iterate_data`` turns whatever a resource function returned
into pages. A :data:`Step` is what a resource holds for ``add_map``, ``add_filter``,
``add_yield_map``, ``add_limit`` and ``select_tables``: it makes a fresh :class:`PageStep`
for each run (a limit counts per run), and the pipe iterator
(:mod:`loadstone.extract.pipe_iterator`) pushes every page through it, as dlt's pipes do. A
step works page by page, never on the whole stream, so one parent's pages can be forked to
every transformer that reads them without reading the parent twice or holding it whole.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from typing import Protocol

import attrs

from loadstone.extract.arrow_items import is_arrow_item
from loadstone.extract.mark import DataItemWithMeta, TableNameMeta, unwrap
from loadstone.typing import TDataItem


class PageStep:
    """One run of a step: :meth:`process` maps a page to the pages it becomes (none, one or
    many); ``stopped`` turns true when no later page may pass (a limit reached, a cursor out
    of range in its row order): the pipe iterator then closes the data feeding it."""

    stopped: bool = False

    def process(self, page: TDataItem) -> list[TDataItem]:
        raise NotImplementedError

    def commit(self) -> None:
        """The run extracted everything: keep what the step learned (a cursor's last value).
        Never called for a failed run, so state moves only with a completed extract."""


#: A step as a resource holds it: a factory of one run's :class:`PageStep`.
Step = Callable[[], PageStep]


class Cursor(Protocol):
    """A bound incremental cursor, as a pipe filters pages through it."""

    def filter_page(
        self, page: TDataItem, unwrap: Callable[[TDataItem], TDataItem]
    ) -> tuple[list[TDataItem], bool]: ...

    def commit(self) -> None: ...


class CursorStep(PageStep):
    """An incremental cursor as a step of its resource's pipe (the last, unless ``insert_at``
    put a step after it)."""

    def __init__(self, cursor: Cursor) -> None:
        self.cursor = cursor

    def process(self, page: TDataItem) -> list[TDataItem]:
        kept, stops = self.cursor.filter_page(page, unwrap)
        self.stopped = self.stopped or stops
        return kept

    def commit(self) -> None:
        self.cursor.commit()


@attrs.frozen
class BoundPipe:
    """A resource's part of one run: ``call`` makes its data (a transformer's from one page
    of its parent, a resource's from ``None``), ``steps`` are fresh for the run."""

    call: Callable[[TDataItem], TDataItem]
    steps: tuple[PageStep, ...]
    parallelized: bool = False


def maybe(value: TDataItem) -> list[TDataItem]:
    """``[value]``, or ``[]`` for ``None`` (a map returning ``None`` drops the item)."""
    return [] if value is None else [value]


def close_pages(pages: object) -> None:
    """Close a generator of pages early, so the user's ``finally`` blocks run now."""
    close = getattr(pages, "close", None)
    if close is not None:
        close()


class _PerItem(PageStep):
    """``func`` (item -> list of items) applied inside every page, marks kept."""

    def __init__(self, func: Callable[[TDataItem], list[TDataItem]]) -> None:
        self.func = func

    def process(self, page: TDataItem) -> list[TDataItem]:
        data, rewrap = unwrap(page)
        if data is None:
            return [page]
        if isinstance(data, list):
            out = [new for item in data for new in self.func(item)]
            return [rewrap(out)] if out else []
        out = self.func(data)
        if len(out) == 1:
            return [rewrap(out[0])]
        return [rewrap(out)] if out else []


def per_item(func: Callable[[TDataItem], list[TDataItem]]) -> Step:
    """A step applying ``func`` (item -> list of items) inside every page, marks kept."""
    return lambda: _PerItem(func)


class YieldMap(PageStep):
    """dlt's ``add_yield_map``: each item of a page replaced by what ``func`` yields for it.
    The pipe iterator reads :meth:`expand` as a feed of its own, each value a page for the
    steps after this one (as dlt reads the step's generator as a new source); ``process``
    gives them at once, as one page."""

    def __init__(self, func: Callable[[TDataItem], TDataItem]) -> None:
        self.func = func

    def expand(self, data: TDataItem) -> Iterator[TDataItem]:
        """The pages ``data`` (a page without its mark) becomes, one by one."""
        for item in data if isinstance(data, list) else (data,):
            made = self.func(item)
            if made is None:
                continue
            if isinstance(made, Mapping) or is_arrow_item(made):
                yield made
            else:
                yield from made

    def process(self, page: TDataItem) -> list[TDataItem]:
        data, rewrap = unwrap(page)
        if data is None:
            return [page]
        out = [new for made in self.expand(data) for new in flatten([made])]
        return [rewrap(out)] if out else []


def yield_map_step(func: Callable[[TDataItem], TDataItem]) -> Step:
    return lambda: YieldMap(func)


class _Limit(PageStep):
    """dlt's ``add_limit``: stop after ``max_items`` pages (with ``count_rows``, rows) or
    ``max_time`` seconds from the start of the run."""

    def __init__(self, max_items: int | None, max_time: float | None, count_rows: bool) -> None:
        self.max_items, self.max_time, self.count_rows = max_items, max_time, count_rows
        self.started = time.monotonic()
        self.count = 0
        self.stopped = max_items is not None and max_items <= 0

    def process(self, page: TDataItem) -> list[TDataItem]:
        if self.stopped:
            return []
        data, _ = unwrap(page)
        self.count += len(data) if self.count_rows and isinstance(data, list) else 1
        if self.max_items is not None and self.count >= self.max_items:
            self.stopped = True
        if self.max_time is not None and time.monotonic() - self.started >= self.max_time:
            self.stopped = True
        return [page]


@attrs.frozen
class _LimitMaker:
    max_items: int | None
    max_time: float | None
    count_rows: bool

    def __call__(self) -> PageStep:
        return _Limit(self.max_items, self.max_time, self.count_rows)


def limit_step(max_items: int | None, max_time: float | None, count_rows: bool) -> Step:
    """Stop after ``max_items`` yields (a yielded list is one; with ``count_rows`` its rows
    count) or after ``max_time`` seconds: dlt's ``add_limit``."""
    return _LimitMaker(max_items, max_time, count_rows)


def is_limit(step: Step) -> bool:
    """Whether ``step`` is a limit: dlt's step indices (``insert_at``) do not count it."""
    return isinstance(step, _LimitMaker)


class _TableFilter(PageStep):
    """dlt's ``select_tables``: the items going to one of ``names``."""

    def __init__(self, names: Collection[str], table_of: Callable[[TDataItem], str] | None) -> None:
        self.names, self.table_of = names, table_of

    def process(self, page: TDataItem) -> list[TDataItem]:
        data, rewrap = unwrap(page)
        if isinstance(page, DataItemWithMeta) and isinstance(page.meta, TableNameMeta):
            return [page] if page.meta.table_name in self.names else []
        if data is None:
            return [page]
        table_of = self.table_of
        if table_of is None:
            return []
        if isinstance(data, list):
            kept = [item for item in data if table_of(item) in self.names]
            return [rewrap(kept)] if kept else []
        return [page] if table_of(data) in self.names else []


def table_filter(names: Collection[str], table_of: Callable[[TDataItem], str] | None) -> Step:
    """Keep the items going to one of ``names`` (dlt's ``select_tables``): a page marked
    with a table name by its mark, an item by ``table_of`` (a dynamic table name); with a
    static table name nothing unmarked passes, as in dlt. Marks without data pass."""
    return lambda: _TableFilter(names, table_of)


def iterate_data(data: TDataItem) -> Iterator[TDataItem]:
    """The pages of what a resource function returned (one value or many; the pipe iterator
    takes async generators and coroutines before they get here)."""
    if data is None:
        return iter(())
    if isinstance(data, (Mapping, DataItemWithMeta)) or is_arrow_item(data):
        return iter([data])  # an Arrow table or DataFrame is one page, not its columns
    if isinstance(data, (str, bytes)) or not isinstance(data, Iterable):
        return iter([data])
    return iter(data)


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
