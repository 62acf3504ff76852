"""A ``None`` inside a yielded list loads as a row of nulls, as dlt 1.31 loads it; a
``None`` yielded alone is skipped, as in dlt (differential program p693: dlt's table held
one row more)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import loadstone as dlt


def test_a_none_in_a_yielded_list_is_a_row_of_nulls_and_a_lone_none_is_skipped() -> None:
    @dlt.resource
    def rows() -> Iterator[Any]:
        yield [{"a": 1}, None]
        yield None
        yield {"a": 2}

    pipe = dlt.pipeline("none_items", destination="duckdb", dataset_name="d")
    pipe.run(rows())
    with pipe.sql_client() as client:
        assert client.execute_sql("SELECT a FROM rows ORDER BY a NULLS LAST") == [
            (1,),
            (2,),
            (None,),
        ]
