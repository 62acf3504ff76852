"""A database file loadstone opens writes smaller row groups, and otherwise behaves as
``duckdb.connect(path)`` does: catalog name, catalogs listed, spill folder, sharing, locks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_duckdb_support import duckdb_destination, request, rows, schema, table

from loadstone.exceptions import DuckDBConnectionError, InvalidRowGroupSize
from loadstone.plugins.destinations.duckdb.row_groups import (
    DEFAULT_ROW_GROUP_SIZE,
    parse_row_group_size,
)
from tests.destinations.schema_support import stored_schema

EVENTS = schema(events=table({"id": {"data_type": "bigint"}}))
#: Three default row groups' worth: enough for full groups of any size tested here.
ROWS = 3 * DEFAULT_ROW_GROUP_SIZE


def _events(folder: Path, count: int = ROWS, load_id: str = "1") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "events.parquet"
    pq.write_table(
        pa.table(
            {
                "id": pa.array(range(count), type=pa.int64()),
                "_dlt_id": pa.array([str(i) for i in range(count)]),
                "_dlt_load_id": pa.array([load_id] * count),
            }
        ),
        path,
    )
    return path


def _load(database: Path, folder: Path, **config: Any) -> list[int]:
    """Load ``ROWS`` events into ``database``; the rows of each row group of the table."""
    with duckdb_destination(database, **config).client(stored_schema(EVENTS), "mydata") as client:
        client.load_package(request(EVENTS, {"events": [_events(folder)]}))
        return _row_group_rows(client.connection, client.qualified("events"))


def _row_group_rows(conn: duckdb.DuckDBPyConnection, qualified_table: str) -> list[int]:
    found = conn.execute(
        "SELECT sum(count) FROM pragma_storage_info(?) WHERE column_path = '[0]' "
        "GROUP BY row_group_id ORDER BY row_group_id",
        [qualified_table],
    ).fetchall()
    return [int(n) for (n,) in found]


def _plain_catalog(database: Path) -> str:
    """The catalog name ``duckdb.connect`` gives a file of this name (in its own folder)."""
    database.parent.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(database)) as conn:
        return str(conn.execute("SELECT current_database()").fetchone()[0])


# --- the size -------------------------------------------------------------------------------


def test_a_load_writes_row_groups_of_the_default_size(tmp_path: Path) -> None:
    groups = _load(tmp_path / "db.duckdb", tmp_path / "in")
    assert max(groups) == DEFAULT_ROW_GROUP_SIZE
    assert sum(groups) == ROWS


def test_a_configured_row_group_size_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DESTINATION__DUCKDB__ROW_GROUP_SIZE", "4096")
    assert max(_load(tmp_path / "db.duckdb", tmp_path / "in")) == 4096


def test_a_row_group_size_given_to_the_factory_wins_over_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DESTINATION__DUCKDB__ROW_GROUP_SIZE", "4096")
    assert max(_load(tmp_path / "db.duckdb", tmp_path / "in", row_group_size=8192)) == 8192


@pytest.mark.parametrize("setting", ["0", "default"])
def test_zero_or_default_leaves_duckdbs_own_row_groups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str
) -> None:
    monkeypatch.setenv("DESTINATION__DUCKDB__ROW_GROUP_SIZE", setting)
    assert max(_load(tmp_path / "db.duckdb", tmp_path / "in")) > DEFAULT_ROW_GROUP_SIZE


@pytest.mark.parametrize(
    ("value", "expected"),
    [(16384, 16384), ("32768", 32768), ("122_880", 122880), (0, None), ("Default", None)],
)
def test_row_group_sizes_are_read_from_numbers_and_text(value: Any, expected: int | None) -> None:
    assert parse_row_group_size(value) == expected


@pytest.mark.parametrize("value", [1000, "10000", -2048, 1.5, "lots", True, None])
def test_a_size_duckdb_refuses_is_refused_by_name(value: Any) -> None:
    with pytest.raises(InvalidRowGroupSize, match=r"destination\.duckdb\.row_group_size"):
        parse_row_group_size(value)


def test_a_bad_configured_size_says_where_it_was_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DESTINATION__DUCKDB__ROW_GROUP_SIZE", "1000")
    with pytest.raises(
        InvalidRowGroupSize,
        match=r"row_group_size = 1000 \(environment variable DESTINATION__DUCKDB__ROW_GROUP_SIZE\)"
        r".*multiple of 2048",
    ):
        duckdb_destination(tmp_path / "db.duckdb").client(stored_schema(EVENTS), "mydata")


# --- everything else as duckdb.connect(path) ---------------------------------------------------


@pytest.mark.parametrize(
    "file_name",
    [
        "shop.duckdb",
        "my-shop.v2.duckdb",
        "with space's.duckdb",
        'double"quote.duckdb',
        "main.duckdb",
        "memory.duckdb",
        "no_extension",
    ],
)
def test_the_catalog_is_named_as_duckdb_connect_names_it(tmp_path: Path, file_name: str) -> None:
    database = tmp_path / "loaded" / file_name
    with duckdb_destination(database).client(stored_schema(EVENTS), "mydata") as client:
        client.load_package(request(EVENTS, {"events": [_events(tmp_path / "in", 10)]}))
        catalog = client.catalog
        assert rows(client, "events", columns="count(*)") == [(10,)]
    assert catalog == _plain_catalog(tmp_path / "plain" / file_name)


def test_the_connection_lists_only_the_files_catalog_as_duckdb_connect_does(
    tmp_path: Path,
) -> None:
    with duckdb_destination(tmp_path / "db.duckdb").client(
        stored_schema(EVENTS), "mydata"
    ) as client:
        listed = client.query("SELECT database_name FROM duckdb_databases() WHERE NOT internal")
    assert listed == [("db",)]


def test_duckdb_spills_next_to_the_file_as_with_duckdb_connect(tmp_path: Path) -> None:
    database = tmp_path / "db.duckdb"
    with duckdb_destination(database).client(stored_schema(EVENTS), "mydata") as client:
        spill = client.query("SELECT current_setting('temp_directory')")
    assert spill == [(f"{database}.tmp",)]


def test_a_file_loaded_this_way_reopens_with_plain_duckdb_connect(tmp_path: Path) -> None:
    database = tmp_path / "db.duckdb"
    _load(database, tmp_path / "in")
    with duckdb.connect(str(database)) as conn:
        assert conn.execute('SELECT count(*) FROM "mydata"."events"').fetchall() == [(ROWS,)]
    assert not Path(f"{database}.wal").exists()


def test_a_file_created_by_plain_duckdb_connect_loads_with_small_row_groups(
    tmp_path: Path,
) -> None:
    database = tmp_path / "db.duckdb"
    with duckdb.connect(str(database)) as conn:
        conn.execute("CREATE TABLE existing AS SELECT 1 AS x")
    assert max(_load(database, tmp_path / "in")) == DEFAULT_ROW_GROUP_SIZE
    with duckdb.connect(str(database)) as conn:
        assert conn.execute("SELECT x FROM existing").fetchall() == [(1,)]


def test_two_clients_of_one_file_in_one_process_share_it(tmp_path: Path) -> None:
    database = tmp_path / "db.duckdb"
    with duckdb_destination(database).client(stored_schema(EVENTS), "mydata") as reader:
        with duckdb_destination(database).client(stored_schema(EVENTS), "mydata") as loader:
            loader.load_package(request(EVENTS, {"events": [_events(tmp_path / "in", 10)]}))
        assert rows(reader, "events", columns="count(*)") == [(10,)]


def test_a_file_held_by_a_plain_connection_of_this_process_still_loads(tmp_path: Path) -> None:
    database = tmp_path / "db.duckdb"
    with duckdb.connect(str(database)) as held:
        with duckdb_destination(database).client(stored_schema(EVENTS), "mydata") as client:
            client.load_package(request(EVENTS, {"events": [_events(tmp_path / "in", 10)]}))
        assert held.execute('SELECT count(*) FROM "mydata"."events"').fetchall() == [(10,)]


def test_a_file_locked_by_another_process_says_so_and_names_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DESTINATION__DUCKDB__LOCK_TIMEOUT", "0.5")  # waited for, then named
    database = tmp_path / "locked.duckdb"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, time; c = duckdb.connect(" + repr(str(database)) + "); "
            "print('ok', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ok"
        with pytest.raises(
            DuckDBConnectionError,
            match=r"locked\.duckdb: IO Error: Could not set lock on file .*has it open; waited",
        ):
            duckdb_destination(database).client(stored_schema(EVENTS), "mydata")
    finally:
        holder.kill()
        holder.wait()
