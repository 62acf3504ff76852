"""``add_limit`` counts what leaves the resource's pipe, as dlt 1.31's: the items a filter or
the incremental cursor let through, whatever the order the steps were added in. dlt 1.31's
outcomes (differential program p681): three runs of an incremental resource limited to 3 load
rows 0-8, three chunks; before, the second run counted the 3 rows the cursor drops and
loaded nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import loadstone as dlt


def _even(row: dict[str, Any]) -> bool:
    return bool(row["i"] % 2 == 0)


def test_a_filter_added_after_the_limit_runs_before_it() -> None:
    numbers = dlt.resource([{"i": i} for i in range(10)], name="numbers")
    assert [row["i"] for row in numbers.add_limit(3).add_filter(_even)] == [0, 2, 4]


def test_each_run_of_a_limited_incremental_resource_loads_the_next_rows() -> None:
    @dlt.resource(primary_key="i")
    def numbers(cursor: Any = dlt.sources.incremental("i", initial_value=-1)) -> Iterator[Any]:
        yield from ({"i": i} for i in range(10))

    pipe = dlt.pipeline("chunks", destination="duckdb", dataset_name="d")
    counts = []
    for _ in range(3):
        pipe.run(numbers().add_limit(3))
        counts.append(pipe.last_trace.last_normalize_info.row_counts.get("numbers"))
    assert counts == [3, 3, 3]
    with pipe.sql_client() as client:
        assert client.execute_sql("SELECT i FROM numbers ORDER BY i") == [(i,) for i in range(9)]
