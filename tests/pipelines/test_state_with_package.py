"""State travels with its package (issue 35): the cursor and resource-state changes a package
carries take effect only when it loads; set aside or dropped, it takes them with it and the
next run reads its rows again (dlt 1.31 loses them: ``tests/fixtures/decimals``)."""

from __future__ import annotations

import copy
import json
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import psycopg
from decimal_programs import REFUSED_FIX, REFUSED_SQL, REFUSED_TABLE, refused_value_then_fixed
from hypothesis import given
from hypothesis import strategies as st
from locations import FIXTURES

import loadstone
from loadstone.storage.state_changes import (
    changes_since,
    sources_snapshot,
    take_back,
    write_journal,
)

DLT = json.loads((FIXTURES / "decimals" / "dlt_decimals.json").read_text(encoding="utf-8"))

KEYS = st.sampled_from(["a", "b", "c", "resources", "incremental", "last_value"])
LEAVES = st.one_of(
    st.none(), st.integers(), st.text(max_size=3), st.lists(st.integers(), max_size=2)
)
TREES = st.recursive(LEAVES, lambda inner: st.dictionaries(KEYS, inner, max_size=3), max_leaves=8)
SOURCES = st.dictionaries(KEYS, TREES, max_size=3)


@given(before=SOURCES, after=SOURCES)
def test_taking_back_a_packages_changes_gives_the_state_before_it(
    before: dict[str, Any], after: dict[str, Any]
) -> None:
    state: dict[str, Any] = {"sources": copy.deepcopy(after)}
    changes = changes_since(sources_snapshot({"sources": before}), state)
    take_back(state, reversed(changes))
    assert state["sources"] == before


def test_a_value_changed_again_since_the_package_keeps_its_new_value() -> None:
    state: dict[str, Any] = {"sources": {"s": {"cursor": 10, "other": 1}}}
    changes = changes_since({"s": {"cursor": 5, "other": 0}}, state)
    state["sources"]["s"]["cursor"] = 20  # a later package moved it again
    take_back(state, changes)
    assert state["sources"]["s"] == {"cursor": 20, "other": 0}


def test_a_value_taken_back_in_the_same_process_keeps_its_type() -> None:
    """A cursor's datetime comes back a datetime (package.json holds it as text)."""
    import datetime as dt

    from loadstone.storage.state_changes import carried_changes, record_changes

    at = dt.datetime(2024, 1, 2, tzinfo=dt.timezone.utc)
    state: dict[str, Any] = {"sources": {"s": {"last_value": at}}}
    before = sources_snapshot(state)
    state["sources"]["s"]["last_value"] = at + dt.timedelta(days=1)
    record_changes("1700000000.1", before, state)
    package: Any = type("Package", (), {"load_id": "1700000000.1"})()
    take_back(state, carried_changes(package))
    assert state["sources"]["s"]["last_value"] == at


def numbers(values: list[Any]) -> Any:
    @loadstone.resource(name="numbers", columns={"amount": {"data_type": "decimal"}})
    def resource(cursor: Any = loadstone.sources.incremental("id")) -> Any:
        yield from ({"id": i, "amount": v} for i, v in enumerate(values, start=1))

    return resource


def pipe(tmp_path: Path) -> Any:
    return loadstone.pipeline(
        "withstate",
        destination=loadstone.destinations.duckdb(str(tmp_path / "db.duckdb")),
        dataset_name="ds",
        pipelines_dir=str(tmp_path / "pipelines"),
    )


def cursor(pipeline: Any) -> Any:
    sources = pipeline.state.get("sources") or {}
    for source in sources.values():
        incremental = source.get("resources", {}).get("numbers", {}).get("incremental", {})
        if "id" in incremental:
            return incremental["id"]["last_value"]
    return None


def loaded(pipeline: Any) -> list[int]:
    with pipeline.sql_client() as client:
        return [r[0] for r in client.execute_sql("SELECT id FROM ds.numbers ORDER BY id")]


def test_a_package_set_aside_takes_its_cursor_with_it(tmp_path: Path) -> None:
    values = [Decimal("1.5"), Decimal("1E+40"), Decimal("2.5")]
    first = pipe(tmp_path)
    try:
        first.run(numbers(values))
    except loadstone.exceptions.PipelineStepFailed:
        pass
    assert len(first.failed_packages()) == 1
    assert cursor(pipe(tmp_path)) is None
    values[1] = Decimal("2")
    again = pipe(tmp_path)
    again.run(numbers(values))
    assert loaded(again) == [1, 2, 3]
    assert cursor(again) == 3


def test_drop_pending_packages_takes_their_cursor_with_them(tmp_path: Path) -> None:
    first = pipe(tmp_path)
    first.extract(numbers([Decimal(1), Decimal(2)]))
    assert cursor(first) == 2
    first.drop_pending_packages()
    assert cursor(first) is None
    again = pipe(tmp_path)
    again.run(numbers([Decimal(1), Decimal(2)]))
    assert loaded(again) == [1, 2]


def test_a_taking_back_cut_short_by_a_kill_is_finished_by_the_next_run(tmp_path: Path) -> None:
    first = pipe(tmp_path)
    first.extract(numbers([Decimal(1)]))
    package = first.list_extracted_load_packages()[0]
    meta = json.loads((Path(first.working_dir) / "packages" / package / "package.json").read_text())
    write_journal(Path(first.working_dir), list(reversed(meta["state_changes"])))  # then killed
    again = pipe(tmp_path)
    again.drop_pending_packages()  # the next holder of the lock finishes the journal
    assert cursor(again) is None
    assert not (Path(again.working_dir) / "state_take_back.json").exists()


def test_issue_35_rows_refused_once_are_read_again_once_fixed(
    postgres_url: str, tmp_path: Path
) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        for statement in REFUSED_SQL:
            conn.execute(statement)

    def fix() -> None:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(REFUSED_FIX)

    source = postgres_url.replace("postgresql://", "postgresql+psycopg://", 1)
    ours = refused_value_then_fixed(loadstone, tmp_path, source, REFUSED_TABLE, fix)
    assert ours == [
        {"step": "first run", "outcome": "ValueDoesNotFit", "cursor": None, "rows": 0},
        {
            "step": "after drop-pending-packages",
            "outcome": "ValueDoesNotFit",
            "cursor": None,
            "rows": 0,
        },
        {"step": "after the value is fixed", "outcome": "ok", "cursor": 1000, "rows": 1000},
    ]
    theirs = DLT["refused_value_then_fixed"]
    assert [(s["cursor"], s["rows"]) for s in theirs] == [(1000, 0)] * 3  # dlt loses them


def test_a_package_the_destination_refuses_takes_its_cursor_with_it(
    postgres_url: str, tmp_path: Path
) -> None:
    """PostgreSQL refuses 'toolong' in varchar(3) at load: set aside there, its cursor too."""
    words = ["ok", "toolong"]

    @loadstone.resource(name="numbers", columns={"word": {"data_type": "text", "precision": 3}})
    def resource(cursor: Any = loadstone.sources.incremental("id")) -> Any:
        yield from ({"id": i, "word": w} for i, w in enumerate(words, start=1))

    dataset = f"refused_{uuid.uuid4().hex[:8]}"

    def pg_pipe() -> Any:
        return loadstone.pipeline(
            "pgrefused",
            destination=loadstone.destinations.postgres(postgres_url),
            dataset_name=dataset,
            pipelines_dir=str(tmp_path / "pipelines"),
        )

    first = pg_pipe()
    try:
        first.run(resource())
    except loadstone.exceptions.PipelineStepFailed as failed:
        assert failed.step == "load"
    assert len(first.failed_packages()) == 1
    assert cursor(pg_pipe()) is None
    words[1] = "ok2"
    again = pg_pipe()
    again.run(resource())
    with again.sql_client() as client:
        rows = client.execute_sql(f'SELECT id FROM "{dataset}".numbers ORDER BY id')
    assert [r[0] for r in rows] == [1, 2]
