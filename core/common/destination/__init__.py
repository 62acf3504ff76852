"""``loadstone.common.destination``: dlt's ``dlt.common.destination`` names.

``Destination`` is loadstone's destination (a profile and its loader,
:class:`loadstone.destinations.contract.Destination`); ``DestinationCapabilitiesContext`` is
loadstone's ``Capabilities``.
"""

from __future__ import annotations

from loadstone.destinations.contract import Capabilities as DestinationCapabilitiesContext
from loadstone.destinations.contract import Destination
from loadstone.typing import TLoaderFileFormat

__all__ = ["Destination", "DestinationCapabilitiesContext", "TLoaderFileFormat"]
