"""Relations of ``pipeline.dataset()`` as dlt 1.31's: ``df()`` on DuckDB is DuckDB's own
frame (its column types, recorded from dlt in fixtures/dataset/dlt_df_dtypes.json), and
``order_by`` after ``select`` sorts by any column of the selected table."""

from __future__ import annotations

import datetime as dt
import decimal
import json
from pathlib import Path
from typing import Any

import pytest

import loadstone as dlt

RECORDED = json.loads(
    (
        Path(__file__).resolve().parent.parent / "fixtures" / "dataset" / "dlt_df_dtypes.json"
    ).read_text()
)


@pytest.fixture
def dataset() -> Any:
    rows = [
        {
            "id": i,
            "ts": dt.datetime(2024, 1, 1 + i, tzinfo=dt.timezone.utc),
            "d": dt.date(2024, 2, 1 + i),
            "t": dt.time(1, i),
            "amt": decimal.Decimal(f"{i}.25"),
            "f": i / 3,
            "b": b"xy",
            "flag": True,
            "n": None if i else 5,
        }
        for i in range(3)
    ]
    pipe = dlt.pipeline("relations", destination="duckdb", dataset_name="d")
    pipe.run(rows, table_name="facts", columns={"w": {"data_type": "wei"}})
    return pipe.dataset()


def test_df_on_duckdb_has_duckdbs_column_types(dataset: Any) -> None:
    frame = dataset.facts.order_by("id").df()
    dtypes = {c: str(t) for c, t in frame.dtypes.items() if not c.startswith("_dlt")}
    assert dtypes == RECORDED["dtypes"]
    first = frame.iloc[0]
    assert (first["amt"], first["n"], str(first["d"])) == tuple(
        RECORDED["first_row"][k] for k in ("amt", "n", "d")
    )


def test_iter_df_yields_the_frames_of_df(dataset: Any) -> None:
    frames = list(dataset.facts.iter_df(chunk_size=2))
    assert [len(f) for f in frames] == [3]  # dlt 1.31 on DuckDB: one vector (2048 rows)
    assert [str(f["amt"].dtype) for f in frames] == ["float64"]


def test_order_by_after_select_sorts_by_a_column_not_selected(dataset: Any) -> None:
    rows = dataset.facts.select("f").order_by("id", "desc").limit(2).fetchall()
    assert rows == [(2 / 3,), (1 / 3,)]


def test_a_nanosecond_timestamp_reads_as_a_datetime(tmp_path: Any) -> None:
    """dlt 1.31's rows of a TIMESTAMP_NS column (precision 9) hold ``datetime`` values, as
    DuckDB's own fetch gives them; loadstone's held pandas ``Timestamp`` values
    (differential program p1178)."""
    columns: Any = {"ts": {"data_type": "timestamp", "precision": 9, "timezone": False}}
    pipe = dlt.pipeline(
        "nanos", destination=dlt.destinations.duckdb(str(tmp_path / "n.duckdb")),
        dataset_name="d", pipelines_dir=str(tmp_path / "pl"),
    )  # fmt: skip
    value = dt.datetime(2024, 1, 1, 1, 1, 1, 123456)
    pipe.run(dlt.resource([{"ts": value}], name="t", columns=columns))
    ((read,),) = pipe.dataset().t.select("ts").fetchall()
    assert type(read) is dt.datetime and read == value
