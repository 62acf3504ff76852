"""PostgreSQL loads: write dispositions, names, injection, state, queries, the CLI.

Every test loads into a dataset of its own on the real server ``.ci/postgres`` starts.
"""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from postgres_support import connection, drop_datasets, pipeline, rows, unique_dataset

import loadstone
from loadstone.exceptions import LoadFailed


@pytest.fixture
def dataset(postgres_url: str) -> Iterator[str]:
    name = unique_dataset()
    yield name
    drop_datasets(postgres_url, name)


def _users(*pairs: tuple[int, str], pets: int = 1) -> list[dict[str, object]]:
    return [
        {"id": i, "name": n, "pets": [{"pet": f"{n}-{k}"} for k in range(pets)]} for i, n in pairs
    ]


def _table(url: str, dataset: str, table: str, columns: str) -> list[tuple[object, ...]]:
    return sorted(rows(url, f'SELECT {columns} FROM "{dataset}"."{table}"'))


def test_append_adds_rows_on_every_run(postgres_url: str, dataset: str, tmp_path: Path) -> None:
    pipe = pipeline(postgres_url, dataset, tmp_path)
    pipe.run(_users((1, "a")), table_name="users")
    pipe.run(_users((1, "a")), table_name="users")
    assert _table(postgres_url, dataset, "users", "id") == [(1,), (1,)]
    assert len(_table(postgres_url, dataset, "users__pets", "pet")) == 2
    assert len(_table(postgres_url, dataset, "_dlt_loads", "load_id")) == 2


def test_replace_replaces_root_and_nested_tables(
    postgres_url: str, dataset: str, tmp_path: Path
) -> None:
    pipe = pipeline(postgres_url, dataset, tmp_path)
    pipe.run(_users((1, "a"), (2, "b")), table_name="users", write_disposition="replace")
    pipe.run(_users((3, "c")), table_name="users", write_disposition="replace")
    assert _table(postgres_url, dataset, "users", "id, name") == [(3, "c")]
    assert _table(postgres_url, dataset, "users__pets", "pet") == [("c-0",)]


def test_merge_delete_insert_replaces_matching_keys_with_their_nested_rows(
    postgres_url: str, dataset: str, tmp_path: Path
) -> None:
    pipe = pipeline(postgres_url, dataset, tmp_path)
    hints = {"write_disposition": "merge", "primary_key": "id"}
    pipe.run(_users((1, "a"), (2, "b")), table_name="users", **hints)
    pipe.run(_users((2, "B"), (2, "dup"), (3, "c")), table_name="users", **hints)
    assert _table(postgres_url, dataset, "users", "id, name") == [(1, "a"), (2, "B"), (3, "c")]
    assert _table(postgres_url, dataset, "users__pets", "pet") == [("B-0",), ("a-0",), ("c-0",)]
    staging = rows(postgres_url, f"SELECT 1 FROM pg_namespace WHERE nspname = '{dataset}_staging'")
    assert staging == [(1,)]


def test_merge_upsert_updates_and_inserts(postgres_url: str, dataset: str, tmp_path: Path) -> None:
    pipe = pipeline(postgres_url, dataset, tmp_path)
    hints = {
        "write_disposition": {"disposition": "merge", "strategy": "upsert"},
        "primary_key": "id",
    }
    pipe.run(_users((1, "a"), (2, "b"), pets=2), table_name="users", **hints)
    pipe.run(_users((2, "B"), (3, "c")), table_name="users", **hints)
    assert _table(postgres_url, dataset, "users", "id, name") == [(1, "a"), (2, "B"), (3, "c")]
    pets = _table(postgres_url, dataset, "users__pets", "pet")
    assert pets == [("B-0",), ("a-0",), ("a-1",), ("c-0",)]


def test_merge_insert_only_inserts_new_keys_and_keeps_existing_rows(
    postgres_url: str, dataset: str, tmp_path: Path
) -> None:
    """dlt 1.31 loads the ``insert-only`` strategy into PostgreSQL (loadstone refused it:
    "merge strategy 'insert-only' is not supported here"; differential program p443)."""
    pipe = pipeline(postgres_url, dataset, tmp_path)
    hints = {
        "write_disposition": {"disposition": "merge", "strategy": "insert-only"},
        "primary_key": "id",
    }
    pipe.run(_users((1, "a"), (2, "b")), table_name="users", **hints)
    pipe.run(_users((2, "B"), (3, "c")), table_name="users", **hints)
    assert _table(postgres_url, dataset, "users", "id, name") == [(1, "a"), (2, "b"), (3, "c")]
    assert _table(postgres_url, dataset, "users__pets", "pet") == [("a-0",), ("b-0",), ("c-0",)]


def test_merge_scd2_retires_changed_rows_and_inserts_new_versions(
    postgres_url: str, dataset: str, tmp_path: Path
) -> None:
    pipe = pipeline(postgres_url, dataset, tmp_path)
    hints = {"write_disposition": {"disposition": "merge", "strategy": "scd2"}}
    pipe.run(_users((1, "a"), (2, "b")), table_name="users", **hints)
    pipe.run(_users((1, "a"), (2, "B")), table_name="users", **hints)
    got = _table(postgres_url, dataset, "users", "id, name, _dlt_valid_to IS NULL, _dlt_valid_from")
    assert [(i, n, active) for i, n, active, _ in got] == [
        (1, "a", True),
        (2, "B", True),
        (2, "b", False),
    ]
    assert all(isinstance(f, dt.datetime) and f.tzinfo is not None for *_, f in got)


def test_a_63_character_limit_shortens_names_as_dlt(
    postgres_url: str, dataset: str, tmp_path: Path
) -> None:
    long = "a_column_name_much_longer_than_the_sixty_three_characters_postgres_keeps"
    pipe = pipeline(postgres_url, dataset, tmp_path)
    pipe.run([{"id": 1, long: "v", "nested_list_" + long: [{"x": 1}]}], table_name="t")
    names = {c for t in pipe.default_schema.tables.values() for c in t.columns}
    tables = set(pipe.default_schema.tables)
    assert max(map(len, names | tables)) == 63
    in_db = rows(
        postgres_url,
        "SELECT table_name, column_name FROM information_schema.columns "
        f"WHERE table_schema = '{dataset}'",
    )
    assert {c for _, c in in_db} >= {n for n in names if len(n) == 63}
    assert pipe.dataset()["t"].fetchall()


def test_case_sensitive_naming_keeps_deal_and_deal_apart(
    postgres_url: str, dataset: str, tmp_path: Path
) -> None:
    """sql_cs_v1 on PostgreSQL: quoted ``"Deal"`` and ``"deal"`` are two tables and two columns."""
    pipe = pipeline(postgres_url, dataset, tmp_path, naming="sql_cs_v1")
    pipe.run([{"Id": 1, "id": 2}], table_name="Deal")
    pipe.run([{"Id": 3, "id": 4}], table_name="deal")
    assert rows(postgres_url, f'SELECT "Id", "id" FROM "{dataset}"."Deal"') == [(1, 2)]
    assert rows(postgres_url, f'SELECT "Id", "id" FROM "{dataset}"."deal"') == [(3, 4)]


def test_case_collision_stops_before_any_data_moves(
    postgres_url: str, dataset: str, tmp_path: Path
) -> None:
    """A case-sensitive convention meeting a case-folding profile is stopped, naming both."""
    destination = loadstone.destinations.postgres(
        credentials=postgres_url, naming_convention="sql_cs_v1"
    )
    import attrs

    folding = attrs.evolve(
        destination,
        capabilities=attrs.evolve(destination.capabilities, has_case_sensitive_identifiers=False),
    )
    pipe = loadstone.pipeline(
        pipeline_name="collide",
        destination=folding,
        dataset_name=dataset,
        pipelines_dir=str(tmp_path / "p"),
    )
    with pytest.raises(Exception, match=r"'Deal'.*'deal'|'deal'.*'Deal'"):
        pipe.run([{"Deal": 1, "deal": 2}], table_name="t")
    assert rows(postgres_url, f"SELECT 1 FROM pg_namespace WHERE nspname = '{dataset}'") == []


def test_an_injection_attempt_in_names_and_values_is_data(
    postgres_url: str, dataset: str, tmp_path: Path
) -> None:
    evil = '"; DROP TABLE users; --'
    pipe = pipeline(postgres_url, dataset, tmp_path, naming="direct")
    pipe.run([{evil: "'); DROP SCHEMA public; --", "pct%s": "100%"}], table_name=evil)
    table = next(t for t in pipe.default_schema.tables if "DROP" in t)
    got = pipe.dataset()[table].fetchall()
    assert ("'); DROP SCHEMA public; --", "100%") == got[0][:2]
    assert rows(postgres_url, "SELECT 1 FROM pg_namespace WHERE nspname = 'public'") == [(1,)]


def test_state_and_schema_are_restored_from_the_destination(
    postgres_url: str, dataset: str, tmp_path: Path
) -> None:
    @loadstone.source
    def numbers():  # type: ignore[no-untyped-def]  # a seed-style source, as users write it
        @loadstone.resource
        def counter():  # type: ignore[no-untyped-def]  # likewise
            state = loadstone.current.resource_state()
            start = state.get("last", 0)
            yield [{"n": n} for n in range(start, start + 2)]
            state["last"] = start + 2

        return counter

    pipeline(postgres_url, dataset, tmp_path / "first", name="restore").run(numbers())
    again = pipeline(postgres_url, dataset, tmp_path / "second", name="restore")
    again.run(numbers())
    assert again.state["sources"]["numbers"]["resources"]["counter"] == {"last": 4}
    assert _table(postgres_url, dataset, "counter", "n") == [(0,), (1,), (2,), (3,)]
    assert again.default_schema.name == "numbers"


def test_sql_client_and_dataset_query_the_dataset(
    postgres_url: str, dataset: str, tmp_path: Path
) -> None:
    pipe = pipeline(postgres_url, dataset, tmp_path)
    pipe.run([{"id": 1}, {"id": 2}], table_name="t")
    with pipe.sql_client() as client:
        assert client.execute_sql("SELECT count(*) FROM t WHERE id > %s", 1) == [(1,)]
    assert pipe.dataset()["t"].count() == 2
    assert pipe.dataset().row_counts().fetchall() == [("t", 2)]


def test_a_failed_package_is_rolled_back_whole(
    postgres_url: str, dataset: str, tmp_path: Path
) -> None:
    pipe = pipeline(postgres_url, dataset, tmp_path)
    pipe.run([{"id": 1, "s": "ok"}], table_name="t")
    with pytest.raises(Exception) as raised:  # NUL cannot be stored in PostgreSQL text
        pipe.run([{"id": 2, "s": "bad\x00"}, {"id": 3, "s": "fine"}], table_name="t")
    failure = raised.value if isinstance(raised.value, LoadFailed) else raised.value.__cause__
    assert "'t'" in str(failure)
    assert _table(postgres_url, dataset, "t", "id") == [(1,)]
    assert len(_table(postgres_url, dataset, "_dlt_loads", "load_id")) == 1


def test_cli_runs_into_postgres(postgres_url: str, dataset: str, tmp_path: Path) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text('{"id": 1, "tags": ["a", "b"]}\n{"id": 2, "tags": []}\n')
    env = {"DESTINATION__POSTGRES__CREDENTIALS": postgres_url}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "loadstone.cli",
            "run",
            str(data),
            "--table",
            "things",
            "--pipeline",
            "cli_pg",
            "--destination",
            "postgres",
            "--dataset",
            dataset,
            "--quiet",
        ],
        env={**__import__("os").environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert _table(postgres_url, dataset, "things", "id") == [(1,), (2,)]
    assert len(_table(postgres_url, dataset, "things__tags", "value")) == 2


def test_load_info_hides_the_password(postgres_url: str, dataset: str, tmp_path: Path) -> None:
    info = pipeline(postgres_url, dataset, tmp_path).run([{"id": 1}], table_name="t")
    assert ":***@" in str(info)
    assert ":loadstone@" not in str(info)


def test_dataset_arrow_and_df_carry_the_column_names(
    postgres_url: str, dataset: str, tmp_path: Path
) -> None:
    pipe = pipeline(postgres_url, dataset, tmp_path)
    pipe.run([{"id": 1, "name": "a"}], table_name="t")
    relation = pipe.dataset()["t"]
    assert relation.arrow().column_names == ["id", "name", "_dlt_load_id", "_dlt_id"]
    assert list(relation.df().columns) == ["id", "name", "_dlt_load_id", "_dlt_id"]
    assert relation.select("name", "id").arrow().to_pylist() == [{"name": "a", "id": 1}]


def _reloptions(url: str, dataset: str, table: str) -> object:
    return rows(
        url, f"SELECT reloptions FROM pg_class WHERE oid = '\"{dataset}\".{table}'::regclass"
    )


def test_the_copy_leaves_the_tables_storage_options_as_they_were(
    postgres_url: str, dataset: str, tmp_path: Path
) -> None:
    """The COPY raises ``toast_tuple_target`` for itself (README, "PostgreSQL"); the table
    keeps no option of ours, and an option its owner set stays."""
    pipe = pipeline(postgres_url, dataset, tmp_path)
    pipe.run(_users((1, "a")), table_name="users")
    assert _reloptions(postgres_url, dataset, "users") == [(None,)]
    with connection(postgres_url) as conn:
        conn.execute(f'ALTER TABLE "{dataset}".users SET (toast_tuple_target = 4096)')
    pipe.run(_users((2, "b")), table_name="users")
    assert _reloptions(postgres_url, dataset, "users") == [(["toast_tuple_target=4096"],)]
    assert _table(postgres_url, dataset, "users", "id") == [(1,), (2,)]


def test_a_loader_that_does_not_own_the_table_still_loads(
    postgres_url: str, dataset: str, tmp_path: Path
) -> None:
    """Only INSERT is granted: the COPY goes in without the storage option (not ours to set)."""
    pipeline(postgres_url, dataset, tmp_path / "owner").run(_users((1, "a")), table_name="users")
    role = f"loader_{dataset}"
    with connection(postgres_url) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'loader'")
        conn.execute(f'GRANT USAGE ON SCHEMA "{dataset}" TO {role}')
        conn.execute(f'GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA "{dataset}" TO {role}')
    loader_url = postgres_url.replace("loadstone:loadstone@", f"{role}:loader@", 1)
    try:
        pipe = pipeline(loader_url, dataset, tmp_path / "loader")
        pipe.run(_users((2, "b")), table_name="users")
    finally:
        with connection(postgres_url) as conn:
            conn.execute(f"DROP OWNED BY {role}")
            conn.execute(f"DROP ROLE {role}")
    assert _table(postgres_url, dataset, "users", "id") == [(1,), (2,)]


def _unique_indexes(url: str, dataset: str) -> list[tuple[str, str]]:
    return sorted(
        rows(
            url,
            "SELECT tablename, indexdef FROM pg_indexes WHERE schemaname = "
            f"'{dataset}' AND indexdef LIKE 'CREATE UNIQUE%'",
        )
    )


def test_unique_columns_get_unique_constraints_and_a_repeated_value_fails_the_load(
    postgres_url: str, dataset: str, tmp_path: Path
) -> None:
    """dlt 1.31's create_indexes (on by default on PostgreSQL): every column hinted unique
    -- _dlt_id of each table, the state's too, and the user's -- is UNIQUE, so appending a
    second row of a unique email fails the package instead of loading it twice
    (differential program p704; dlt's indexes are these)."""
    pipe = pipeline(postgres_url, dataset, tmp_path)
    users = loadstone.resource(
        [{"id": 1, "email": "a@x", "kids": [1]}], name="users", columns={"email": {"unique": True}}
    )
    pipe.run(users)
    assert [t for t, _ in _unique_indexes(postgres_url, dataset)] == [
        "_dlt_pipeline_state",
        "users",
        "users",
        "users__kids",
    ]
    with pytest.raises(loadstone.PipelineStepFailed, match="users_email_key"):
        pipe.run(users)
    assert _table(postgres_url, dataset, "users", "id") == [(1,)]


def test_create_indexes_false_makes_no_constraints(
    postgres_url: str, dataset: str, tmp_path: Path
) -> None:
    destination = loadstone.destinations.postgres(credentials=postgres_url, create_indexes=False)
    pipe = loadstone.pipeline(
        "pg_no_idx", destination=destination, dataset_name=dataset, pipelines_dir=str(tmp_path)
    )
    users = loadstone.resource(
        [{"email": "a@x"}], name="users", columns={"email": {"unique": True}}
    )
    pipe.run(users)
    pipe.run(users)
    assert _unique_indexes(postgres_url, dataset) == []
    assert _table(postgres_url, dataset, "users", "email") == [("a@x",), ("a@x",)]
