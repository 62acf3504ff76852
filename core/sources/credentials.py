"""``loadstone.sources.credentials``: dlt's ``dlt.sources.credentials``, the configuration specs
a source declares (:mod:`loadstone.config_specs`)."""

from __future__ import annotations

from loadstone.config_specs import (
    BaseConfiguration,
    ConnectionStringCredentials,
    CredentialsConfiguration,
    configspec,
)

__all__ = [
    "BaseConfiguration",
    "ConnectionStringCredentials",
    "CredentialsConfiguration",
    "configspec",
]
