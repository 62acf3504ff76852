"""An auth named by its type alone (``"auth": "bearer"``): its fields from configuration.

dlt 1.31 reads them where a source's credentials are kept: ``sources.<section>.<name>.
credentials.<field>``, then ``sources.<section>.credentials``, ``sources.<name>.credentials``,
``sources.credentials`` and ``credentials`` (``secrets.toml``, or the environment as
``SOURCES__REST_API__CREDENTIALS__TOKEN``); section and name are ``rest_api`` unless
``rest_api_source`` is given others. A required field found nowhere is a
``ConfigFieldMissingException`` naming the keys tried, when the source is made.
"""

from __future__ import annotations

import attrs

from loadstone import config
from loadstone.exceptions import ConfigFieldMissingException

#: the fields each auth type reads, and which of them it cannot do without
FIELDS: dict[str, tuple[str, ...]] = {
    "bearer": ("token",),
    "api_key": ("name", "api_key", "location"),
    "http_basic": ("username", "password"),
    "oauth2_client_credentials": (
        "access_token_url",
        "client_id",
        "client_secret",
        "access_token_request_data",
        "default_token_expiration",
    ),
}
REQUIRED: dict[str, tuple[str, ...]] = {
    "bearer": ("token",),
    "api_key": ("api_key",),
    "http_basic": ("username", "password"),
    "oauth2_client_credentials": ("access_token_url", "client_id", "client_secret"),
}
CLASS_NAMES = {
    "bearer": "BearerTokenAuth",
    "api_key": "APIKeyAuth",
    "http_basic": "HttpBasicAuth",
    "oauth2_client_credentials": "OAuth2ClientCredentials",
}


@attrs.frozen
class Scope:
    """Where a source's configuration is read: ``sources.<section>.<name>``."""

    section: str = "rest_api"
    name: str = "rest_api"

    def candidates(self, field: str) -> list[tuple[str, ...]]:
        """The keys of ``field``, most specific first (each once), as dlt tries them."""
        prefixes = [
            ("sources", self.section, self.name),
            ("sources", self.section),
            ("sources", self.name),
            ("sources",),
            (),
        ]
        keys: list[tuple[str, ...]] = []
        for prefix in prefixes:
            key = (*prefix, "credentials", field)
            if key not in keys:
                keys.append(key)
        return keys


def configured_auth(kind: str, scope: Scope) -> dict[str, object]:
    """The options of an auth of type ``kind`` found in configuration."""
    options: dict[str, object] = {}
    missing: dict[str, list[str]] = {}
    for field in FIELDS[kind]:
        keys = scope.candidates(field)
        found = config.locate(*keys)
        if found.origin != "default":
            options[field] = found.value
        elif field in REQUIRED[kind]:
            missing[field] = [".".join(key) for key in keys]
    if missing:
        raise ConfigFieldMissingException(CLASS_NAMES[kind], missing)
    return options
