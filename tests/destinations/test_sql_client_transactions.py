"""``with pipeline.sql_client() as c, c.begin_transaction():`` as in dlt 1.31 (differential
program p636): the block's statements commit together, and none of them when it raises;
on DuckDB and on PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from postgres_support import drop_datasets, unique_dataset

import loadstone as dlt

INSERT = "INSERT INTO t (id, _dlt_load_id, _dlt_id) VALUES (%s, 'x', %s)"


@pytest.fixture(params=["duckdb", "postgres"])
def pipeline(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dlt.Pipeline]:
    dataset = unique_dataset("tx")
    if request.param == "duckdb":
        destination = dlt.destinations.duckdb(str(tmp_path / "tx.duckdb"))
    else:
        url = request.getfixturevalue("postgres_url")
        destination = dlt.destinations.postgres(credentials=url)
    p = dlt.pipeline(
        "tx", destination=destination, dataset_name=dataset, pipelines_dir=str(tmp_path / "pl")
    )
    p.run([{"id": 1}], table_name="t")
    yield p
    if request.param == "postgres":
        drop_datasets(request.getfixturevalue("postgres_url"), dataset)


def _ids(pipeline: dlt.Pipeline) -> list[int]:
    return [i for (i,) in pipeline.dataset().t.select("id").order_by("id").fetchall()]


def test_a_transaction_commits_its_statements(pipeline: dlt.Pipeline) -> None:
    with pipeline.sql_client() as client, client.begin_transaction():
        client.execute_sql(INSERT, 2, "a")
        client.execute_sql(INSERT, 3, "b")
    assert _ids(pipeline) == [1, 2, 3]


def test_a_transaction_that_raises_leaves_nothing(pipeline: dlt.Pipeline) -> None:
    with pipeline.sql_client() as client:
        with pytest.raises(RuntimeError), client.begin_transaction():
            client.execute_sql(INSERT, 2, "a")
            raise RuntimeError("stop")
        client.execute_sql(INSERT, 4, "c")  # the client works on after the rollback
    assert _ids(pipeline) == [1, 4]
