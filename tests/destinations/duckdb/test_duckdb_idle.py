"""Between two runs the database file is closed; the empty DuckDB database may be kept.

Making a DuckDB database costs more CPU than a small run's load, so the last connection of a
file detaches the file and keeps the database idle for the next open of a file (see
``plugins/destinations/duckdb/database_file.py``). Nothing of that may show: the file is
released and complete, and a setting changed by a user does not reach the next run.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb

import loadstone
from loadstone.plugins.destinations.duckdb.database_file import (
    close_database_file,
    open_database_file,
)

COUNT = (
    "import duckdb; conn = duckdb.connect('idle.duckdb'); "
    "print(conn.execute('SELECT count(*) FROM d.t').fetchone()[0])"
)
#: a sort larger than 30 MB of memory: DuckDB spills it into the file's spill folder
SPILL = "SELECT * FROM range(2000000) t(i) ORDER BY i DESC, hash(i)"


def test_after_a_run_another_process_opens_the_file_and_reads_every_row() -> None:
    pipeline = loadstone.pipeline("idle", destination="duckdb", dataset_name="d")
    pipeline.run([{"id": 1}, {"id": 2}], table_name="t")
    done = subprocess.run([sys.executable, "-c", COUNT], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "2"


def test_after_a_run_this_process_opens_the_file_the_plain_way() -> None:
    pipeline = loadstone.pipeline("idle", destination="duckdb", dataset_name="d")
    pipeline.run([{"id": 1}], table_name="t")
    with duckdb.connect("idle.duckdb") as conn:
        conn.execute("INSERT INTO d.t (id, _dlt_load_id, _dlt_id) VALUES (2, 'x', 'y')")
    pipeline.run([{"id": 3}], table_name="t")
    with pipeline.sql_client() as client:
        assert client.execute_sql("SELECT id FROM d.t ORDER BY id") == [(1,), (2,), (3,)]


def test_a_setting_changed_through_sql_client_does_not_reach_the_next_run() -> None:
    pipeline = loadstone.pipeline("idle", destination="duckdb", dataset_name="d")
    pipeline.run([{"id": 1}], table_name="t")
    with pipeline.sql_client() as client:
        default = client.execute_sql("SELECT current_setting('checkpoint_threshold')")
        client.execute_sql("SET checkpoint_threshold = '1GB'")
    pipeline.run([{"id": 2}], table_name="t")
    with pipeline.sql_client() as client:
        assert client.execute_sql("SELECT current_setting('checkpoint_threshold')") == default


def test_a_setting_a_load_changes_is_back_to_its_default_after_the_run() -> None:
    with duckdb.connect() as new:
        default = new.execute("SELECT current_setting('memory_limit')").fetchall()
    pipeline = loadstone.pipeline("idle", destination="duckdb", dataset_name="d")
    pipeline.run([{"id": 1}], table_name="t")
    pipeline.run([{"id": 2}], table_name="t")
    with pipeline.sql_client() as client:
        assert client.execute_sql("SELECT current_setting('memory_limit')") == default


def test_a_run_into_another_file_gets_that_files_name_and_spill_folder() -> None:
    for name in ("first", "second"):
        pipeline = loadstone.pipeline(name, destination="duckdb", dataset_name="d")
        pipeline.run([{"id": 1}], table_name="t")
        with pipeline.sql_client() as client:
            assert client.execute_sql("SELECT current_database()") == [(name,)]
            folder = client.execute_sql("SELECT current_setting('temp_directory')")[0][0]
            assert folder.endswith(f"{name}.duckdb.tmp")


def test_an_idle_database_that_spilled_is_not_given_to_another_file(tmp_path: Path) -> None:
    spilled = open_database_file(str(tmp_path / "a.duckdb"), 122_880)
    spilled.execute("SET memory_limit = '30MB'; SET threads = 1")
    spilled.execute(SPILL).fetchall()
    assert any((tmp_path / "a.duckdb.tmp").iterdir()), "the sort did not spill"
    close_database_file(spilled, reached=False)
    other = open_database_file(str(tmp_path / "b.duckdb"), 122_880)
    try:
        assert other.execute("SELECT current_setting('temp_directory')").fetchone() == (
            str(tmp_path / "b.duckdb.tmp"),
        )
        assert other.execute("SELECT current_database()").fetchone() == ("b",)
    finally:
        close_database_file(other, reached=False)
