"""PostgreSQL credentials: dlt's keys, from code, secrets.toml or the environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadstone.exceptions import PostgresCredentialsMissing
from loadstone.plugins.destinations.postgres.credentials import (
    PostgresCredentials,
    resolve_credentials,
)


def test_a_connection_string_gives_every_field() -> None:
    got = PostgresCredentials.parse("postgresql://me:p%40ss@db.local:6543/shop?sslmode=disable")
    assert (got.username, got.password, got.host, got.port, got.database) == (
        "me",
        "p@ss",
        "db.local",
        6543,
        "shop",
    )
    assert got.options == {"sslmode": "disable"}
    assert got.url() == "postgresql://me:***@db.local:6543/shop"


def test_fields_from_code_win_over_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DESTINATION__POSTGRES__CREDENTIALS__PASSWORD", "from-env")
    got = resolve_credentials("postgres", {"database": "d", "host": "h", "password": "code"})
    assert got.password == "code"


def _secrets_toml(folder: str) -> None:
    """A ``secrets.toml`` in ``folder`` with every field of the credentials (password toml)."""
    Path(folder).mkdir()
    (Path(folder) / "secrets.toml").write_text(
        '[destination.postgres.credentials]\ndatabase = "shop"\nusername = "loader"\n'
        'password = "toml"\nhost = "127.0.0.1"\nport = 5433\n'
    )


def test_secrets_toml_section_with_an_env_field_on_top(monkeypatch: pytest.MonkeyPatch) -> None:
    _secrets_toml(".loadstone")
    monkeypatch.setenv("DESTINATION__POSTGRES__CREDENTIALS__PASSWORD", "env")
    got = resolve_credentials("postgres", None)
    assert (got.database, got.username, got.password, got.port) == ("shop", "loader", "env", 5433)


def test_a_connection_string_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DESTINATION__POSTGRES__CREDENTIALS", "postgresql://u:p@h:1/db")
    assert resolve_credentials("postgres", None).conninfo()["port"] == 1


def test_a_connection_string_in_the_environment_replaces_the_fields_of_secrets_toml(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The environment ranks above the files, for the whole value as for each field (dlt's):
    the toml's password must not slip into the connection string given in the environment."""
    _secrets_toml(".dlt")
    monkeypatch.setenv("DESTINATION__POSTGRES__CREDENTIALS", "postgresql://u:env@h:1/db")
    got = resolve_credentials("postgres", None)
    assert (got.database, got.username, got.password, got.port) == ("db", "u", "env", 1)


def test_no_credentials_is_a_one_line_error_naming_the_keys() -> None:
    with pytest.raises(PostgresCredentialsMissing, match="DESTINATION__POSTGRES__CREDENTIALS"):
        resolve_credentials("postgres", None)


def test_connection_string_credentials_are_read_with_their_query_as_parameters() -> None:
    """dlt.destinations.postgres(credentials=ConnectionStringCredentials(url)) connects in
    dlt 1.31; its ``query`` field (None or a mapping) was passed to libpq as an option
    'query' and every connection failed (differential program p704)."""
    from loadstone.sources.credentials import ConnectionStringCredentials

    plain = PostgresCredentials.parse(ConnectionStringCredentials("postgresql://u:p@h:5/db"))
    assert (plain.database, plain.username, plain.port, plain.options) == ("db", "u", 5, {})
    tuned = PostgresCredentials.parse(
        ConnectionStringCredentials("postgresql://u:p@h:5/db?sslmode=disable")
    )
    assert tuned.options == {"sslmode": "disable"}
