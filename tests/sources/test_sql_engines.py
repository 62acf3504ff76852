"""Engines of the same credentials share their dialect (its compiled reflection queries), never
their connections or the events a user adds (core/sources/sql_database/engines.py)."""

from __future__ import annotations

import sqlalchemy as sa

from loadstone.sources.sql_database import engine_from_credentials


def _backend_pid(engine: sa.Engine) -> int:
    with engine.connect() as conn:
        return int(conn.exec_driver_sql("select pg_backend_pid()").scalar_one())


def test_two_calls_share_the_dialect_so_statements_compile_once(postgres_url: str) -> None:
    first, second = engine_from_credentials(postgres_url), engine_from_credentials(postgres_url)
    assert first is not second
    assert first.dialect is second.dialect


def test_a_connection_one_engine_pooled_is_not_handed_to_another(postgres_url: str) -> None:
    first, second = engine_from_credentials(postgres_url), engine_from_credentials(postgres_url)
    pooled = _backend_pid(first)
    assert _backend_pid(first) == pooled
    assert _backend_pid(second) != pooled
    first.dispose()
    second.dispose()


def test_an_event_added_to_one_engine_stays_on_it(postgres_url: str) -> None:
    first, second = engine_from_credentials(postgres_url), engine_from_credentials(postgres_url)
    connected: list[str] = []
    sa.event.listen(first, "connect", lambda *_: connected.append("first"))
    _backend_pid(second)
    _backend_pid(engine_from_credentials(postgres_url))
    assert connected == []
    _backend_pid(first)
    assert connected == ["first"]


def test_other_options_make_another_dialect(postgres_url: str) -> None:
    plain = engine_from_credentials(postgres_url)
    hidden = engine_from_credentials(postgres_url, {"hide_parameters": True})
    assert plain.dialect is not hidden.dialect
    assert hidden.hide_parameters and not plain.hide_parameters
