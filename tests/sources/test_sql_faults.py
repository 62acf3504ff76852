"""Faults while ``sql_table`` reads the tests' PostgreSQL server, with an incremental cursor.

Each fault fails the run in one line naming the table, loads nothing of it, leaves the cursor
where the last load put it, and the next run loads every row exactly once. The connection is
a role of the test's own with a password no other text holds, so a password in an error, the
trace or the state would be found (on MariaDB the tests' own user: its password is the
word ``loadstone``, which the pipeline's files hold anyway). The server itself is shared by the session: "the server
stopped" is a loopback relay in front of it being closed (tests/sources/sql_fault_support.py).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
import sqlalchemy as sa

import loadstone
from loadstone.sources.sql_database import sql_table
from tests.sources.mariadb_support import mariadb_database, mariadb_url, run_script, setup_engine
from tests.sources.sql_fault_support import (
    add_events,
    create_events,
    cursor_state,
    drop_schema,
    loaded_ids,
    pipeline,
    relay_to,
)

REPO = Path(__file__).resolve().parents[2]
__all__ = ["mariadb_database", "mariadb_url"]  # fixtures, used by name


@pytest.fixture
def source(postgres_url: str) -> Iterator[tuple[str, str, str]]:
    """(schema, url of a role of its own, its password): events 1..10 in the schema."""
    tag = uuid.uuid4().hex[:10]
    schema, role, password = f"faults_{tag}", f"faults_{tag}", f"pw-{uuid.uuid4().hex}"
    create_events(postgres_url, schema, 10)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
        conn.execute(f"GRANT USAGE ON SCHEMA {schema} TO {role}")
        conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {role}")
    url = sa.make_url(postgres_url).set(
        username=role, password=password, query={"application_name": role}
    )
    yield schema, url.render_as_string(hide_password=False), password
    drop_schema(postgres_url, schema)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"DROP ROLE {role}")


def _events(url: str, schema: str, **options: Any) -> Any:
    return sql_table(
        url,
        table="events",
        schema=schema,
        chunk_size=100,
        incremental=loadstone.sources.incremental("updated_at"),
        **options,
    )


def _fails_naming_the_table(p: Any, resource: Any, password: str) -> str:
    with pytest.raises(loadstone.LoadstoneError) as failed:
        p.run(resource)
    message = str(failed.value)
    assert "table 'events'" in message
    assert "\n" not in message
    assert password not in message
    return message


def _no_password_in_files(work: Path, password: str) -> None:
    for folder, _, names in os.walk(work):
        for name in names:
            assert password.encode() not in (Path(folder) / name).read_bytes(), name


def test_a_connection_killed_mid_read_loads_nothing_and_the_next_run_loads_each_row_once(
    source: tuple[str, str, str], postgres_url: str, tmp_path: Path
) -> None:
    schema, url, password = source
    p = pipeline(tmp_path)
    p.run(_events(url, schema))
    before = cursor_state(p)
    add_events(postgres_url, schema, 11, 500)  # five pages of 100 rows
    role = sa.make_url(url).username
    killed: list[bool] = []

    def kill_the_reader(item: Any) -> Any:  # the server ends the reading backend, once
        if killed:
            return item
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(  # waits (up to 10 s) until the backend is gone
                "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity "
                "WHERE application_name = %s",
                [role],
            )
        killed.append(True)
        return item

    _fails_naming_the_table(p, _events(url, schema).add_map(kill_the_reader), password)
    assert loaded_ids(tmp_path) == list(range(1, 11))
    assert cursor_state(p) == before
    p.run(_events(url, schema))
    assert loaded_ids(tmp_path) == list(range(1, 501))
    _no_password_in_files(tmp_path, password)


def test_the_server_gone_between_two_runs_fails_then_the_next_run_loads_each_row_once(
    source: tuple[str, str, str], postgres_url: str, tmp_path: Path
) -> None:
    schema, url, password = source
    p = pipeline(tmp_path)
    with relay_to(url) as (relay, through):
        p.run(_events(through, schema))
        before = cursor_state(p)
        relay.close()
        add_events(postgres_url, schema, 11, 20)
        _fails_naming_the_table(p, _events(through, schema, defer_table_reflect=True), password)
    assert loaded_ids(tmp_path) == list(range(1, 11))
    assert cursor_state(p) == before
    with relay_to(url) as (_, back):
        p.run(_events(back, schema))
    assert loaded_ids(tmp_path) == list(range(1, 21))
    _no_password_in_files(tmp_path, password)


def test_a_table_dropped_between_reflection_and_read_fails_naming_it(
    source: tuple[str, str, str], postgres_url: str, tmp_path: Path
) -> None:
    schema, url, password = source
    p = pipeline(tmp_path)
    reflected = _events(url, schema)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"ALTER TABLE {schema}.events RENAME TO gone")
    _fails_naming_the_table(p, reflected, password)
    assert loaded_ids(tmp_path) == []
    assert cursor_state(p) is None
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"ALTER TABLE {schema}.gone RENAME TO events")
    p.run(_events(url, schema))
    assert loaded_ids(tmp_path) == list(range(1, 11))


KILLED = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    import loadstone
    from loadstone.sources.sql_database import sql_table
    from tests.sources.sql_fault_support import pipeline

    url, schema, work = sys.argv[1], sys.argv[2], Path(sys.argv[3])

    def wait_to_be_killed(item):
        (work / "reading").write_text("1")
        time.sleep(120)
        return item

    table = sql_table(url, table="events", schema=schema, chunk_size=100,
                      incremental=loadstone.sources.incremental("updated_at"))
    pipeline(work).run(table.add_map(wait_to_be_killed))
    """
)


def test_the_extracting_process_killed_leaves_a_pipeline_the_next_run_loads_once(
    source: tuple[str, str, str], postgres_url: str, tmp_path: Path
) -> None:
    schema, url, password = source
    add_events(postgres_url, schema, 11, 500)
    child = subprocess.Popen([sys.executable, "-c", KILLED, url, schema, str(tmp_path)], cwd=REPO)
    try:
        while not (tmp_path / "reading").exists():
            assert child.poll() is None, "the extracting process ended before it was killed"
            time.sleep(0.1)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait()
    p = pipeline(tmp_path)
    assert loaded_ids(tmp_path) == []
    p.run(_events(url, schema))
    assert loaded_ids(tmp_path) == list(range(1, 501))
    _no_password_in_files(tmp_path, password)


def test_a_mariadb_connection_killed_mid_read_loads_nothing_then_each_row_once(
    mariadb_database: str, tmp_path: Path
) -> None:
    run_script(
        mariadb_database,
        # rows wide enough (8 MB) that the server is still sending when the reader is killed
        "CREATE TABLE events (id INT PRIMARY KEY, updated_at DATETIME(6) NOT NULL, "
        "pad CHAR(255));\n"
        "INSERT INTO events SELECT seq, TIMESTAMP '2024-01-01 00:00:00' + INTERVAL seq SECOND, "
        "REPEAT('x', 255) FROM seq_1_to_30000",
    )
    p = pipeline(tmp_path)

    killed: list[int] = []

    def kill_the_reader(item: Any) -> Any:  # the server ends the connection reading events
        if killed:
            return item
        engine = setup_engine(mariadb_database)
        with engine.begin() as conn:
            ids = conn.exec_driver_sql(
                "SELECT id FROM information_schema.PROCESSLIST "
                "WHERE DB = DATABASE() AND ID <> CONNECTION_ID()"
            ).fetchall()
            for (found,) in ids:
                conn.exec_driver_sql(f"KILL {found}")
                killed.append(found)
        engine.dispose()
        return item

    events = sql_table(
        mariadb_database,
        table="events",
        chunk_size=100,
        incremental=loadstone.sources.incremental("updated_at"),
    )
    password = sa.make_url(mariadb_database).password or ""
    _fails_naming_the_table(p, events.add_map(kill_the_reader), password)
    assert loaded_ids(tmp_path) == []
    assert cursor_state(p) is None
    p.run(
        sql_table(
            mariadb_database,
            table="events",
            incremental=loadstone.sources.incremental("updated_at"),
        )
    )
    assert loaded_ids(tmp_path) == list(range(1, 30001))
