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


def test_the_transaction_is_the_client_and_the_driver_answers_what_it_lacks(
    pipeline: dlt.Pipeline,
) -> None:
    """dlt 1.31's ``begin_transaction()`` yields the client itself (``tx.execute_sql``), and
    the client hands what it lacks to the driver connection (``tx.rollback()``), after which
    the block's end commits nothing; loadstone yielded an object with neither (differential
    program p1116: AttributeError)."""
    with pipeline.sql_client() as client:
        with client.begin_transaction() as tx:
            assert tx is client
            tx.execute_sql(INSERT, 2, "a")
            tx.rollback()  # the driver's own
        with client.begin_transaction() as tx:
            tx.execute_sql(INSERT, 3, "b")
            tx.rollback_transaction()
        assert callable(client.cursor)
    assert _ids(pipeline) == [1]


def test_a_statement_without_a_result_answers_as_dlts(pipeline: dlt.Pipeline) -> None:
    """dlt 1.31 on PostgreSQL: ``execute_sql`` answers None for a statement without a result
    (an UPDATE, a DDL), ``[]`` for a query without rows, a cursor's ``description`` is None,
    and several statements answer with the last one's rows; DuckDB answers rows (an
    UPDATE's count). loadstone answered ``[]``, ``[]`` and the first statement's rows on
    PostgreSQL (differential program p1105)."""
    postgres = pipeline.destination.destination_name == "postgres"
    with pipeline.sql_client() as client:
        updated = client.execute_sql("UPDATE t SET id = 2")
        assert updated == (None if postgres else [(1,)])
        assert client.execute_sql("SELECT id FROM t WHERE id > 100") == []
        created = client.execute_sql("CREATE TABLE x (a bigint)")
        assert created == (None if postgres else [])
        assert client.execute_sql("SELECT 7; SELECT 8") == [(8,)]
        with client.execute_query("UPDATE t SET id = 3") as cursor:
            assert (cursor.description is None) is postgres
