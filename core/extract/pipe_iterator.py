"""Evaluate a pipe graph as dlt does: each resource once, each page forked to every
transformer that reads it, concurrently where dlt is concurrent.

The iterator keeps a list of *feeds*: a root resource's data, and one per call of a
transformer (its function called with one page of its parent). It reads a page from one feed
at a time (``extract.next_item_mode``: ``round_robin`` takes each in turn, ``fifo`` the newest
first), pushes it through the node's steps (cursor, maps, filters, limit) and hands what
passes to the caller (a selected node) and to each child transformer, which makes a new feed.
Nothing is read twice and nothing is held whole: a page flows through and is dropped.

Concurrency, as in dlt: a ``parallelized`` resource's pages, and its transformer calls, are
read on a pool of ``extract.workers`` threads; ``@defer`` calls run there too; async
generators and coroutines run on one event loop in a thread of their own. At most
``extract.max_parallel_items`` of those are in flight. Pages always come back here: steps,
forks and the caller's writes run on the calling thread, in one place.

A step that stops its pipe (``add_limit`` reached, a cursor out of range in its row order)
closes that node's feeds; a parent that loads nothing and feeds only stopped transformers
stops too. Cursors keep what they saw only when the caller calls :meth:`PipeIterator.commit`
after the whole extract succeeded, so a failing child leaves its parent's cursor where it was.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import inspect
import io
import threading
from collections.abc import AsyncIterator, Callable, Generator, Iterator, Sequence
from typing import Literal, TypeAlias

import attrs

from loadstone import current
from loadstone.exceptions import (
    AuthError,
    FileReadError,
    JSONPathError,
    LoadstoneError,
    PaginatorError,
    ParentFieldMissing,
    PipelineStateNotAvailable,
    ResourceExtractionError,
    RESTClientError,
    SqlDatabaseError,
)
from loadstone.extract.deferred import Deferred
from loadstone.extract.mark import DataItemWithMeta, Meta, unwrap
from loadstone.extract.pipe_graph import PipeGraph, PipeNode, PipeResource, pipe_graph
from loadstone.extract.resource_pipe import (
    BoundPipe,
    YieldMap,
    close_pages,
    flatten,
    iterate_data,
)
from loadstone.extract.saved_state import saved_source_state
from loadstone.extract.settings import ExtractSettings, extract_settings
from loadstone.typing import TDataItem

#: errors the built-in sources raise from a resource's code (a failed request, a table that
#: cannot be read): wrapped as the resource's, as dlt wraps whatever a resource raises
_SOURCE_ERRORS = (
    AuthError,
    FileReadError,
    JSONPathError,
    PaginatorError,
    ParentFieldMissing,
    RESTClientError,
    SqlDatabaseError,
)

#: what the iterator hands its caller: a selected node and one page it yielded
Emitted: TypeAlias = tuple[PipeNode, TDataItem]
#: a finished future's continuation: what its result makes the pipes emit
Continuation: TypeAlias = Callable[["concurrent.futures.Future[TDataItem]"], list[Emitted]]

#: the end of a feed (``next(pages, _END)``; an async generator's StopAsyncIteration)
_END = object()


@attrs.define(eq=False)
class _Run:
    """One node's part of this evaluation: its bound pipe and its children's runs."""

    node: PipeNode
    pipe: BoundPipe
    parent: _Run | None
    children: list[_Run] = attrs.Factory(list)
    #: the children in the order dlt hands them a page
    forks: list[_Run] = attrs.Factory(list)
    done: bool = False
    #: a step stopped the pipe while pages of a yield map were still to come: the pipe
    #: stops when the next page leaves it, as dlt's does
    stopping: bool = False

    @property
    def name(self) -> str:
        return self.node.name


@attrs.define(eq=False)
class _Feed:
    """Pages to read for one run: a root's data or one transformer call's; or (``fork``)
    one page of ``run`` to hand to each of its children, as dlt queues a page's forks."""

    run: _Run
    pages: Iterator[TDataItem] | AsyncIterator[TDataItem]
    kind: Literal["sync", "thread", "async", "fork"]
    #: the mark of the parent page a transformer call got: its pages without a mark of their
    #: own carry it on (dlt hands a page's meta down the pipe: a table name, hints)
    meta: Meta | None = None
    busy: bool = False
    closed: bool = False
    #: the index of the run's step its pages go to first (after a yield map's)
    start: int = 0


class AsResource(current.resource_context):
    """User code of a resource runs here: ``current.resource_name()`` names it and its
    errors are reported as the resource's (with the pipe's name), as dlt does. Entered for
    every page, so it is a plain class."""

    __slots__ = ()

    def __exit__(self, *exc_info: object) -> None:
        super().__exit__()
        error = exc_info[1]
        if isinstance(error, _SOURCE_ERRORS) or (
            isinstance(error, Exception) and not isinstance(error, LoadstoneError)
        ):
            raise ResourceExtractionError(self.name, error) from error


def _named(name: str, func: Callable[[], TDataItem]) -> TDataItem:
    """Run ``func`` (on a pool thread) as resource ``name``'s code."""
    with current.resource_context(name):
        return func()


async def _named_async(name: str, awaitable: object) -> TDataItem:
    with current.resource_context(name):
        return await awaitable  # type: ignore[misc]  # a coroutine or an anext() awaitable


async def _anext_or_end(pages: AsyncIterator[TDataItem]) -> TDataItem:
    try:
        return await pages.__anext__()
    except StopAsyncIteration:
        return _END


class _EventLoop:
    """One event loop on a thread of its own, for the extract's coroutines."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, name="loadstone-extract-async", daemon=True
        )
        self.thread.start()

    def submit(self, awaitable: object) -> concurrent.futures.Future[TDataItem]:
        # the task copies this thread's context: the pipeline and its state stay visible
        return asyncio.run_coroutine_threadsafe(awaitable, self.loop)  # type: ignore[arg-type]  # a coroutine

    def stop(self) -> None:
        async def finish() -> None:
            await self.loop.shutdown_asyncgens()

        with contextlib.suppress(Exception):
            self.submit(finish()).result(timeout=30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()


class PipeIterator:
    """Iterate ``(node, page)`` for every page that leaves a selected node of ``graph``."""

    def __init__(self, graph: PipeGraph, settings: ExtractSettings | None = None) -> None:
        self.graph = graph
        self.settings = settings or extract_settings()
        self._runs: dict[int, _Run] = {}
        self._feeds: list[_Feed] = []
        self._pending: dict[concurrent.futures.Future[TDataItem], Continuation] = {}
        self._turn = 0
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._loop: _EventLoop | None = None

    # -- the loop -------------------------------------------------------------------------
    def __iter__(self) -> Generator[Emitted, None, None]:
        try:
            for node in self.graph.nodes:
                self._bind(node)
            for run in self._runs.values():
                run.forks = [self._runs[id(node)] for node in run.node.forks]
            for node in self.graph.roots:
                yield from self._start(self._runs[id(node)])
            self._feeds.reverse()  # dlt's order: read from the end of the list backwards
            while self._feeds or self._pending:
                feeds = self._feeds
                if len(feeds) == 1 and not self._pending and feeds[0].kind == "sync":
                    yield from self._drain(feeds[0])
                else:
                    yield from self._advance()
        finally:
            self._shutdown()

    def commit(self) -> None:
        """Keep what the cursors saw: call once everything emitted was stored."""
        for run in self._runs.values():
            for step in run.pipe.steps:
                step.commit()

    def _bind(self, node: PipeNode) -> None:
        with AsResource(node.name):
            pipe = node.resource.bind_run()
        parent = None if node.parent is None else self._runs[id(node.parent)]
        run = self._runs[id(node)] = _Run(node, pipe, parent)
        if parent is not None:
            parent.children.append(run)

    def _advance(self) -> list[Emitted]:
        """One unit of progress: finished work first, else one page of one feed, else wait."""
        done = [future for future in self._pending if future.done()]
        if done:
            return [out for future in done for out in self._pending.pop(future)(future)]
        feed = self._choose()
        if feed is None:
            concurrent.futures.wait(list(self._pending), return_when="FIRST_COMPLETED")
            return []
        return self._pull(feed)

    def _drain(self, feed: _Feed) -> Iterator[Emitted]:
        """The one open feed, read in a tight loop until another opens or work goes off
        this thread (the common case: one resource, or a chain with nothing concurrent)."""
        run, pages = feed.run, feed.pages
        assert isinstance(pages, Iterator)
        self._turn = 0  # the turn is on it, as dlt's would be
        plain = not (run.pipe.steps or run.children or feed.meta) and run.node.selected
        with AsResource(run.name):  # once, not per page: the caller's writes see it too
            while True:
                item = next(pages, _END)
                if plain and item is not _END and isinstance(item, (dict, list)):
                    yield run.node, item
                    continue
                yield from self._arrived(feed, item)
                if feed.closed or len(self._feeds) != 1 or self._pending:
                    return

    def _choose(self) -> _Feed | None:
        """The next feed to read: newest first in ``fifo`` mode (and while more feeds are open
        than work may be in flight, so memory stays flat), else each in turn as dlt takes
        them: backwards through the list, new feeds joining at its end, so the order of
        pages (and of a shared table's rows and columns) is dlt's."""
        feeds = self._feeds
        if len(feeds) == 1 and not self._pending:  # the common case: one pipe, no threads
            self._turn = 0
            return feeds[0]
        full = len(self._pending) >= self.settings.max_parallel_items
        cap = self.settings.max_parallel_items
        if self.settings.next_item_mode == "fifo" or len(feeds) - _roots(feeds) >= cap:
            self._turn = len(feeds)  # dlt starts from the newest
        for _ in range(len(feeds)):
            self._turn = (self._turn - 1) % len(feeds)
            if _can_read(feeds[self._turn], full):
                return feeds[self._turn]
        return None

    # -- reading feeds --------------------------------------------------------------------
    def _pull(self, feed: _Feed) -> list[Emitted]:
        run = feed.run
        if feed.kind in _INLINE:
            pages = feed.pages
            assert isinstance(pages, Iterator)
            with AsResource(run.name):
                item = next(pages, _END)
            return self._arrived(feed, item)
        feed.busy = True
        if feed.kind == "thread":
            pages = feed.pages
            assert isinstance(pages, Iterator)
            future = self._on_pool(run, lambda: next(pages, _END))
        else:
            assert isinstance(feed.pages, AsyncIterator)
            future = self._on_loop(run, _anext_or_end(feed.pages))
        self._pending[future] = lambda done: self._arrived(feed, self._result(run, done))
        return []

    def _arrived(self, feed: _Feed, item: TDataItem) -> list[Emitted]:
        """A page (or the end) read from ``feed``."""
        feed.busy = False
        if item is _END or feed.closed:
            self._close(feed)
            return []
        if feed.kind == "fork":
            child, page = item
            return [(feed.run.node, page)] if child is None else self._fork(child, page)
        if feed.start:
            return self._process(feed.run, _marked(item, feed.meta), feed.start)
        return self._item(feed.run, item, feed.meta)

    def _item(self, run: _Run, item: TDataItem, meta: Meta | None = None) -> list[Emitted]:
        """What a feed yielded: a page, or work that makes one (a coroutine, a ``@defer``);
        ``meta`` marks a page that has no mark of its own."""
        if isinstance(item, (dict, list)):  # the common case, first
            return self._process(run, _marked(item, meta))
        if _yields_pages(item):  # a generator yielded: its items are pages too, as in dlt
            return self._open(run, item, meta)
        if inspect.isawaitable(item):
            future = self._on_loop(run, item)
        elif isinstance(item, Deferred):
            future = self._on_pool(run, item)
        else:
            return self._process(run, _marked(item, meta))
        self._pending[future] = lambda done: self._process(
            run, _marked(self._result(run, done), meta)
        )
        return []

    # -- pages through steps and forks ----------------------------------------------------
    def _process(self, run: _Run, page: TDataItem, start: int = 0) -> list[Emitted]:
        """``page`` through the run's steps from ``start``, then to the caller and to every
        child; a yield map's pages become a feed of their own."""
        if run.done:
            return []
        pages = [page]
        steps = run.pipe.steps
        if steps:
            with AsResource(run.name):
                pages = self._through(run, pages, start)
        out: list[Emitted] = []
        for each in pages:
            if run.children:  # the page and its forks queued, as dlt queues them
                self._feeds.append(_Feed(run, _forks(run, each), "fork"))
            elif run.node.selected:
                out.append((run.node, each))
        if steps and (run.stopping or any(step.stopped for step in steps)):
            self._stopped(run, left=bool(pages))
        return out

    def _through(self, run: _Run, pages: list[TDataItem], start: int) -> list[TDataItem]:
        steps = run.pipe.steps
        for index in range(start, len(steps)):
            step = steps[index]
            if isinstance(step, YieldMap):  # dlt reads the map's generator as a new source
                for each in pages:
                    data, _ = unwrap(each)
                    meta = each.meta if isinstance(each, DataItemWithMeta) else None
                    if data is not None:
                        pages_of = step.expand(data)
                        self._feeds.append(_Feed(run, pages_of, "sync", meta, start=index + 1))
                return []
            pages = [out for each in pages for out in step.process(each)]
        return pages

    def _stopped(self, run: _Run, left: bool) -> None:
        """A step stopped ``run``'s pipe: its data closes now; pages of a yield map still
        to come close when the next page leaves the pipe (this one, if it did)."""
        if left or not any(feed.start for feed in _feeds_of(self._feeds, run)):
            self._stop(run)
            return
        run.stopping = True
        for feed in [feed for feed in _feeds_of(self._feeds, run) if not feed.start]:
            self._close(feed)

    def _fork(self, child: _Run, page: TDataItem) -> list[Emitted]:
        """One page of a parent to transformer ``child``: a new feed of its call's pages."""
        data, _ = unwrap(page)
        if child.done or data is None:
            return []
        if child.node.tap:
            return [(child.node, page)]
        meta = page.meta if isinstance(page, DataItemWithMeta) else None
        if child.pipe.parallelized:
            future = self._on_pool(child, lambda: child.pipe.call(data))
            self._pending[future] = lambda done: self._open(child, self._result(child, done), meta)
            return []
        with AsResource(child.name):
            made = child.pipe.call(data)
        if made is None:
            return []
        if inspect.isasyncgen(made) or inspect.iscoroutine(made):
            return self._open(child, made, meta)
        return self._item(child, made, meta)  # a returned list is one page, as in dlt

    def _start(self, run: _Run) -> list[Emitted]:
        """A root's data, called once (on the pool when it is ``parallelized``)."""
        if run.pipe.parallelized:
            future = self._on_pool(run, lambda: run.pipe.call(None))
            self._pending[future] = lambda done: self._open(run, self._result(run, done))
            return []
        with AsResource(run.name):
            made = run.pipe.call(None)
        return self._open(run, made)

    def _open(self, run: _Run, data: TDataItem, meta: Meta | None = None) -> list[Emitted]:
        """A new feed of what a resource's (or one transformer call's) function returned."""
        if inspect.isasyncgen(data):
            self._feeds.append(_Feed(run, data, "async", meta))
        elif inspect.iscoroutine(data) or isinstance(data, Deferred):
            future = (
                self._on_loop(run, data) if inspect.iscoroutine(data) else self._on_pool(run, data)
            )
            self._pending[future] = lambda done: self._open(run, self._result(run, done), meta)
        else:
            threaded = run.pipe.parallelized and inspect.isgenerator(data)
            pages = iterate_data(data)
            self._feeds.append(_Feed(run, pages, "thread" if threaded else "sync", meta))
        if run.done:  # a limit reached while this call was on its way
            for feed in _feeds_of(self._feeds, run):
                self._close(feed)
        return []

    # -- stopping ---------------------------------------------------------------------------
    def _stop(self, run: _Run) -> None:
        """No more pages for ``run``: close its feeds (its children finish the calls they
        have); a parent that loads nothing and feeds nothing else stops too."""
        run.done = True
        for feed in _feeds_of(self._feeds, run):
            self._close(feed)
        parent = run.parent
        if (
            parent is not None
            and not parent.done
            and not parent.node.selected
            and all(child.done for child in parent.children)
        ):
            self._stop(parent)

    def _close(self, feed: _Feed) -> None:
        """Close ``feed`` now, or when the read in flight returns."""
        feed.closed = True
        if feed.busy:
            return
        if feed in self._feeds:
            index = self._feeds.index(feed)
            del self._feeds[index]
            if index < self._turn:  # the turn stays on the feed it was on
                self._turn -= 1
        if isinstance(feed.pages, AsyncIterator):
            if hasattr(feed.pages, "aclose"):
                self._on_loop(feed.run, feed.pages.aclose()).result()
        else:
            with AsResource(feed.run.name):
                close_pages(feed.pages)

    # -- work off this thread -------------------------------------------------------------
    def _on_pool(
        self, run: _Run, func: Callable[[], TDataItem]
    ) -> concurrent.futures.Future[TDataItem]:
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(
                self.settings.workers, thread_name_prefix="loadstone-extract"
            )
        context = contextvars.copy_context()  # the pipeline and its state, as on this thread
        return self._pool.submit(context.run, _named, run.name, func)

    def _on_loop(self, run: _Run, awaitable: object) -> concurrent.futures.Future[TDataItem]:
        if self._loop is None:
            self._loop = _EventLoop()
        return self._loop.submit(_named_async(run.name, awaitable))

    @staticmethod
    def _result(run: _Run, future: concurrent.futures.Future[TDataItem]) -> TDataItem:
        with AsResource(run.name):
            return future.result()

    def _shutdown(self) -> None:
        """Close what is still open (a failed or abandoned run): the users' ``finally``
        blocks run, work in flight is cancelled or waited for, threads end."""
        for future in self._pending:
            future.cancel()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        for feed in list(self._feeds):
            feed.busy = False
            with contextlib.suppress(Exception):
                self._close(feed)
        self._pending.clear()
        if self._loop is not None:
            self._loop.stop()


#: the feeds read on this thread
_INLINE = ("sync", "fork")


def _roots(feeds: list[_Feed]) -> int:
    """How many of ``feeds`` are the data of a root resource: past ``max_parallel_items``
    others dlt reads the newest first."""
    return sum(
        1 for feed in feeds if feed.run.parent is None and feed.kind != "fork" and not feed.start
    )


def _can_read(feed: _Feed, full: bool) -> bool:
    """``feed`` may be read now: not waiting for a read in flight, and not sending more work
    off this thread when ``full``."""
    return not feed.busy and (not full or feed.kind in _INLINE)


def _feeds_of(feeds: list[_Feed], run: _Run) -> list[_Feed]:
    """The feeds of ``run``'s own data (not the pages it already passed to its children)."""
    return [feed for feed in feeds if feed.run is run and feed.kind != "fork"]


def _forks(run: _Run, page: TDataItem) -> Iterator[tuple[_Run | None, TDataItem]]:
    """``page`` for each child of ``run`` in dlt's order; a selected ``run``'s own page
    (``None``) comes after the first of them, where dlt puts it."""
    for number, child in enumerate(run.forks):
        yield child, page
        if number == 0 and run.node.selected:
            yield None, page


def _yields_pages(item: TDataItem) -> bool:
    """``item`` is an iterator of pages (a generator, ``map``, ``iter``): dlt reads it as
    more pages of the same pipe, so ``yield (row(x) for x in page)`` loads its rows. An open
    file is an iterator too, of lines: it stays one value (refused by type, not read)."""
    return isinstance(item, Iterator) and not isinstance(item, io.IOBase)


def _marked(page: TDataItem, meta: Meta | None) -> TDataItem:
    """``page`` with ``meta`` when it has no mark of its own."""
    if meta is None or isinstance(page, DataItemWithMeta):
        return page
    return DataItemWithMeta(meta, page)


def pages_of(resource: PipeResource) -> Iterator[TDataItem]:
    """What ``resource`` yields, page by page, its parents run once to feed it
    (``resource.pages()``); its cursor keeps what it saw once the pages are all read."""
    iterator = PipeIterator(pipe_graph([resource]))
    with _saved_state_of([resource]), contextlib.closing(iter(iterator)) as pages:
        for _, page in pages:
            yield page
    iterator.commit()


def items_of(resources: Sequence[PipeResource]) -> Iterator[TDataItem]:
    """The items of ``resources`` evaluated together, each parent once (``list(source)``)."""
    iterator = PipeIterator(pipe_graph(resources))
    with _saved_state_of(resources), contextlib.closing(iter(iterator)) as pages:
        for _, page in pages:
            data, _ = unwrap(page)
            yield from flatten([data])
    iterator.commit()


def _saved_state_of(resources: Sequence[PipeResource]) -> contextlib.AbstractContextManager[None]:
    """Outside a run, ``current.source_state()`` / ``resource_state()`` in the resources'
    code read a copy of what the active pipeline saved for their source (a standalone
    resource's: the pipeline's own), as dlt's do; nothing they write is kept."""
    if current.running() is not None or not resources:
        return contextlib.nullcontext()
    try:
        state = saved_source_state(getattr(resources[0], "source_name", None))
    except PipelineStateNotAvailable:
        return contextlib.nullcontext()
    return current.source_state_context(state)
