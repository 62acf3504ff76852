"""``loadstone.common.configuration.specs``: dlt's configuration specs
(:mod:`loadstone.config_specs`)."""

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
