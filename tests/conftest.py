"""Fixtures shared by the whole suite.

The SparkSession is real and session-scoped: starting Spark costs seconds, so every test that
needs it shares one. Tests never mock Spark, DuckDB or the file system.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared"
CASES = SHARED / "cases"


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    from loadstone.spark_session import get_spark_session

    session = get_spark_session({"spark.master": "local[2]", "spark.sql.shuffle.partitions": "2"})
    yield session
    session.stop()


@pytest.fixture(scope="session")
def cases_dir() -> Path:
    """`../shared/cases`: real captured API data. Missing data is an error, never a skip."""
    if not CASES.is_dir():
        raise RuntimeError(f"shared test data not found at {CASES}; clone beside ../shared")
    return CASES


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test sees no user config: LOADSTONE_HOME and the working directory are its own."""
    home = tmp_path / "_loadstone_home"
    home.mkdir()
    monkeypatch.setenv("LOADSTONE_HOME", str(home))
    work = tmp_path / "_cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    for key in list(__import__("os").environ):
        if key.startswith(("SCHEMA__", "SOURCES__", "NORMALIZE__", "DESTINATION__", "PIPELINES__")):
            monkeypatch.delenv(key, raising=False)
