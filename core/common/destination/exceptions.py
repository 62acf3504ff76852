"""``loadstone.common.destination.exceptions``: dlt's ``dlt.common.destination.exceptions``
names, the same classes as :mod:`loadstone.destinations.exceptions` gives."""

from __future__ import annotations

from loadstone.destinations.exceptions import (
    DestinationException,
    DestinationIncompatibleLoaderFileFormatException,
    DestinationTerminalException,
    UnknownDestinationModule,
)

__all__ = [
    "DestinationException",
    "DestinationIncompatibleLoaderFileFormatException",
    "DestinationTerminalException",
    "UnknownDestinationModule",
]
