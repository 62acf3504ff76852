"""``loadstone.common.configuration``: dlt's ``dlt.common.configuration`` names: ``configspec``
and the error of a configured value found nowhere."""

from __future__ import annotations

from loadstone.config_specs import configspec
from loadstone.exceptions import ConfigFieldMissingException

__all__ = ["ConfigFieldMissingException", "configspec"]
