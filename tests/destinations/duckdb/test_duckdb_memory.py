"""DuckDB's memory during a load: bounded by schema width and threads, never by rows."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_duckdb_support import duckdb_destination, parquet, request, schema, table

from loadstone.plugins.destinations.duckdb.client import DuckDBClient
from loadstone.plugins.destinations.duckdb.memory import (
    FLOOR,
    MIB,
    load_memory_limit,
    parse_size,
)
from tests.destinations.schema_support import stored_schema

CEILING = 64 * 1024 * MIB


def test_a_narrow_package_gets_the_floor() -> None:
    assert load_memory_limit(20, 2, CEILING) == FLOOR


def test_a_wide_package_gets_room_for_one_row_group_per_thread() -> None:
    # 3,000 columns on 2 threads needed 3 GB measured; a flat 1-2 GB failed
    assert load_memory_limit(3000, 2, CEILING) > 3 * 1024 * MIB


def test_the_limit_never_exceeds_duckdbs_own() -> None:
    assert load_memory_limit(100_000, 64, 2 * 1024 * MIB) == 2 * 1024 * MIB


@given(st.integers(1, 20_000), st.integers(1, 20_000), st.integers(1, 128))
def test_a_wider_schema_never_gets_less_memory(narrow: int, wide: int, threads: int) -> None:
    narrow, wide = sorted((narrow, wide))
    assert load_memory_limit(narrow, threads, CEILING) <= load_memory_limit(wide, threads, CEILING)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("18.8 GiB", int(18.8 * 1024**3)), ("953.6 MiB", int(953.6 * 1024**2)), ("2GB", 2 * 10**9)],
)
def test_duckdb_size_settings_are_read_as_bytes(text: str, expected: int) -> None:
    assert parse_size(text) == expected


def _limit_during_a_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """DuckDB's memory limit while a one-row package is inside its transaction."""
    seen: list[str] = []
    inner = DuckDBClient._load_tables

    def spy(self: DuckDBClient, *args: object) -> None:
        seen.append(self.query("SELECT current_setting('memory_limit')")[0][0])
        inner(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(DuckDBClient, "_load_tables", spy)
    shop = schema(users=table({"id": {"data_type": "bigint"}}))
    with duckdb_destination(tmp_path / "db.duckdb").client(stored_schema(shop), "mydata") as client:
        rows = [{"id": 1, "_dlt_id": "a", "_dlt_load_id": "1"}]
        client.load_package(request(shop, {"users": [parquet(tmp_path / "u", rows)]}))
    return seen[0]


def test_a_load_sets_the_width_limit_on_a_database_it_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _limit_during_a_load(tmp_path, monkeypatch) == "1.0 GiB"


def test_a_configured_memory_limit_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DESTINATION__DUCKDB__MEMORY_LIMIT", "3GB")
    limit = parse_size(_limit_during_a_load(tmp_path, monkeypatch))
    assert limit == pytest.approx(3 * 10**9, rel=0.05)


def test_the_database_gets_its_own_limit_back_after_a_load(tmp_path: Path) -> None:
    shop = schema(users=table({"id": {"data_type": "bigint"}}))
    with duckdb_destination(tmp_path / "db.duckdb").client(stored_schema(shop), "mydata") as client:
        before = client.query("SELECT current_setting('memory_limit')")
        rows = [{"id": 1, "_dlt_id": "a", "_dlt_load_id": "1"}]
        client.load_package(request(shop, {"users": [parquet(tmp_path / "u", rows)]}))
        assert client.query("SELECT current_setting('memory_limit')") == before


def test_a_load_that_runs_out_of_memory_fails_the_package_and_keeps_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from loadstone.exceptions import LoadFailed

    monkeypatch.setenv("DESTINATION__DUCKDB__MEMORY_LIMIT", "20MB")
    wide = schema(wide=table({f"c{i}": {"data_type": "text"} for i in range(300)}))
    rows = [
        {**{f"c{i}": f"value {n} {i}" for i in range(300)}, "_dlt_id": str(n), "_dlt_load_id": "1"}
        for n in range(3000)
    ]
    with duckdb_destination(tmp_path / "db.duckdb").client(stored_schema(wide), "mydata") as client:
        with pytest.raises(LoadFailed, match="rolled back"):
            client.load_package(request(wide, {"wide": [parquet(tmp_path / "w", rows)]}))
        tables = "SELECT count(*) FROM information_schema.tables WHERE table_name = 'wide'"
        assert client.query(tables) == [(0,)]


def test_a_memory_limit_may_be_a_share_of_ram(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DESTINATION__DUCKDB__MEMORY_LIMIT", "1%")
    assert parse_size(_limit_during_a_load(tmp_path, monkeypatch)) > 0
