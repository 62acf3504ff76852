"""``loadstone.common.configuration.exceptions``: dlt's path to the errors of configuration."""

from __future__ import annotations

from loadstone.exceptions import (
    ConfigFieldMissingException,
    ConfigValueCannotBeCoercedException,
    ConfigValueError,
)

__all__ = [
    "ConfigFieldMissingException",
    "ConfigValueCannotBeCoercedException",
    "ConfigValueError",
]
