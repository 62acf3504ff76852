"""``loadstone.destinations.exceptions``: dlt's ``dlt.destinations.exceptions`` names.

``DestinationException`` is loadstone's ``DestinationError`` (the root of every destination
error) and ``DestinationTerminalException`` its ``LoadRefused``: the destination refused the
package's data, so retrying the same package cannot succeed.
"""

from __future__ import annotations

from loadstone.exceptions import DestinationError as DestinationException
from loadstone.exceptions import LoadRefused as DestinationTerminalException

__all__ = ["DestinationException", "DestinationTerminalException"]
