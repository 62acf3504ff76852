"""Typed incremental cursors on PostgreSQL load, run by run, what dlt 1.31 loads.

The programs are tests/sources/sql_incremental_cases.py (10 rows, then 3, 1 and 0 new rows,
per cursor type, backend and incremental option); dlt's outcomes, recorded by
tests/fixtures/sources/record_sql_incremental.py, are in sql_incremental.json: the ids each
run loaded and the cursor state the destination keeps (dlt's marked text for datetimes, dates
and decimals). The cursor's last value is bound as a parameter of the column's type: bound as
text, PostgreSQL refuses ``timestamptz >= character varying``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import loadstone
from loadstone.sources.sql_database import sql_table
from tests.sources.sql_incremental_cases import CASES, run_case

DLT = json.loads(
    (Path(__file__).resolve().parents[1] / "fixtures/sources/sql_incremental.json").read_text()
)


@pytest.mark.oracle
@pytest.mark.parametrize("case", [c for c in CASES if "error" not in DLT[c]])
def test_typed_cursor_loads_run_by_run_as_under_dlt(
    case: str, postgres_url: str, tmp_path: Path
) -> None:
    schema = f"inc_{case}"[:60]
    outcome = run_case(loadstone, sql_table, postgres_url, schema, case, tmp_path)
    assert outcome == DLT[case]


@pytest.mark.oracle
def test_a_row_without_cursor_value_fails_the_run_by_default(
    postgres_url: str, tmp_path: Path
) -> None:
    assert "error" in DLT["timestamptz_missing_raise"]
    with pytest.raises(loadstone.LoadstoneError, match="cursor path 'updated_at'"):
        run_case(
            loadstone, sql_table, postgres_url, "inc_raise", "timestamptz_missing_raise", tmp_path
        )


@pytest.mark.parametrize("table", ["keyed", "unkeyed"])
def test_a_given_primary_key_hashes_rows_as_the_reflected_one(table: str, tmp_path: Path) -> None:
    """``sql_table(primary_key="id")`` deduplicates its cursor's rows by the key as a list, as
    dlt 1.31 does (with or without a reflected key): the state keeps dlt's hash of the row at
    the last value, 'y/yGik6NApHV' (was 'Tp44cKMYfAuJ', the hash of a plain resource's "id";
    differential programs p1029, p1031)."""
    import sqlite3

    db = tmp_path / "src.db"
    with sqlite3.connect(db) as con:
        key = " primary key" if table == "keyed" else ""
        con.execute(f"create table {table} (id integer{key}, upd integer, v text)")
        con.executemany(f"insert into {table} values (?,?,?)", [(2, 60, "changed"), (1, 10, "a")])
    pipe = loadstone.pipeline("hashes", destination="duckdb", pipelines_dir=str(tmp_path / "p"))
    cursor = loadstone.sources.incremental("upd")
    pipe.run(sql_table(f"sqlite:///{db}", table=table, incremental=cursor, primary_key="id"))
    kept = pipe.state["sources"]["hashes"]["resources"][table]["incremental"]["upd"]
    assert kept["unique_hashes"] == ["y/yGik6NApHV"]
