"""A reflected precision and scale reach the table (issue 39): ``sql_table`` copies of
PostgreSQL and MariaDB ``DECIMAL(38,10)``, ``(12,3)`` and ``(5,0)`` columns load every digit,
as dlt 1.31 (``tests/fixtures/decimals/dlt_decimals.json``), by every backend that keeps
decimals exact; random columns read back digit for digit."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from decimal_cases import PROPERTY, DecimalColumn, decimal_columns, same_digits
from decimal_programs import SOURCE_SQL, SOURCE_TABLE, sql_copy
from hypothesis import given
from hypothesis import strategies as st
from locations import FIXTURES

import loadstone
from tests.sources.mariadb_support import mariadb_database, mariadb_url, setup_engine

__all__ = ["mariadb_database", "mariadb_url"]  # the fixtures, used by name

DLT = json.loads((FIXTURES / "decimals" / "dlt_decimals.json").read_text(encoding="utf-8"))
#: the backends that carry a decimal exactly (dlt's pandas frame holds doubles)
EXACT = [
    (backend, level)
    for backend in ("sqlalchemy", "pyarrow")
    for level in ("minimal", "full", "full_with_precision")
]


def execute(url: str, statements: tuple[str, ...] | list[str]) -> None:
    engine = setup_engine(url)
    with engine.begin() as conn:
        for statement in statements:
            conn.exec_driver_sql(statement)
    engine.dispose()


@pytest.fixture(params=["postgres", "mariadb"])
def source(request: pytest.FixtureRequest) -> tuple[str, str]:
    """(server, SQLAlchemy URL) of a database holding nothing but what the test creates."""
    if request.param == "postgres":
        url = request.getfixturevalue("postgres_url")
        schema = f"s_{uuid.uuid4().hex[:8]}"
        execute(
            url.replace("postgresql://", "postgresql+psycopg://", 1), [f"CREATE SCHEMA {schema}"]
        )
        base = url.replace("postgresql://", "postgresql+psycopg://", 1)
        return "postgres", f"{base}?options=-csearch_path%3D{schema}"
    return "mariadb", request.getfixturevalue("mariadb_database")


@pytest.mark.oracle
@pytest.mark.parametrize(("backend", "level"), EXACT)
def test_a_reflected_decimal_loads_every_digit_as_dlt(
    source: tuple[str, str], backend: str, level: str, tmp_path: Path
) -> None:
    server, url = source
    execute(url, SOURCE_SQL)
    ours = sql_copy(loadstone, tmp_path, url, SOURCE_TABLE, backend, level)
    theirs = DLT[f"sql_{server}"][f"{backend}/{level}"]
    if (backend, level) == ("sqlalchemy", "minimal"):
        # nothing declares a shape: decimal(38,9), where dlt rounds -1E-10 to 0E-9 silently
        assert ours["outcome"] == "ValueDoesNotFit"
        assert theirs["table"]["rows"][1]["x"] == "0E-9"
        return
    assert ours["outcome"] == theirs["outcome"] == "ok"
    assert ours["schema"] == theirs["schema"]
    assert ours["table"]["types"] == theirs["table"]["types"]
    assert ours["table"]["rows"] == theirs["table"]["rows"]


def column_sql(server: str, column: DecimalColumn) -> str:
    return (
        f"NUMERIC({column.precision},{column.scale})"
        if server == "postgres"
        else (f"DECIMAL({column.precision},{column.scale})")
    )


@pytest.mark.parametrize("backend", ["sqlalchemy", "pyarrow"])
@PROPERTY
@given(columns=st.lists(decimal_columns(misfit=False), min_size=1, max_size=3))
def test_random_reflected_decimals_read_back_digit_for_digit(
    source: tuple[str, str], backend: str, tmp_path: Path, columns: list[DecimalColumn]
) -> None:
    server, url = source
    table = f"r_{uuid.uuid4().hex[:8]}"
    width = max(len(c.values) for c in columns)
    declared = ", ".join(f"c{n} {column_sql(server, c)}" for n, c in enumerate(columns))
    rows = []
    for i in range(width):
        # plain digits: MariaDB reads 1E-10 as a DOUBLE literal
        values = [format(c.values[i], "f") if i < len(c.values) else "NULL" for c in columns]
        rows.append(f"({i}, {', '.join(values)})")
    execute(
        url,
        [f"CREATE TABLE {table} (id INT PRIMARY KEY, {declared})",
         f"INSERT INTO {table} VALUES {', '.join(rows)}"],
    )  # fmt: skip
    outcome: Any = sql_copy(loadstone, tmp_path / table, url, table, backend, "full")
    assert outcome["outcome"] == "ok"
    read = outcome["table"]["rows"]
    for n, column in enumerate(columns):
        assert outcome["schema"][f"c{n}"] == {
            "data_type": "decimal", "precision": column.precision, "scale": column.scale
        }  # fmt: skip
        for i, written in enumerate(column.values):
            assert same_digits(written, read[i][f"c{n}"]), (column, written, read[i])
