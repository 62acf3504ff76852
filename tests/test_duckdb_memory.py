"""DuckDB's memory during a load: bounded by schema width and threads, never by rows."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_duckdb_support import duckdb_destination, parquet, request, schema, table

from loadstone.plugins.destinations.duckdb.memory import (
    FLOOR,
    MIB,
    load_memory_limit,
    parse_size,
)

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


def _load_one_row(tmp_path: Path) -> str:
    shop = schema(users=table({"id": {"data_type": "bigint"}}))
    with duckdb_destination(tmp_path / "db.duckdb").client(shop, "mydata") as client:
        rows = [{"id": 1, "_dlt_id": "a", "_dlt_load_id": "1"}]
        client.load_package(request(shop, {"users": [parquet(tmp_path / "u", rows)]}))
        return str(client.query("SELECT current_setting('memory_limit')")[0][0])


def test_a_load_sets_the_width_limit_on_a_database_it_opened(tmp_path: Path) -> None:
    assert _load_one_row(tmp_path) == "1.0 GiB"


def test_a_configured_memory_limit_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DESTINATION__DUCKDB__MEMORY_LIMIT", "3GB")
    assert parse_size(_load_one_row(tmp_path)) == pytest.approx(3 * 10**9, rel=0.05)
