"""Paginator options dlt 1.31 refuses when it builds the paginator, refused the same way.

The messages are dlt's, observed by running the same constructor calls under dlt 1.31.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from loadstone.exceptions import PaginatorError
from loadstone.sources.helpers.rest_client.paginators import (
    JSONResponseCursorPaginator,
    OffsetPaginator,
    PageNumberPaginator,
)


@pytest.mark.parametrize(
    ("build", "name"),
    [
        (lambda: PageNumberPaginator(page_param="page", page_body_path="page"), "page"),
        (lambda: OffsetPaginator(limit=5, offset_param="o", offset_body_path="o"), "offset"),
        (lambda: OffsetPaginator(limit=5, limit_param="l", limit_body_path="l"), "limit"),
        (lambda: JSONResponseCursorPaginator(cursor_param="c", cursor_body_path="c"), "cursor"),
    ],
)
def test_a_value_sent_both_in_the_query_and_in_the_body_is_refused(
    build: Callable[[], Any], name: str
) -> None:
    with pytest.raises(PaginatorError) as refused:
        build()
    assert str(refused.value) == (
        f"Either '{name}_param' or '{name}_body_path' must be provided, not both."
    )
    assert isinstance(refused.value, ValueError)  # what a dlt user catches


def test_a_page_in_the_body_alone_leaves_the_query_alone() -> None:
    paginator = PageNumberPaginator(page_body_path="paging.page", total_path=None)
    assert (paginator.param_name, paginator.param_body_path) == (None, "paging.page")


@pytest.mark.parametrize(
    ("build", "maximum"),
    [
        (lambda: PageNumberPaginator(total_path=None, stop_after_empty_page=False), "maximum_page"),
        (
            lambda: OffsetPaginator(limit=5, total_path=None, stop_after_empty_page=False),
            "maximum_offset",
        ),
    ],
)
def test_a_paginator_that_would_never_stop_is_refused(
    build: Callable[[], Any], maximum: str
) -> None:
    with pytest.raises(PaginatorError) as refused:
        build()
    assert str(refused.value) == (
        f"One of `total_path`, `{maximum}`, `has_more_path`, or `stop_after_empty_page` "
        "must be provided."
    )
