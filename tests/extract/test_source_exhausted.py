"""A generator already iterated is refused as dlt 1.31 refuses it (``SourceExhausted``):
the second run of ``resource(gen())`` would load nothing, and under ``replace`` empty the
table. Found by differential program p670."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import loadstone as dlt
from loadstone.exceptions import PipelineStepFailed
from loadstone.extract.exceptions import SourceExhausted


def numbers(n: int) -> Iterator[dict[str, Any]]:
    yield from ({"i": i} for i in range(n))


def test_a_replace_run_of_an_iterated_generator_fails_and_keeps_the_table() -> None:
    pipe = dlt.pipeline("exhausted", destination="duckdb", dataset_name="d")
    res = dlt.resource(numbers(2), name="nums", write_disposition="replace")
    pipe.run(res)
    with pytest.raises(PipelineStepFailed) as failed:
        pipe.run(res)
    assert failed.value.step == "extract"
    assert isinstance(failed.value.__cause__, SourceExhausted)
    assert failed.value.__cause__.resources == ["nums"]
    with pipe.sql_client() as client:
        assert client.execute_sql("SELECT i FROM nums ORDER BY i") == [(0,), (1,)]


def test_a_partly_read_generator_is_exhausted_and_a_generator_function_is_not() -> None:
    gen = numbers(3)

    @dlt.source
    def counted() -> Any:
        return dlt.resource(gen, name="nums"), dlt.resource(numbers, name="fresh")

    src = counted()
    assert not src.exhausted
    next(gen)
    assert src.exhausted
    src.resources["nums"].selected = False
    assert not src.exhausted
