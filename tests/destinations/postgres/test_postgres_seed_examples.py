"""The seed page's examples (``destination-tables.md``) run verbatim into PostgreSQL.

Each example is the one ``test_seed_examples.py`` runs on DuckDB, with only
``destination="duckdb"`` made ``destination="postgres"`` (credentials from the environment,
as a user would set them); nested rows, the merge and its staging schema come out as dlt's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from postgres_support import drop_datasets, rows
from test_seed_examples import (
    CHARLIE_DATA,
    DEV_MODE,
    FIXTURES,
    MERGE,
    NESTED,
    SIMPLE,
    pipeline_part,
    run_block,
)


def _on_postgres(block: str) -> str:
    changed = block.replace("destination='duckdb'", "destination='postgres'")
    changed = changed.replace('destination="duckdb"', 'destination="postgres"')
    assert changed != block, "the example names no duckdb destination"
    return changed


@pytest.fixture
def on_postgres(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("DESTINATION__POSTGRES__CREDENTIALS", postgres_url)
    drop_datasets(postgres_url, "mydata")
    yield postgres_url
    drop_datasets(postgres_url, "mydata")


def test_nested_then_charlie_then_merge_give_dlts_tables(on_postgres: str) -> None:
    expected = json.loads((FIXTURES / "destination_tables_merge_sequence.json").read_text())
    run_block(_on_postgres(NESTED))
    data = run_block(CHARLIE_DATA)["data"]
    charlie: Any = run_block(_on_postgres(pipeline_part(NESTED)), {"data": data})["load_info"]
    merged: Any = run_block(_on_postgres(MERGE))["load_info"]
    staging = rows(
        on_postgres, "SELECT id, name, _dlt_load_id FROM mydata_staging.users ORDER BY id"
    )
    assert [[i, n] for i, n, _ in staging] == expected["mydata_staging.users"]
    assert {load_id for *_, load_id in staging} == set(merged.loads_ids)
    users = rows(on_postgres, "SELECT id, name, _dlt_load_id FROM mydata.users ORDER BY id")
    assert [[i, n] for i, n, _ in users] == expected["mydata.users"]
    assert users[2][2] == charlie.loads_ids[0]
    pets = rows(on_postgres, "SELECT * FROM mydata.users__pets")
    assert sorted(map(list, pets)) == sorted(expected["mydata.users__pets"])
    loads = rows(on_postgres, "SELECT count(*), min(status), max(status) FROM mydata._dlt_loads")
    assert loads == [(3, 0, 0)]


def test_simple_example_creates_users_with_dlts_columns(on_postgres: str) -> None:
    load_info: Any = run_block(_on_postgres(SIMPLE))["load_info"]
    users = rows(on_postgres, "SELECT id, name, _dlt_load_id FROM mydata.users ORDER BY id")
    assert [(i, n) for i, n, _ in users] == [(1, "Alice"), (2, "Bob")]
    assert {load_id for *_, load_id in users} == set(load_info.loads_ids)
    columns = rows(
        on_postgres,
        "SELECT column_name, data_type, is_nullable FROM information_schema.columns "
        "WHERE table_schema = 'mydata' AND table_name = 'users' ORDER BY ordinal_position",
    )
    assert columns == [
        ("id", "bigint", "YES"),
        ("name", "character varying", "YES"),
        ("_dlt_load_id", "character varying", "NO"),
        ("_dlt_id", "character varying", "NO"),
    ]


def test_dev_mode_example_loads_into_a_dataset_with_a_datetime_suffix(on_postgres: str) -> None:
    pipeline: Any = run_block(_on_postgres(DEV_MODE))["pipeline"]
    try:
        assert re.fullmatch(r"mydata_\d{14}", pipeline.dataset_name)
        users = rows(on_postgres, f"SELECT id, name FROM {pipeline.dataset_name}.users ORDER BY id")
        assert users == [(1, "Alice"), (2, "Bob")]
    finally:
        drop_datasets(on_postgres, pipeline.dataset_name)
