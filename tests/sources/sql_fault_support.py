"""What the sql_database fault tests share: a table of events, a pipeline, a TCP relay.

The relay stands between loadstone and the tests' PostgreSQL server on its own loopback
port: closing it is the server going away for this test only (the real server is shared by
the other tests of the session, so it is never stopped).
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import psycopg
import sqlalchemy as sa

import loadstone


def create_events(url: str, schema: str, rows: int) -> None:
    """``schema.events(id, updated_at timestamptz)``: ids 1..rows, a second apart."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        conn.execute(f'CREATE SCHEMA "{schema}"')
        conn.execute(
            f"CREATE TABLE {schema}.events (id int PRIMARY KEY, updated_at timestamptz NOT NULL)"
        )
    add_events(url, schema, 1, rows)


def add_events(url: str, schema: str, first: int, last: int) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            f"INSERT INTO {schema}.events SELECT i, timestamptz '2024-01-01 00:00:00+00' "
            f"+ i * interval '1 second' FROM generate_series({first}, {last}) i"
        )


def drop_schema(url: str, schema: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def pipeline(work: Path, name: str = "faults") -> Any:
    return loadstone.pipeline(
        name,
        destination=loadstone.destinations.duckdb(str(work / f"{name}.duckdb")),
        dataset_name="d",
        pipelines_dir=str(work / "pipelines"),
    )


def loaded_ids(work: Path, name: str = "faults") -> list[int]:
    """The ids in the destination, with repeats (empty before the table exists)."""
    with duckdb.connect(str(work / f"{name}.duckdb")) as conn:
        found = conn.execute(
            "select count(*) from information_schema.tables "
            "where table_schema = 'd' and table_name = 'events'"
        ).fetchone()
        if not found or not found[0]:
            return []
        return sorted(i for (i,) in conn.execute("select id from d.events").fetchall())


def cursor_state(p: Any) -> Any:
    """The events cursor's last value as the pipeline keeps it (None before any)."""
    for source in (p.state.get("sources") or {}).values():
        cursor = source.get("resources", {}).get("events", {}).get("incremental", {})
        if "updated_at" in cursor:
            return cursor["updated_at"]["last_value"]
    return None


class Relay:
    """A TCP relay from a loopback port to ``target``, closed with :meth:`close`."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.open: list[socket.socket] = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            self.open += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        """The server is gone: no new connection, every open one cut (a listening socket
        another thread waits on in ``accept`` stays open until shut down)."""
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        for conn in self.open:
            with contextlib.suppress(OSError):
                conn.close()


@contextlib.contextmanager
def relay_to(url: str) -> Iterator[tuple[Relay, str]]:
    """A relay to the server of ``url`` and ``url`` through it."""
    parsed = sa.make_url(url)
    relay = Relay((parsed.host or "127.0.0.1", parsed.port or 5432))
    try:
        yield relay, parsed.set(port=relay.port).render_as_string(hide_password=False)
    finally:
        relay.close()
