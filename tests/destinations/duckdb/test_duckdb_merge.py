"""Write dispositions on DuckDB: replace, merge delete-insert / upsert / scd2, with nested tables.

Expected results mirror what dlt 1.x does on DuckDB for the same packages (observed once with
the black-box oracle in /work/oracle/dest/scd2.py).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from test_duckdb_support import (
    duckdb_destination,
    new_load_id,
    parquet,
    request,
    rows,
    schema,
    table,
)

from loadstone.destinations.contract import load_id_timestamp
from loadstone.exceptions import LoadFailed

PK = {"data_type": "bigint", "primary_key": True, "nullable": False}


def _schema(
    disposition: str | None, strategy: str | None = None, root_key: bool = True, **id_hints: Any
) -> dict:
    return schema(
        users=table(
            {
                "id": {**PK, **id_hints}
                if id_hints or disposition != "append"
                else {"data_type": "bigint"},
                "name": {"data_type": "text"},
            },
            write_disposition=disposition,
            strategy=strategy,
        ),
        users__pets=table({"value": {"data_type": "text"}}, parent="users", root_key=root_key),
    )


def _load(
    client: Any,
    stored: dict,
    tmp: Path,
    users: list[tuple],
    pets: list[tuple] = (),
    load_id: str | None = None,
) -> str:
    """users: (id, name, row_id); pets: (root row_id, value, idx)."""
    load_id = load_id or new_load_id()
    tables = {
        "users": [
            parquet(
                tmp / load_id / "users",
                [{"id": i, "name": n, "_dlt_id": r, "_dlt_load_id": load_id} for i, n, r in users],
            )
        ]
    }
    if pets:
        tables["users__pets"] = [
            parquet(
                tmp / load_id / "pets",
                [
                    {
                        "value": v,
                        "_dlt_id": f"{r}-{x}",
                        "_dlt_parent_id": r,
                        "_dlt_root_id": r,
                        "_dlt_list_idx": x,
                    }
                    for r, v, x in pets
                ],
            )
        ]
    client.load_package(request(stored, tables, load_id))
    return load_id


def _users(client: Any) -> list[tuple]:
    return rows(client, "users", "id, name", "id, name")


def _pets(client: Any) -> list[tuple]:
    return rows(client, "users__pets", "_dlt_parent_id, value", "_dlt_parent_id, value")


@pytest.fixture
def client(tmp_path: Path) -> Any:
    with duckdb_destination(tmp_path / "db.duckdb").client(None, "mydata") as opened:
        yield opened


# --- replace ---------------------------------------------------------------------------------


def test_replace_replaces_root_and_nested_tables_together(client: Any, tmp_path: Path) -> None:
    stored = _schema("replace")
    _load(client, stored, tmp_path, [(1, "a", "r1"), (2, "b", "r2")], [("r1", "cat", 0)])
    _load(client, stored, tmp_path, [(3, "c", "r3")])  # no nested rows this time
    assert _users(client) == [(3, "c")]
    assert _pets(client) == []


# --- delete-insert ---------------------------------------------------------------------------


def test_delete_insert_replaces_rows_with_matching_primary_key(client: Any, tmp_path: Path) -> None:
    stored = _schema("merge")
    _load(
        client,
        stored,
        tmp_path,
        [(1, "a", "r1"), (2, "b", "r2")],
        [("r1", "cat", 0), ("r2", "dog", 0)],
    )
    _load(client, stored, tmp_path, [(1, "a2", "r1b"), (3, "c", "r3")], [("r1b", "fish", 0)])
    assert _users(client) == [(1, "a2"), (2, "b"), (3, "c")]
    assert _pets(client) == [("r1b", "fish"), ("r2", "dog")]


def test_delete_insert_keeps_the_first_of_duplicate_keys_and_its_nested_rows(
    client: Any, tmp_path: Path
) -> None:
    stored = _schema("merge")
    _load(client, stored, tmp_path, [(1, "a", "r1")], [("r1", "cat", 0)])
    _load(
        client,
        stored,
        tmp_path,
        [(1, "a2", "r2"), (1, "a3", "r3")],
        [("r2", "nine", 0), ("r3", "eight", 0)],
    )
    assert _users(client) == [(1, "a2")]
    assert _pets(client) == [("r2", "nine")]


def test_dedup_sort_hint_chooses_which_duplicate_survives(client: Any, tmp_path: Path) -> None:
    stored = _schema("merge")
    stored["tables"]["users"]["columns"]["name"]["x-dedup-sort"] = "desc"
    _load(client, stored, tmp_path, [(1, "a", "r1"), (1, "c", "r2"), (1, "b", "r3")])
    assert _users(client) == [(1, "c")]


def test_delete_insert_stages_in_the_dataset_staging_schema(client: Any, tmp_path: Path) -> None:
    assert client.staging_dataset_name == "mydata_staging"
    _load(client, _schema("merge"), tmp_path, [(1, "a", "r1")])
    staged = client.query('SELECT id, name FROM "db"."mydata_staging"."users"')
    assert staged == [(1, "a")]


def test_delete_insert_follows_the_parent_chain_without_a_root_key(
    client: Any, tmp_path: Path
) -> None:
    stored = _schema("merge", root_key=False)
    _load(
        client,
        stored,
        tmp_path,
        [(1, "a", "r1"), (2, "b", "r2")],
        [("r1", "cat", 0), ("r2", "dog", 0)],
    )
    _load(
        client,
        stored,
        tmp_path,
        [(1, "a2", "r1b"), (1, "a3", "r1c")],
        [("r1b", "fish", 0), ("r1c", "eel", 0)],
    )
    assert _users(client) == [(1, "a2"), (2, "b")]
    assert _pets(client) == [("r1b", "fish"), ("r2", "dog")]


def test_delete_insert_deletes_grandchildren_too(client: Any, tmp_path: Path) -> None:
    stored = _schema("merge", root_key=False)
    stored["tables"]["users__pets__toys"] = {
        "name": "users__pets__toys",
        **table({"value": {"data_type": "text"}}, parent="users__pets"),
    }
    load_id = new_load_id()
    toys = parquet(
        tmp_path / "toys",
        [{"value": "ball", "_dlt_id": "t1", "_dlt_parent_id": "r1-0", "_dlt_list_idx": 0}],
    )
    users = parquet(
        tmp_path / "u1", [{"id": 1, "name": "a", "_dlt_id": "r1", "_dlt_load_id": load_id}]
    )
    pets = parquet(
        tmp_path / "p1",
        [{"value": "cat", "_dlt_id": "r1-0", "_dlt_parent_id": "r1", "_dlt_list_idx": 0}],
    )
    client.load_package(
        request(
            stored, {"users": [users], "users__pets": [pets], "users__pets__toys": [toys]}, load_id
        )
    )
    _load(client, stored, tmp_path, [(1, "a2", "r9")])
    assert rows(client, "users__pets__toys") == []
    assert _pets(client) == []


def test_merge_key_deletes_all_rows_of_the_key(client: Any, tmp_path: Path) -> None:
    stored = schema(
        users=table(
            {"day": {"data_type": "text", "merge_key": True}, "name": {"data_type": "text"}},
            write_disposition="merge",
        )
    )
    for day, names in (("mon", ["a", "b"]), ("tue", ["c"]), ("mon", ["d"])):
        load_id = new_load_id()
        file = parquet(
            tmp_path / load_id,
            [{"day": day, "name": n, "_dlt_id": n, "_dlt_load_id": load_id} for n in names],
        )
        client.load_package(request(stored, {"users": [file]}, load_id))
    assert rows(client, "users", "day, name", "day, name") == [("mon", "d"), ("tue", "c")]


def test_merge_without_keys_appends(client: Any, tmp_path: Path) -> None:
    stored = schema(
        users=table(
            {"id": {"data_type": "bigint"}, "name": {"data_type": "text"}},
            write_disposition="merge",
        )
    )
    _load(client, stored, tmp_path, [(1, "a", "r1")])
    _load(client, stored, tmp_path, [(1, "a", "r2")])
    assert _users(client) == [(1, "a"), (1, "a")]


def test_strategy_may_come_in_dlt_resource_form(client: Any, tmp_path: Path) -> None:
    stored = _schema(None)
    stored["tables"]["users"]["write_disposition"] = {"disposition": "merge", "strategy": "upsert"}
    _load(client, stored, tmp_path, [(1, "a", "r1")])
    _load(client, stored, tmp_path, [(1, "b", "r1")])
    assert _users(client) == [(1, "b")]


# --- upsert ----------------------------------------------------------------------------------


def test_upsert_updates_existing_and_inserts_new_rows(client: Any, tmp_path: Path) -> None:
    stored = _schema("merge", "upsert")
    _load(
        client,
        stored,
        tmp_path,
        [(1, "a", "h1"), (2, "b", "h2")],
        [("h1", "cat", 0), ("h1", "cow", 1), ("h2", "dog", 0)],
    )
    _load(client, stored, tmp_path, [(1, "a2", "h1"), (3, "c", "h3")], [("h1", "fish", 0)])
    assert _users(client) == [(1, "a2"), (2, "b"), (3, "c")]
    assert _pets(client) == [("h1", "fish"), ("h2", "dog")]


def test_upsert_update_keeps_columns_unknown_to_the_schema(client: Any, tmp_path: Path) -> None:
    stored = _schema("merge", "upsert")
    _load(client, stored, tmp_path, [(1, "a", "h1")])
    client.query('ALTER TABLE "db"."mydata"."users" ADD COLUMN note VARCHAR')
    client.query('UPDATE "db"."mydata"."users" SET note = \'kept\'')
    _load(client, stored, tmp_path, [(1, "a2", "h1")])
    assert rows(client, "users", "id", "name, note") == [("a2", "kept")]


def test_upsert_without_primary_key_fails_clearly(client: Any, tmp_path: Path) -> None:
    stored = schema(
        users=table({"id": {"data_type": "bigint"}}, write_disposition="merge", strategy="upsert")
    )
    with pytest.raises(LoadFailed, match="upsert strategy needs a primary_key"):
        _load(client, stored, tmp_path, [(1, "a", "h1")])


# --- scd2 ------------------------------------------------------------------------------------


def _scd2_schema() -> dict:
    return schema(
        dim=table(
            {"id": {"data_type": "bigint"}, "v": {"data_type": "text"}},
            write_disposition="merge",
            strategy="scd2",
        ),
        dim__kids=table({"value": {"data_type": "bigint"}}, parent="dim"),
    )


def _scd2_load(
    client: Any, tmp: Path, items: list[tuple[int, str]], kids: dict[int, list[int]] | None = None
) -> str:
    load_id = new_load_id()
    roots = [{"id": i, "v": v, "_dlt_id": f"h{i}{v}", "_dlt_load_id": load_id} for i, v in items]
    tables = {"dim": [parquet(tmp / load_id / "dim", roots)]}
    nested = [
        {"value": k, "_dlt_id": f"h{i}{v}-{n}", "_dlt_parent_id": f"h{i}{v}", "_dlt_list_idx": n}
        for i, v in items
        for n, k in enumerate((kids or {}).get(i, []))
    ]
    if nested:
        tables["dim__kids"] = [parquet(tmp / load_id / "kids", nested)]
    client.load_package(request(_scd2_schema(), tables, load_id))
    return load_id


def _versions(client: Any) -> list[tuple]:
    return rows(client, "dim", "id, _dlt_valid_from", "id, v, _dlt_valid_from, _dlt_valid_to")


def test_scd2_first_load_makes_every_row_active_from_the_load_time(
    client: Any, tmp_path: Path
) -> None:
    first = _scd2_load(client, tmp_path, [(1, "a"), (2, "b")])
    t1 = load_id_timestamp(first)
    assert _versions(client) == [(1, "a", t1, None), (2, "b", t1, None)]


def test_scd2_retires_changed_and_absent_rows_and_inserts_new_versions(
    client: Any, tmp_path: Path
) -> None:
    t1 = load_id_timestamp(_scd2_load(client, tmp_path, [(1, "a"), (2, "b")]))
    t2 = load_id_timestamp(_scd2_load(client, tmp_path, [(1, "a2")]))
    assert _versions(client) == [(1, "a", t1, t2), (1, "a2", t2, None), (2, "b", t1, t2)]


def test_scd2_unchanged_rows_stay_active_without_a_new_version(client: Any, tmp_path: Path) -> None:
    t1 = load_id_timestamp(_scd2_load(client, tmp_path, [(1, "a"), (2, "b")]))
    _scd2_load(client, tmp_path, [(1, "a"), (2, "b")])
    assert _versions(client) == [(1, "a", t1, None), (2, "b", t1, None)]


def test_scd2_validity_columns_are_time_zone_aware_timestamps(client: Any, tmp_path: Path) -> None:
    _scd2_load(client, tmp_path, [(1, "a")])
    types = dict(
        client.query(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = 'mydata' AND table_name = 'dim'"
        )
    )
    assert types["_dlt_valid_from"] == types["_dlt_valid_to"] == "TIMESTAMP WITH TIME ZONE"


def test_scd2_nested_rows_are_inserted_for_new_versions_only(client: Any, tmp_path: Path) -> None:
    _scd2_load(client, tmp_path, [(1, "a"), (2, "b")], {1: [1, 2], 2: [3]})
    _scd2_load(client, tmp_path, [(1, "a2"), (2, "b")], {1: [1], 2: [3]})
    assert rows(client, "dim__kids", "_dlt_parent_id, value", "_dlt_parent_id, value") == [
        ("h1a", 1),
        ("h1a", 2),
        ("h1a2", 1),
        ("h2b", 3),
    ]


def test_scd2_with_merge_key_retires_only_rows_of_loaded_keys(client: Any, tmp_path: Path) -> None:
    stored = _scd2_schema()
    stored["tables"]["dim"]["columns"]["id"]["merge_key"] = True

    def load(items: list[tuple[int, str]]) -> dt.datetime:
        load_id = new_load_id()
        roots = [
            {"id": i, "v": v, "_dlt_id": f"h{i}{v}", "_dlt_load_id": load_id} for i, v in items
        ]
        client.load_package(request(stored, {"dim": [parquet(tmp_path / load_id, roots)]}, load_id))
        return load_id_timestamp(load_id)

    t1 = load([(1, "a"), (2, "b")])
    t2 = load([(1, "a2")])
    assert _versions(client) == [(1, "a", t1, t2), (1, "a2", t2, None), (2, "b", t1, None)]


def test_scd2_active_record_timestamp_marks_active_rows(client: Any, tmp_path: Path) -> None:
    stored = _scd2_schema()
    stored["tables"]["dim"]["x-active-record-timestamp"] = "9999-12-31T00:00:00"
    far = dt.datetime(9999, 12, 31, tzinfo=dt.timezone.utc)

    def load(items: list[tuple[int, str]]) -> dt.datetime:
        load_id = new_load_id()
        roots = [
            {"id": i, "v": v, "_dlt_id": f"h{i}{v}", "_dlt_load_id": load_id} for i, v in items
        ]
        client.load_package(request(stored, {"dim": [parquet(tmp_path / load_id, roots)]}, load_id))
        return load_id_timestamp(load_id)

    t1 = load([(1, "a")])
    t2 = load([(1, "b")])
    assert _versions(client) == [(1, "a", t1, t2), (1, "b", t2, far)]


def test_scd2_boundary_timestamp_and_validity_column_names_come_from_hints(
    client: Any, tmp_path: Path
) -> None:
    stored = _scd2_schema()
    stored["tables"]["dim"]["x-boundary-timestamp"] = "2024-01-01T00:00:00+00:00"
    stored["tables"]["dim"]["x-validity-column-names"] = ["valid_since", "valid_until"]
    load_id = new_load_id()
    roots = [{"id": 1, "v": "a", "_dlt_id": "h1a", "_dlt_load_id": load_id}]
    client.load_package(request(stored, {"dim": [parquet(tmp_path / load_id, roots)]}, load_id))
    assert rows(client, "dim", "id", "valid_since, valid_until") == [
        (dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc), None)
    ]


def _hard_delete_schema(strategy: str | None) -> dict:
    stored = _schema("merge", strategy)
    stored["tables"]["users"]["columns"]["deleted"] = {
        "name": "deleted",
        "data_type": "bool",
        "hard_delete": True,
    }
    return stored


@pytest.mark.parametrize("strategy", [None, "upsert"], ids=["delete-insert", "upsert"])
def test_hard_delete_column_removes_rows_and_their_nested_rows(
    client: Any, tmp_path: Path, strategy: str | None
) -> None:
    stored = _hard_delete_schema(strategy)
    _load(client, stored, tmp_path, [(1, "a", "h1"), (2, "b", "h2")], [("h1", "cat", 0)])
    load_id = new_load_id()
    users = parquet(
        tmp_path / load_id,
        [
            {"id": 1, "name": "a", "deleted": True, "_dlt_id": "h1", "_dlt_load_id": load_id},
            {"id": 3, "name": "c", "deleted": False, "_dlt_id": "h3", "_dlt_load_id": load_id},
        ],
    )
    client.load_package(request(stored, {"users": [users]}, load_id))
    assert _users(client) == [(2, "b"), (3, "c")]
    assert _pets(client) == []


def test_dedup_sort_stored_as_dlt_column_hint(client: Any, tmp_path: Path) -> None:
    stored = _schema("merge")
    stored["tables"]["users"]["columns"]["name"]["dedup_sort"] = "asc"
    _load(client, stored, tmp_path, [(1, "c", "r1"), (1, "a", "r2"), (1, "b", "r3")])
    assert _users(client) == [(1, "a")]


def test_a_failed_load_names_the_databases_first_error_not_the_aborted_transaction() -> None:
    """A statement run while the first failure is handled fails with "transaction aborted":
    the package's error names the first one, the cause."""
    import duckdb

    from loadstone.plugins.destinations.sql.loader import _first_error

    try:
        try:
            raise duckdb.BinderException('Referenced column "rv" not found')
        except duckdb.Error:
            raise duckdb.TransactionException("Current transaction is aborted") from None
    except duckdb.Error as error:
        assert "rv" in str(_first_error(error, duckdb.Error))


def test_an_scd2_row_version_column_the_data_lacks_is_refused_at_normalize(
    tmp_path: Path,
) -> None:
    import loadstone as dlt
    from loadstone.exceptions import PipelineStepFailed, UnboundColumnException

    @dlt.resource(
        write_disposition={
            "disposition": "merge",
            "strategy": "scd2",
            "row_version_column_name": "rv",
        },
        primary_key="id",
    )
    def dim() -> Any:
        yield {"id": 1, "v": "a"}

    pipeline = dlt.pipeline(
        "scd2_rv",
        destination=dlt.destinations.duckdb(str(tmp_path / "scd2.duckdb")),
        pipelines_dir=str(tmp_path / "pipelines"),
    )
    with pytest.raises(PipelineStepFailed) as failed:
        pipeline.run(dim())
    assert failed.value.step == "normalize"
    assert isinstance(failed.value.exception, UnboundColumnException)
    assert "rv" in str(failed.value)


def test_a_replaced_table_turned_to_merge_keeps_no_stale_nested_rows(tmp_path: Path) -> None:
    """Nested rows loaded under ``replace`` have no ``_dlt_root_id``; when the root turns to
    ``merge`` the column is added and filled from the parent chain, so a merged key's old
    nested rows (grandchildren too) are deleted (they stayed beside the new ones; dlt 1.31
    fails that load: differential program p445)."""
    import loadstone

    pipe = loadstone.pipeline("turn", destination="duckdb", pipelines_dir=str(tmp_path / "p"))
    first = [{"id": 1, "a": [{"x": 1, "b": [{"y": 1}]}]}, {"id": 2, "a": [{"x": 2}]}]
    pipe.run(first, table_name="t", write_disposition="replace")
    later = [{"id": 1, "a": [{"x": 10, "b": [{"y": 10}]}]}]
    pipe.run(later, table_name="t", write_disposition="merge", primary_key="id")
    with pipe.sql_client() as sql:
        nested = sql.execute_sql("SELECT x FROM t__a ORDER BY x")
        deeper = sql.execute_sql("SELECT y FROM t__a__b ORDER BY y")
    assert [tuple(r) for r in nested] == [(2,), (10,)]
    assert [tuple(r) for r in deeper] == [(10,)]


def test_an_scd2_row_version_column_is_stored_as_dlt_stores_it(tmp_path: Path) -> None:
    """``row_version_column_name``'s column is a version, not a key, and never null: dlt 1.31
    stores ``nullable: False, row_key: False, unique: False, x-row-version: True`` (seen in
    differential program p404; loadstone stored it nullable, so the table column allowed
    NULL)."""
    import loadstone

    wd = {"disposition": "merge", "strategy": "scd2", "row_version_column_name": "rv"}
    pipe = loadstone.pipeline("rv", destination="duckdb", pipelines_dir=str(tmp_path / "p"))
    pipe.run([{"id": 1, "rv": "1-a"}], table_name="dim", write_disposition=wd)
    column = dict(pipe.default_schema.tables["dim"]["columns"]["rv"])
    assert {k: column.get(k) for k in ("nullable", "row_key", "unique", "x-row-version")} == {
        "nullable": False,
        "row_key": False,
        "unique": False,
        "x-row-version": True,
    }


def test_an_scd2_boundary_datetime_is_stored_in_iso_form(tmp_path: Path) -> None:
    """dlt 1.31 stores ``boundary_timestamp=datetime(...)`` as ``x-boundary-timestamp:
    '2024-01-03T00:00:00+00:00'`` (differential program p410); loadstone stored str()'s
    ``'2024-01-03 00:00:00+00:00'``."""
    import loadstone

    at = dt.datetime(2024, 1, 3, tzinfo=dt.timezone.utc)
    wd = {"disposition": "merge", "strategy": "scd2", "boundary_timestamp": at}
    pipe = loadstone.pipeline("bt", destination="duckdb", pipelines_dir=str(tmp_path / "p"))
    pipe.run([{"id": 1}], table_name="dim", write_disposition=wd)
    stored = pipe.default_schema.tables["dim"]["x-boundary-timestamp"]
    assert stored == "2024-01-03T00:00:00+00:00"


@pytest.mark.parametrize("strategy", ["upsert", "insert-only", "scd2"])
def test_a_row_staged_twice_inserts_its_nested_rows_once(strategy: str, tmp_path: Path) -> None:
    """These strategies derive row keys from the primary key or the content, so a row given
    twice in one load stages its nested rows twice under the same _dlt_id: the merge kept the
    root once but inserted the nested rows twice (differential program p709; with
    PostgreSQL's UNIQUE _dlt_id the load failed, p708)."""
    import loadstone

    wd = {"disposition": "merge", "strategy": strategy}
    pipe = loadstone.pipeline("twice", destination="duckdb", pipelines_dir=str(tmp_path / "p"))
    row = {"id": 1, "v": "a", "k": [1, 2]}
    pipe.run([row, dict(row)], table_name="t", write_disposition=wd, primary_key="id")
    with pipe.sql_client() as client:
        nested = client.execute_sql("SELECT value, _dlt_list_idx FROM t__k ORDER BY ALL")
        roots = client.execute_sql("SELECT id FROM t")
    assert [tuple(r) for r in nested] == [(1, 0), (2, 1)]
    assert [tuple(r) for r in roots] == [(1,)]
