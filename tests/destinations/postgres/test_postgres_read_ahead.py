"""The COPY's read-ahead: the next CSV batches are prepared by a thread, nothing else changes."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from loadstone.plugins.destinations.postgres.copy import read_ahead


def test_items_arrive_in_order_and_all_of_them() -> None:
    assert list(read_ahead(iter(range(100)), depth=2)) == list(range(100))


def test_an_error_while_preparing_is_raised_where_the_items_are_used() -> None:
    def failing() -> Iterator[int]:
        yield 1
        raise OSError("damaged Parquet file t/1.parquet")

    got = []
    with pytest.raises(OSError, match="damaged Parquet file"):
        for item in read_ahead(failing()):
            got.append(item)
    assert got == [1]


def test_a_consumer_that_stops_early_stops_the_producer() -> None:
    produced = []

    def endless() -> Iterator[int]:
        n = 0
        while True:
            produced.append(n)
            yield n
            n += 1

    before = threading.active_count()
    items = read_ahead(endless(), depth=2)
    assert next(items) == 0
    items.close()  # a failed COPY leaves the loop: the thread must not run on
    assert threading.active_count() == before
    assert len(produced) <= 4  # the one used, two queued, one waiting to be queued
