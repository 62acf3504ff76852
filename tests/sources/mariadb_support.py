"""The tests' MariaDB server (``LOADSTONE_TEST_MARIADB``, started by ``bash .ci/mariadb run``).

A missing server is an error, never a skip: the README's test command wraps the suite in
``bash .ci/mariadb run`` as it does in ``.ci/postgres run``. Each test module gets databases
of its own (other sessions may share the server).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa


@pytest.fixture(scope="session")
def mariadb_url() -> str:
    """The server's URL (``mysql+pymysql://loadstone:loadstone@127.0.0.1:PORT/loadstone``)."""
    url = os.environ.get("LOADSTONE_TEST_MARIADB")
    if not url:
        raise RuntimeError(
            'LOADSTONE_TEST_MARIADB is not set: start a server with eval "$(bash .ci/mariadb start)"'
        )
    return url


def setup_engine(url: str) -> sa.Engine:
    """An engine for the tests' own statements (set-up, kills), not the programs under test.

    Given no TLS option, PyMySQL prefers TLS: it builds an SSL context (the system's CA
    certificates loaded, ~47 ms CPU) for every connection, though the test server offers no
    TLS. The tests' own connections turn that off; ``sql_table``'s keep PyMySQL's default."""
    if sa.make_url(url).get_backend_name() == "mysql":
        return sa.create_engine(url, connect_args={"ssl_disabled": True})
    return sa.create_engine(url)


def run_script(url: str, script: str) -> None:
    """Runs the ``;``-separated statements of ``script`` (no ``;`` inside a statement)."""
    engine = setup_engine(url)
    with engine.begin() as conn:
        for statement in script.split(";\n"):
            body = "\n".join(
                line for line in statement.splitlines() if not line.startswith("--")
            ).strip()
            if body:
                conn.exec_driver_sql(body.rstrip(";").replace("%", "%%"))
    engine.dispose()


def database_url(url: str, database: str) -> str:
    """``url`` on another database of the same server."""
    return sa.make_url(url).set(database=database).render_as_string(hide_password=False)


@pytest.fixture
def mariadb_database(mariadb_url: str) -> Iterator[str]:
    """The URL of a new empty database, dropped after the test."""
    name = f"t_{uuid.uuid4().hex[:10]}"
    run_script(mariadb_url, f"CREATE DATABASE {name} CHARACTER SET utf8mb4")
    yield database_url(mariadb_url, name)
    run_script(mariadb_url, f"DROP DATABASE IF EXISTS {name}")
