"""A pipeline object that meets a dataset which does not exist starts afresh, as dlt 1.31's.

dlt 1.31's outcomes (differential programs p716-p719): ``dlt.pipeline(name, dataset_name=
"two")`` after runs into ``"one"``, the same dataset in another DuckDB file, or the dataset
dropped, loads an incremental resource's whole range again (its cursor and the schema's
tables start over); a dataset that exists keeps the local state, even without its system
tables; ``run(dataset_name=...)`` on the same object keeps it too.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb

import loadstone as dlt


@dlt.resource(primary_key="id")
def events(
    cursor: dlt.sources.incremental = dlt.sources.incremental("id", initial_value=0),
) -> Iterator[dict[str, int]]:
    yield from ({"id": i} for i in range(1, 4))


def _pipeline(tmp_path: Path, dataset: str, database: str = "db.duckdb") -> dlt.Pipeline:
    return dlt.pipeline(
        "fresh",
        destination=dlt.destinations.duckdb(str(tmp_path / database)),
        dataset_name=dataset,
        pipelines_dir=str(tmp_path / "pipelines"),
    )


def _ids(pipeline: dlt.Pipeline) -> list[tuple[int]]:
    return sorted(pipeline.dataset()["events"].select("id").fetchall())


def test_a_new_dataset_name_loads_the_cursors_whole_range(tmp_path: Path) -> None:
    first = _pipeline(tmp_path, "one")
    first.run(events())
    first.run([{"x": 1}], table_name="extra")
    second = _pipeline(tmp_path, "two")
    second.run(events())
    assert _ids(second) == [(1,), (2,), (3,)]
    assert sorted(t["name"] for t in second.default_schema.data_tables()) == ["events"]


def test_the_same_dataset_in_a_new_database_file_starts_afresh(tmp_path: Path) -> None:
    _pipeline(tmp_path, "one").run(events())
    moved = _pipeline(tmp_path, "one", database="other.duckdb")
    moved.run(events())
    assert _ids(moved) == [(1,), (2,), (3,)]


def test_an_existing_dataset_keeps_the_local_state(tmp_path: Path) -> None:
    _pipeline(tmp_path, "one").run(events())
    _pipeline(tmp_path, "two").run(events())
    back = _pipeline(tmp_path, "one")
    back.run(events())  # "one" exists: its cursor goes on, nothing is loaded twice
    assert _ids(back) == [(1,), (2,), (3,)]


def test_run_with_another_dataset_name_on_the_same_object_keeps_the_state(
    tmp_path: Path,
) -> None:
    pipeline = _pipeline(tmp_path, "one")
    pipeline.run(events())
    pipeline.run(events(), dataset_name="two")
    with duckdb.connect(str(tmp_path / "db.duckdb")) as conn:
        loaded = conn.sql(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'two'"
            " AND table_name = 'events'"
        ).fetchall()
        rows = conn.sql("SELECT count(*) FROM two.events").fetchall() if loaded else [(0,)]
    assert rows == [(0,)]
