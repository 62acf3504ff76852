"""Loaded into PostgreSQL, the shared cases give the tables dlt 1.31 gives: same columns
(``information_schema.columns``: names, order, types, precision, nullability) and same rows.

dlt's side was recorded once into another database of the same kind of server
(``tests/fixtures/postgres/record.py``); bookkeeping ids aside, the comparison is exact.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from postgres_snapshot import snapshot
from postgres_support import connection, dataset_name, drop_datasets, fixture, pipeline

CASES = {"github_events": "events", "github_issues": "issues", "weird_rows": "weird"}
NAMINGS = ("snake_case", "sql_cs_v1")


@pytest.fixture
def datasets(postgres_url: str) -> Iterator[list[str]]:
    made: list[str] = []
    yield made
    drop_datasets(postgres_url, *made)


@pytest.mark.oracle
@pytest.mark.parametrize("naming", NAMINGS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_shared_case_gives_dlts_columns_and_rows(
    postgres_url: str, cases_dir: Path, tmp_path: Path, datasets: list[str], case: str, naming: str
) -> None:
    dataset = dataset_name(case, naming)
    drop_datasets(postgres_url, dataset)
    datasets.append(dataset)
    data = json.loads((cases_dir / f"{case}.json").read_text(encoding="utf-8"))
    pipeline(postgres_url, dataset, tmp_path, naming).run(data, table_name=CASES[case])
    expected = fixture(case, naming)
    with connection(postgres_url) as conn:
        got = snapshot(conn, dataset)
    assert got["columns"] == expected["columns"]
    assert got["rows"] == expected["rows"]


@pytest.mark.oracle
@pytest.mark.parametrize("naming", NAMINGS)
def test_every_data_type_hint_and_long_name_as_dlt_makes_them(
    postgres_url: str, tmp_path: Path, datasets: list[str], naming: str
) -> None:
    """Types (decimal, wei, json, binary, date, time, timestamp precision and time zone, text
    length, small ints), nullability, a 63-character name, ``MixedCase`` beside ``mixedcase``."""
    expected = fixture("types", naming)
    spec = expected["input"]
    dataset = dataset_name("types", naming)
    drop_datasets(postgres_url, dataset)
    datasets.append(dataset)
    pipeline(postgres_url, dataset, tmp_path, naming).run(
        spec["data"],
        table_name=spec["table"],
        columns=spec["columns"],
        write_disposition=spec["write_disposition"],
    )
    with connection(postgres_url) as conn:
        got = snapshot(conn, dataset)
    assert got["columns"] == expected["columns"]
    assert got["rows"] == expected["rows"]


def test_ethereum_blocks_load_with_every_digit(
    postgres_url: str, cases_dir: Path, tmp_path: Path, datasets: list[str]
) -> None:
    """dlt cannot load this case (its extract stops at integers beyond 64 bits), so it has no
    fixture; loadstone types them ``wei`` (``numeric(156,78)``) and keeps every digit."""
    dataset = dataset_name("ethereum_blocks", "snake_case")
    drop_datasets(postgres_url, dataset)
    datasets.append(dataset)
    blocks = json.loads((cases_dir / "ethereum_blocks.json").read_text(encoding="utf-8"))
    pipeline(postgres_url, dataset, tmp_path).run(blocks, table_name="blocks")
    with connection(postgres_url) as conn:
        got = conn.execute(f'SELECT total_difficulty FROM "{dataset}".blocks').fetchall()
        type_ = conn.execute(
            "SELECT data_type, numeric_precision, numeric_scale FROM information_schema.columns "
            f"WHERE table_schema = '{dataset}' AND table_name = 'blocks' "
            "AND column_name = 'total_difficulty'"
        ).fetchall()
        transactions = conn.execute(f'SELECT count(*) FROM "{dataset}".blocks__transactions')
        assert transactions.fetchone() == (sum(len(b["transactions"]) for b in blocks),)
    assert sorted(int(v) for (v,) in got) == sorted(b["totalDifficulty"] for b in blocks)
    assert type_ == [("numeric", 156, 78)]
