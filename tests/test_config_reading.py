"""One reading of the configuration per run: files are looked at once, the environment always.

``pipeline.run()`` makes dozens of lookups; within :func:`loadstone.config.one_reading` the
files are read once. What the user changes between two runs still takes effect in the second;
the environment and values set in code take effect at once.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

import loadstone
from loadstone import config

NAMING = '[schema]\nnaming = "{}"\n'


def project(text: str) -> Path:
    folder = Path.cwd() / ".loadstone"
    folder.mkdir(exist_ok=True)
    path = folder / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def ids(database: str) -> list[int]:
    with duckdb.connect(database, read_only=True) as conn:
        return [row[0] for row in conn.execute("SELECT id FROM d.t ORDER BY id").fetchall()]


def test_a_variable_set_between_two_runs_takes_effect(monkeypatch: pytest.MonkeyPatch) -> None:
    pipeline = loadstone.pipeline("between", destination="duckdb", dataset_name="d")
    monkeypatch.setenv("DESTINATION__DUCKDB__CREDENTIALS", "first.duckdb")
    pipeline.run([{"id": 1}], table_name="t")
    monkeypatch.setenv("DESTINATION__DUCKDB__CREDENTIALS", "second.duckdb")
    pipeline.run([{"id": 2}], table_name="t")
    assert (ids("first.duckdb"), ids("second.duckdb")) == ([1], [2])


def test_a_file_edited_between_two_runs_takes_effect() -> None:
    pipeline = loadstone.pipeline("edited", destination="duckdb", dataset_name="d")
    project('[destination.duckdb]\ncredentials = "first.duckdb"\n')
    pipeline.run([{"id": 1}], table_name="t")
    project('[destination.duckdb]\ncredentials = "second.duckdb"\n')
    pipeline.run([{"id": 2}], table_name="t")
    assert (ids("first.duckdb"), ids("second.duckdb")) == ([1], [2])


def test_the_environment_is_read_on_every_lookup_of_a_reading(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project(NAMING.format("direct"))
    with config.one_reading():
        assert config.resolve_naming() == "direct"
        monkeypatch.setenv("SCHEMA__NAMING", "sql_ci_v1")
        assert config.resolve_naming() == "sql_ci_v1"


@pytest.fixture
def _assigned() -> Iterator[None]:
    """Values set in code last for the process: forget them after the test."""
    yield
    config.clear_assigned()


@pytest.mark.usefixtures("_assigned")
def test_a_value_set_in_code_is_seen_within_a_reading() -> None:
    with config.one_reading():
        assert config.get("reading.value", "default") == "default"
        config.assign("reading.value", 7)
        assert config.get("reading.value", "default") == 7


def test_a_file_edited_during_a_reading_is_read_at_the_next() -> None:
    path = project(NAMING.format("direct"))
    with config.one_reading():
        assert config.resolve_naming() == "direct"
        path.write_text(NAMING.format("sql_ci_v1"), encoding="utf-8")
        assert config.resolve_naming() == "direct"
    assert config.resolve_naming() == "sql_ci_v1"


def test_a_reading_within_a_reading_shares_it() -> None:
    path = project(NAMING.format("direct"))
    with config.one_reading():
        assert config.resolve_naming() == "direct"
        path.write_text(NAMING.format("sql_ci_v1"), encoding="utf-8")
        with config.one_reading():
            assert config.resolve_naming() == "direct"
