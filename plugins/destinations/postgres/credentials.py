"""PostgreSQL credentials: a connection string or fields, from code or configuration.

The keys are dlt's (``database``, ``username``, ``password``, ``host``, ``port``,
``connect_timeout``; a connection string ``postgresql://user:password@host:port/database``),
so a ``secrets.toml`` written for dlt works unchanged. Configuration goes through the one
resolver (``loadstone.config``): ``destination.postgres.credentials`` as a whole (string or
table), then each field alone (``DESTINATION__POSTGRES__CREDENTIALS__PASSWORD``) on top.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit

import attrs

from loadstone import config
from loadstone.exceptions import PostgresCredentialsMissing

FIELDS = ("database", "username", "password", "host", "port", "connect_timeout")


@attrs.frozen
class PostgresCredentials:
    """Where and as whom to connect; ``options`` are extra libpq parameters (``sslmode``)."""

    database: str | None = None
    username: str | None = None
    password: str | None = attrs.field(default=None, repr=False)
    host: str | None = None
    port: int = 5432
    connect_timeout: int = 15
    options: Mapping[str, str] = attrs.field(factory=dict)

    @classmethod
    def parse(cls, value: object) -> PostgresCredentials:
        """From a connection string, a mapping of fields or credentials (kept); anything else
        is read as the text of a connection string."""
        if isinstance(value, PostgresCredentials):
            return value
        if isinstance(value, Mapping):
            return cls._from_fields(value)
        return cls._from_url(str(value))

    @classmethod
    def _from_fields(cls, fields: Mapping[str, object]) -> PostgresCredentials:
        # values as configuration gives them: attrs takes them as they are (ports as ints)
        known: dict[str, Any] = {k: fields[k] for k in FIELDS if fields.get(k) is not None}
        for key in ("port", "connect_timeout"):
            if key in known:
                known[key] = int(known[key])
        # a ``query`` mapping is how ConnectionStringCredentials (and dlt's credentials as a
        # dict) carry libpq parameters; unset extras (None) are no parameters at all
        extras = {k: v for k, v in fields.items() if k not in FIELDS and k != "query"}
        query = fields.get("query")
        if isinstance(query, Mapping):
            extras.update(query)
        options = {str(k): str(v) for k, v in extras.items() if v is not None}
        options.pop("drivername", None)
        return cls(**known, options=options)

    @classmethod
    def _from_url(cls, url: str) -> PostgresCredentials:
        parts = urlsplit(url)
        query = dict(parse_qsl(parts.query))
        fields: dict[str, object] = {
            "database": unquote(parts.path.lstrip("/")) or None,
            "username": unquote(parts.username) if parts.username else None,
            "password": unquote(parts.password) if parts.password else None,
            "host": parts.hostname,
            "port": parts.port or 5432,
            **query,
        }
        return cls._from_fields(fields)

    def with_fields(self, fields: Mapping[str, object]) -> PostgresCredentials:
        """A copy with the given fields replaced (configuration on top of a string)."""
        changed = PostgresCredentials._from_fields({**self.as_fields(), **fields})
        return attrs.evolve(changed, options={**self.options, **changed.options})

    def as_fields(self) -> dict[str, object]:
        fields = {k: getattr(self, k) for k in FIELDS}
        return {k: v for k, v in fields.items() if v is not None}

    def conninfo(self) -> dict[str, Any]:
        """Keyword arguments of ``psycopg.connect`` (Any: its keywords have many types)."""
        info: dict[str, str | int | None] = {
            "dbname": self.database,
            "user": self.username,
            "password": self.password,
            "host": self.host,
            "port": self.port,
            "connect_timeout": self.connect_timeout,
            **self.options,
        }
        return {k: v for k, v in info.items() if v is not None}

    def url(self) -> str:
        """The connection string, password hidden (for messages and the load info)."""
        user = f"{quote(self.username)}:***@" if self.username else ""
        return f"postgresql://{user}{self.host}:{self.port}/{self.database}"


def resolve_credentials(destination_name: str, explicit: object) -> PostgresCredentials:
    """Explicit credentials, else configuration; fields configured alone apply on top, unless
    they come from a lower-ranked place than the whole (a toml field under an environment
    connection string is ignored, as in dlt; see ``loadstone.config.resolve_fields``)."""
    configured, fields = config.resolve_fields(
        ("destination", destination_name, "credentials"), FIELDS
    )
    base = configured if explicit is None else explicit
    credentials = PostgresCredentials() if base is None else PostgresCredentials.parse(base)
    if explicit is None or isinstance(explicit, Mapping):
        overrides = {
            key: value
            for key, value in fields.items()
            if value is not None and not isinstance(value, Mapping)
        }
        if isinstance(explicit, Mapping):  # code wins over configuration
            overrides = {k: v for k, v in overrides.items() if explicit.get(k) is None}
        credentials = credentials.with_fields(overrides)
    for field in ("database", "host"):
        if not getattr(credentials, field):
            raise PostgresCredentialsMissing(destination_name, field)
    return credentials
