"""The page-by-page steps a resource adds to its data: ``add_map``, ``add_filter``,
``add_yield_map``, ``add_limit``, ``select_tables`` (dlt's ``DltResource`` methods).

A mixin of :class:`~loadstone.extract.resource.Resource`: each method appends a step maker
(:mod:`loadstone.extract.resource_pipe`) to the resource's list and returns the resource, so
calls chain as in dlt; the steps run fresh on every extract.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from loadstone.exceptions import CreatePipeException
from loadstone.extract.resource_pipe import (
    PageStep,
    Step,
    is_limit,
    limit_step,
    maybe,
    per_item,
    table_filter,
    yield_map_step,
)

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self is 3.11+

    from loadstone.extract.incremental import Incremental
    from loadstone.typing import TDataItem, TTableHintTemplate

logger = logging.getLogger("loadstone.extract.resource")


class ResourceSteps:
    """The step methods of a resource; the resource holds the list they add to."""

    name: str
    is_transformer: bool
    _steps: list[Step]
    #: where the incremental cursor runs among ``_steps`` (``_steps[:_cursor_at]`` before it);
    #: None: after all of them, where dlt keeps it unless ``insert_at`` puts a step after it
    _cursor_at: int | None
    _table_name: TTableHintTemplate[str] | None

    @property
    def incremental(self) -> Incremental | None:
        raise NotImplementedError  # the resource's

    def _run_steps(self, cursor: PageStep | None) -> list[PageStep]:
        """One run's steps, made fresh, with the cursor's step where dlt's pipe runs it and
        the limits last: dlt 1.31 counts what leaves the pipe, so a limit counts the items a
        filter or the cursor let through (``add_limit(3)`` on an incremental resource loads
        the next 3 new rows each run, not the first 3 rows it yields, then nothing)."""
        made = [(is_limit(make), make()) for make in self._steps]
        if cursor is not None:
            made.insert(len(made) if self._cursor_at is None else self._cursor_at, (False, cursor))
        return [step for _, step in made if not _] + [step for _, step in made if _]

    def add_step(
        self, step: Callable[[TDataItem], TDataItem], insert_at: int | None = None
    ) -> Self:
        """A function of each item that returns the item to keep (dlt's ``add_step`` with a
        plain function: a map; ``None`` drops the item)."""
        return self.add_map(step, insert_at)

    def add_map(self, func: Callable[[TDataItem], TDataItem], insert_at: int | None = None) -> Self:
        """Transform each item (``None`` from ``func`` drops the item)."""
        return self._insert_step(per_item(lambda item: maybe(func(item))), insert_at)

    def add_filter(self, func: Callable[[TDataItem], bool], insert_at: int | None = None) -> Self:
        """Keep only items for which ``func`` is true."""
        return self._insert_step(per_item(lambda item: [item] if func(item) else []), insert_at)

    def add_yield_map(
        self, func: Callable[[TDataItem], TDataItem], insert_at: int | None = None
    ) -> Self:
        """Replace each item by the items ``func`` yields for it (0, 1 or many)."""
        return self._insert_step(yield_map_step(func), insert_at)

    def _insert_step(self, step: Step, insert_at: int | None) -> Self:
        """``insert_at`` is dlt's index in the resource's pipe: 0 is its head (the data, or
        a transformer's function), 1 the first step after it; limits are not counted.
        Only a transformer takes a step before its head: there it goes first after it."""
        if insert_at == 0 and not self.is_transformer:
            raise CreatePipeException(
                self.name, "a step cannot be inserted before the head of a resource that is "
                "not a transformer (insert_at=0); 1 is the first step after the data",
            )  # fmt: skip
        self._put(step, insert_at)
        return self

    def _put(self, step: Step, insert_at: int | None) -> None:
        """Insert ``step`` where dlt's pipe takes it. dlt's incremental cursor is a step of
        the pipe, the last one: an appended step goes before it (a map that changes the cursor
        column is seen by the cursor), an ``insert_at`` past the cursor's index after it."""
        cursor = len(self._steps) if self._cursor_at is None else self._cursor_at
        before = (
            insert_at is None or self.incremental is None or insert_at <= self._pipe_index(cursor)
        )
        if insert_at is None:
            at = cursor
        elif before:
            at = min(self._at(insert_at), cursor)
        else:
            at = max(self._at(insert_at - 1), cursor)  # the cursor holds one index of the pipe
        self._steps.insert(at, step)
        if not before:
            self._cursor_at = cursor
        elif self._cursor_at is not None:
            self._cursor_at = cursor + 1

    def _pipe_index(self, at: int) -> int:
        """dlt's pipe index of the place ``at`` of the step list (the data is 0; limits are
        not steps of dlt's pipe)."""
        return 1 + sum(1 for step in self._steps[:at] if not is_limit(step))

    def _at(self, insert_at: int) -> int:
        """The place in the step list of dlt's pipe index ``insert_at`` (see above)."""
        number = 0
        for at, step in enumerate(self._steps):
            if not is_limit(step):
                number += 1
                if number >= insert_at:
                    return at
        return len(self._steps)

    def add_limit(
        self, max_items: int | None = None, max_time: float | None = None, count_rows: bool = False
    ) -> Self:
        """Stop after ``max_items`` yields of the data (a yielded list is one; with
        ``count_rows`` its rows count) or after ``max_time`` seconds, as dlt's ``add_limit``:
        a quick way to try a pipeline on a sample of a large source."""
        if self.is_transformer:  # dlt: a transformer follows its parent's pages
            logger.warning(
                "add_limit on transformer %s has no effect: set the limit on the resource "
                "it reads from",
                self.name,
            )
            return self
        self._steps.append(limit_step(max_items, max_time, count_rows))
        return self

    def select_tables(self, *table_names: str) -> Self:
        """Keep only the items that go to ``table_names`` (dlt's ``select_tables``)."""
        table_of = self._table_name if callable(self._table_name) else None
        self._steps.append(table_filter(set(table_names), table_of))
        return self
