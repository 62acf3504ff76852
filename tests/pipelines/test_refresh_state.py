"""What ``refresh=`` leaves in ``pipeline.state["sources"]``, as dlt 1.31 (differential
programs p627, p855, p856): a source without state gets no entry (``{}``, loadstone held
``{'<pipeline>': {}}``), yet the refresh's empty ``sources`` is kept and versioned;
``drop_sources`` keeps an emptied ``resources`` entry; a first run's refresh adds nothing.
dlt's outcomes are in fixtures/dlt_refresh_state.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import pytest

import loadstone as dlt
from loadstone.typing import TRefreshMode

DLT: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parent.parent / "fixtures" / "dlt_refresh_state.json").read_text()
)
MODES: tuple[TRefreshMode, ...] = get_args(TRefreshMode)


@dlt.resource(write_disposition="append")
def logs(day: int) -> Any:
    yield [{"day": day, "n": i} for i in range(3)]


@dlt.source
def src(write: bool = True) -> Any:
    @dlt.resource
    def a() -> Any:
        if write:
            dlt.current.resource_state()["n"] = 1
            dlt.current.source_state()["k"] = 1
        yield [{"x": 1}]

    return a


def _pipeline(tmp_path: Path, name: str) -> dlt.Pipeline:
    return dlt.pipeline(
        name, destination=dlt.destinations.duckdb(str(tmp_path / f"{name}.duckdb")),
        dataset_name="d", pipelines_dir=str(tmp_path / "pl"),
    )  # fmt: skip


@pytest.mark.parametrize("mode", MODES)
def test_a_resource_without_state_leaves_no_source_entry(
    tmp_path: Path, mode: TRefreshMode
) -> None:
    p = _pipeline(tmp_path, "plain")
    p.run(logs(1))
    p.run(logs(2), refresh=mode)
    p.run(logs(3))
    assert p.state.get("sources") == DLT["plain_resource_after_refresh"][mode]
    with p.sql_client() as client:
        versions = client.execute_sql("SELECT version FROM _dlt_pipeline_state ORDER BY 1")
    assert [v for (v,) in versions] == DLT["plain_resource_state_versions"][mode]


@pytest.mark.parametrize("mode", MODES)
def test_a_source_keeps_what_its_refresh_leaves(tmp_path: Path, mode: TRefreshMode) -> None:
    p = _pipeline(tmp_path, "src")
    p.run(src())
    p.run(src(write=False), refresh=mode)
    assert p.state.get("sources") == DLT["source_with_state_after_refresh"][mode]


@pytest.mark.parametrize("mode", MODES)
def test_a_first_run_refresh_adds_no_sources(tmp_path: Path, mode: TRefreshMode) -> None:
    p = _pipeline(tmp_path, "first")
    p.run([{"q": 1}], table_name="plain", refresh=mode)
    assert p.state.get("sources") == DLT["first_run_with_refresh"][mode]


@dlt.resource
def one() -> Any:
    yield [{"a": 1}]


@dlt.resource
def two() -> Any:
    yield [{"b": 1}]


def test_the_state_goes_with_a_refresh_that_dropped_tables(tmp_path: Path) -> None:
    p = _pipeline(tmp_path, "rows")
    p.run(one())
    runs = [
        lambda: p.run(two(), refresh="drop_resources"),
        lambda: p.run(two(), refresh="drop_resources"),
        lambda: p.run([{"z": 1}], table_name="newtab", refresh="drop_resources"),
        lambda: p.run([{"z": 2}], table_name="newtab", refresh="drop_resources"),
        lambda: p.run(one(), refresh="drop_data"),
    ]
    for run, (what, versions) in zip(runs, DLT["state_rows_by_refresh"], strict=True):
        run()
        with p.sql_client() as client:
            rows = client.execute_sql("SELECT version FROM _dlt_pipeline_state ORDER BY 1")
        assert [v for (v,) in rows] == versions, what
