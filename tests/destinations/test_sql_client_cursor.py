"""``pipeline.sql_client().execute_query(...)`` gives dlt 1.31's cursor on DuckDB: a frame of
DuckDB's types, Arrow of the table's types, chunks that continue where the last read
stopped, and DB-API's description (dlt's outcomes: fixtures/dataset/cursor_frame_dlt.json,
differential program p609)."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
from pathlib import Path

import pandas as pd  # type: ignore[import-untyped,unused-ignore]  # pandas ships no stubs
import pytest

import loadstone as dlt
from loadstone.destinations.query_results import QueryResult

DLT = json.loads(
    (Path(__file__).resolve().parent.parent / "fixtures/dataset/cursor_frame_dlt.json").read_text()
)
QUERY = "SELECT id, d, ts, n, f, b, amt FROM t ORDER BY id"


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory) -> dlt.Pipeline:
    tmp = tmp_path_factory.mktemp("cursor")
    rows = [
        {
            "id": i,
            "amt": decimal.Decimal(f"{i}.50") if i % 2 else None,
            "d": dt.date(2024, 1, 1 + i),
            "ts": dt.datetime(2024, 1, 1, i, tzinfo=dt.timezone.utc),
            "n": None if i == 1 else i * 2,
            "f": i / 4,
            "b": i % 2 == 0,
        }
        for i in range(5)
    ]
    p = dlt.pipeline(
        "cursor", destination=dlt.destinations.duckdb(str(tmp / "c.duckdb")),
        dataset_name="ds", pipelines_dir=str(tmp / "pl"),
    )  # fmt: skip
    p.run(rows, table_name="t")
    return p


def test_a_cursors_frame_has_duckdbs_types_as_dlts(pipeline: dlt.Pipeline) -> None:
    with pipeline.sql_client() as client, client.execute_query(QUERY) as cursor:
        frame = cursor.df()
    assert {name: str(t) for name, t in frame.dtypes.items()} == DLT["dtypes"]
    amounts = [None if math.isnan(v) else v for v in frame["amt"].tolist()]
    assert amounts == DLT["amt"]
    counts = [None if n is None or n is pd.NA else int(n) for n in frame["n"].tolist()]
    assert counts == DLT["n"]


def test_a_cursors_arrow_keeps_the_tables_types(pipeline: dlt.Pipeline) -> None:
    with pipeline.sql_client() as client, client.execute_query("SELECT id, amt FROM t") as cursor:
        table = cursor.arrow()
        assert [str(field.type) for field in table.schema] == DLT["arrow_types"]
        assert all(len(item) == DLT["description_items"] for item in cursor.description)


def test_a_cursor_reads_in_chunks_from_where_it_stopped(pipeline: dlt.Pipeline) -> None:
    with pipeline.sql_client() as client:
        with client.execute_query(QUERY) as cursor:
            assert cursor.fetchone() is not None
            # dlt 1.31 on DuckDB: frames of one vector (2048 rows), whatever chunk_size says
            assert [len(frame) for frame in cursor.iter_df(chunk_size=3)] == [4]
        with client.execute_query(QUERY) as cursor:
            assert [t.num_rows for t in cursor.iter_arrow(chunk_size=2)] == [2, 2, 1]
            assert cursor.fetchall() == []


def test_json_documents_of_a_row_result_read_as_dlts_compact_text() -> None:
    """A destination answering in rows (PostgreSQL) gives JSON values as documents; in Arrow
    and frames they are dlt 1.31's text (differential program p616 on PostgreSQL)."""
    document = {"a": 1, "f": 1.5, "l": [1, "x", {"q": 2}], "z": None, "name": "ção"}
    result = QueryResult(["j"], [(document,), ([3, 2],), (None,)])
    assert result.to_arrow().column("j").to_pylist() == [
        '{"a":1,"f":1.5,"l":[1,"x",{"q":2}],"z":null,"name":"ção"}',
        "[3,2]",
        None,
    ]


def test_fetchmany_reads_one_row_when_no_size_is_given(pipeline: dlt.Pipeline) -> None:
    """dlt 1.31's relations and cursors (differential program p649): DB-API's default."""
    assert len(pipeline.dataset().t.fetchmany()) == 1
    with pipeline.sql_client() as client, client.execute_query(QUERY) as cursor:
        assert len(cursor.fetchmany()) == 1 and len(cursor.fetchmany(10)) == 4


def test_frames_come_in_duckdb_vectors_as_dlts(pipeline: dlt.Pipeline) -> None:
    """dlt 1.31 reads DuckDB's frames a vector (2048 rows) at a time, whatever
    ``chunk_size`` says, and a chunk past the end is None; loadstone cut them at
    ``chunk_size`` rows, and ``Relation.df(chunk_size=)`` was refused (TypeError;
    differential program p1133)."""
    big = "SELECT range AS id FROM range(5000)"
    with pipeline.sql_client() as client:
        with client.execute_query(big) as cursor:
            assert [len(frame) for frame in cursor.iter_df(chunk_size=1)] == [2048, 2048, 904]
        with client.execute_query(QUERY) as cursor:
            first = cursor.df(chunk_size=2)
            assert first is not None and len(first) == 5
            assert cursor.df(chunk_size=2) is None
    relation = pipeline.dataset()(big)  # type: ignore[operator]  # a dataset is callable
    assert [len(frame) for frame in relation.iter_df(chunk_size=1000)] == [2048, 2048, 904]
    assert len(relation.df(chunk_size=10)) == 2048
    assert relation.arrow(chunk_size=10).num_rows == 10
