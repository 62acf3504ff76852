"""A ``replace`` run empties every root table the resource filled before and gives no rows
this time (a dynamic or marked table name, an old ``table_name``), as dlt 1.31 does: those
tables kept their old rows beside the new load. dlt 1.31's outcomes (differential program
p687 and probe w24): ``r_b`` and ``stat`` empty, the others as below."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import loadstone as dlt


@dlt.resource(table_name=lambda row: "r_" + row["k"], write_disposition="replace")
def routed(kinds: list[str]) -> Iterator[Any]:
    yield from ({"k": k, "i": i, "sub": [{"z": i}]} for i, k in enumerate(kinds))


def _count(pipe: Any, table: str) -> int:
    with pipe.sql_client() as client:
        return int(client.execute_sql(f"SELECT count(*) FROM {table}")[0][0])


def test_a_dynamic_table_the_replace_run_does_not_name_is_emptied() -> None:
    pipe = dlt.pipeline("replace_known", destination="duckdb", dataset_name="d")
    pipe.run(routed(["a", "b"]))
    pipe.run(routed(["a"]))
    assert pipe.last_trace.last_normalize_info.row_counts["r_b"] == 0
    assert [_count(pipe, t) for t in ("r_a", "r_a__sub", "r_b", "r_b__sub")] == [1, 1, 0, 0]


def test_the_old_table_of_a_renamed_replace_resource_is_emptied() -> None:
    @dlt.resource(write_disposition="replace")
    def stat(n: int) -> Iterator[Any]:
        yield from ({"i": i} for i in range(n))

    pipe = dlt.pipeline("replace_renamed", destination="duckdb", dataset_name="d")
    pipe.run(stat(2))
    renamed = stat(1)
    renamed.apply_hints(table_name="stat_new")
    pipe.run(renamed)
    assert [_count(pipe, "stat"), _count(pipe, "stat_new")] == [0, 1]


def test_an_append_run_leaves_the_other_tables() -> None:
    pipe = dlt.pipeline("append_known", destination="duckdb", dataset_name="d")
    pipe.run(routed(["a", "b"]))
    appended = routed(["a"])
    appended.apply_hints(write_disposition="append")
    pipe.run(appended)
    assert [_count(pipe, "r_a"), _count(pipe, "r_b")] == [2, 1]


def test_a_table_records_the_last_resource_that_wrote_it() -> None:
    """dlt 1.31 (probe w12, differential program p672): the ``resource`` of a shared table
    follows its writers, ``a``, ``b``, ``a``, then ``shared`` for a list run; the schema's
    version moves with it (was: the first writer's name kept)."""

    @dlt.resource(table_name="shared")
    def a() -> Iterator[Any]:
        yield {"x": 1}

    @dlt.resource(table_name="shared", write_disposition="append")
    def b() -> Iterator[Any]:
        yield {"x": 2}

    pipe = dlt.pipeline("last_writer", destination="duckdb", dataset_name="d")
    writers = []
    for data in (a(), b(), a(), [{"x": 3}]):
        pipe.run(data, table_name="shared")
        writers.append(pipe.default_schema.tables["shared"]["resource"])
    assert writers == ["a", "b", "a", "shared"]
