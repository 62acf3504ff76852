"""A cursor given with ``apply_hints(incremental=...)`` reaches the resource function's
incremental parameter, as in dlt, so the function can push it into its query."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import loadstone
from loadstone.sources import incremental


def _pipeline(tmp_path: Path) -> Any:
    return loadstone.pipeline(
        "param", destination="duckdb", dataset_name="d", pipelines_dir=str(tmp_path / "p")
    )


def test_apply_hints_hands_its_cursor_to_a_parameter_whose_default_is_none(
    tmp_path: Path,
) -> None:
    seen: list[Any] = []

    @loadstone.resource
    def rows(cursor: incremental[int] | None = None) -> Any:
        seen.append(None if cursor is None else cursor.start_value)
        start = 0 if cursor is None or cursor.start_value is None else cursor.start_value
        yield [{"id": n} for n in range(start, 5)]

    res = rows()
    res.apply_hints(incremental=incremental("id", initial_value=3))
    _pipeline(tmp_path).run(res)
    assert seen == [3]


def test_a_cursor_the_call_passes_wins_over_apply_hints(tmp_path: Path) -> None:
    seen: list[Any] = []

    @loadstone.resource
    def rows(cursor: incremental[int] | None = None) -> Any:
        seen.append(cursor.initial_value if cursor is not None else None)
        yield [{"id": n} for n in range(5)]

    res = rows(cursor=incremental("id", initial_value=1))
    res.apply_hints(incremental=incremental("id", initial_value=4))
    _pipeline(tmp_path).run(res)
    assert seen == [1]
