"""PostgreSQL replace strategies, configured as in dlt (``destination.replace_strategy``).

Every test loads into a dataset of its own on the real server ``.ci/postgres`` starts.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from postgres_support import drop_datasets, pipeline, rows, unique_dataset

import loadstone
from loadstone.exceptions import LoadstoneError


@pytest.fixture
def dataset(postgres_url: str) -> Iterator[str]:
    name = unique_dataset()
    yield name
    drop_datasets(postgres_url, name)


def _users(*pairs: tuple[int, str]) -> list[dict[str, object]]:
    return [{"id": i, "name": n, "pets": [{"pet": f"{n}-pet"}]} for i, n in pairs]


def _load_twice(url: str, dataset: str, tmp_path: Path) -> tuple[list[object], list[object]]:
    pipe = pipeline(url, dataset, tmp_path)
    pipe.run(_users((1, "a"), (2, "b")), table_name="users", write_disposition="replace")
    pipe.run(_users((3, "c")), table_name="users", write_disposition="replace")
    users = sorted(rows(url, f'SELECT id, name FROM "{dataset}".users'))
    pets = sorted(rows(url, f'SELECT pet FROM "{dataset}".users__pets'))
    return users, pets


@pytest.mark.parametrize(
    "strategy", ["truncate-and-insert", "insert-from-staging", "staging-optimized"]
)
def test_each_replace_strategy_replaces_root_and_nested_tables(
    strategy: str,
    postgres_url: str,
    dataset: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DESTINATION__REPLACE_STRATEGY", strategy)
    assert _load_twice(postgres_url, dataset, tmp_path) == ([(3, "c")], [("c-pet",)])


def test_insert_from_staging_copies_the_package_into_the_staging_dataset_first(
    postgres_url: str, dataset: str, tmp_path: Path
) -> None:
    Path(".loadstone").mkdir()
    Path(".loadstone/config.toml").write_text(
        '[destination]\nreplace_strategy = "insert-from-staging"\n'
    )
    _load_twice(postgres_url, dataset, tmp_path)
    staged = rows(postgres_url, f'SELECT id FROM "{dataset}_staging".users')
    assert staged == [(3,)]


def test_staging_optimized_keeps_the_tables_columns(
    postgres_url: str, dataset: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DESTINATION__POSTGRES__REPLACE_STRATEGY", "staging-optimized")
    columns = (
        "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns "
        f"WHERE table_schema = '{dataset}' ORDER BY table_name, ordinal_position"
    )
    pipe = pipeline(postgres_url, dataset, tmp_path)
    pipe.run(_users((1, "a")), table_name="users", write_disposition="replace")
    before = rows(postgres_url, columns)
    pipe.run(_users((2, "b")), table_name="users", write_disposition="replace")
    assert rows(postgres_url, columns) == before


def test_a_failing_insert_from_staging_keeps_the_old_rows(
    postgres_url: str, dataset: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DESTINATION__REPLACE_STRATEGY", "insert-from-staging")
    pipe = pipeline(postgres_url, dataset, tmp_path)
    pipe.run(_users((1, "a")), table_name="users", write_disposition="replace")
    with pytest.raises(LoadstoneError):  # NUL cannot be stored in PostgreSQL text
        pipe.run(_users((2, "bad\x00")), table_name="users", write_disposition="replace")
    assert rows(postgres_url, f'SELECT id FROM "{dataset}".users') == [(1,)]
    assert rows(postgres_url, f'SELECT pet FROM "{dataset}".users__pets') == [("a-pet",)]


def test_an_unknown_replace_strategy_names_the_key_and_the_choices(
    postgres_url: str, dataset: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DESTINATION__REPLACE_STRATEGY", "swap")
    with pytest.raises(LoadstoneError, match=r"replace_strategy.*insert-from-staging"):
        pipeline(postgres_url, dataset, tmp_path).run(_users((1, "a")), table_name="users")


def test_a_staging_optimized_replace_keeps_the_unique_constraints(
    postgres_url: str, tmp_path: Path
) -> None:
    """The staging table moved into the dataset carries the UNIQUE constraints of columns
    hinted unique, as dlt 1.31's (differential program p737; a merge's staging tables have
    none: its staged rows may repeat a key)."""
    dataset = unique_dataset()
    try:
        destination = loadstone.destinations.postgres(
            credentials=postgres_url, replace_strategy="staging-optimized"
        )
        pipe = loadstone.pipeline(
            "so_idx", destination=destination, dataset_name=dataset, pipelines_dir=str(tmp_path)
        )
        snap = loadstone.resource(
            [{"id": 1, "email": "a"}],
            name="snap",
            write_disposition="replace",
            columns={"email": {"unique": True}},
        )
        pipe.run(snap)
        pipe.run(snap)
        indexes = rows(
            postgres_url,
            f"SELECT indexname FROM pg_indexes WHERE schemaname = '{dataset}' "
            "AND tablename = 'snap' ORDER BY 1",
        )
        assert indexes == [("snap__dlt_id_key",), ("snap_email_key",)]
    finally:
        drop_datasets(postgres_url, dataset, f"{dataset}_staging")
