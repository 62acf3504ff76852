"""``sql_table(incremental=incremental("n", lag=3))``: the query reads from the last value
moved back by the lag, so the rows within it load again (dlt 1.31 loads 10, then 6, then 4
rows of this program: the same SQLite table, two rows added before the second run)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import loadstone as dlt
from loadstone.sources.sql_database import sql_table


def test_a_lagged_cursor_reads_the_rows_within_the_lag_again(tmp_path: Path) -> None:
    database = tmp_path / "events.db"
    with sqlite3.connect(database) as conn:
        conn.execute("CREATE TABLE ev (id INTEGER PRIMARY KEY, n INTEGER)")
        conn.executemany("INSERT INTO ev VALUES (?, ?)", [(i, i) for i in range(1, 11)])
    pipe = dlt.pipeline("lagged", destination="duckdb", pipelines_dir=str(tmp_path / "pl"))
    counts = []
    for run in range(3):
        if run == 1:
            with sqlite3.connect(database) as conn:
                conn.executemany("INSERT INTO ev VALUES (?, ?)", [(11, 11), (12, 12)])
        pipe.run(
            sql_table(
                credentials=f"sqlite:///{database}",
                table="ev",
                incremental=dlt.sources.incremental("n", lag=3),
            )
        )
        with pipe.sql_client() as client:
            counts.append(client.execute_sql("SELECT count(*) FROM ev")[0][0])
    assert counts == [10, 16, 20]
