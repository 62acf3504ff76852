"""``insert_at`` of a resource's step methods is dlt 1.31's index in the resource's pipe:
0 is the data (the pipe's head), 1 the first step after it, and limits are not counted
(recorded: ``tests/fixtures/compat/insert_at_counts_the_pipe_head.json``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import loadstone


def _tag(mark: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda row: {**row, "trail": row.get("trail", "") + mark}


def _two_maps() -> Any:
    return loadstone.resource([{"id": 1}], name="ids").add_map(_tag("a")).add_map(_tag("b"))


@pytest.mark.parametrize(("at", "trail"), [(1, "Xab"), (2, "aXb"), (3, "abX"), (9, "abX")])
def test_insert_at_counts_the_data_as_step_zero(at: int, trail: str) -> None:
    assert [row["trail"] for row in _two_maps().add_map(_tag("X"), insert_at=at)] == [trail]


def test_a_limit_is_not_counted() -> None:
    res = loadstone.resource([{"id": 1}], name="ids").add_limit(1).add_map(_tag("a"))
    assert [row["trail"] for row in res.add_map(_tag("X"), insert_at=1)] == ["Xa"]


def test_nothing_goes_before_the_data_of_a_resource() -> None:
    with pytest.raises(loadstone.CreatePipeException, match="insert_at=0"):
        _two_maps().add_map(_tag("X"), insert_at=0)
