"""``loadstone.destinations.exceptions``: dlt's ``dlt.destinations.exceptions`` names.

``DestinationException`` is loadstone's ``DestinationError`` (the root of every destination
error) and ``DestinationTerminalException`` its ``LoadRefused``: the destination refused the
package's data, so retrying the same package cannot succeed. A failed query of
``pipeline.dataset()`` or ``sql_client()`` raises a ``DatabaseException``: undefined relation,
terminal or transient as dlt 1.31 tells them apart on DuckDB and PostgreSQL.
"""

from __future__ import annotations

from loadstone.exceptions import DatabaseTerminalError as DatabaseTerminalException
from loadstone.exceptions import DatabaseTransientError as DatabaseTransientException
from loadstone.exceptions import DatabaseUndefinedRelation
from loadstone.exceptions import DatasetError as DatabaseException
from loadstone.exceptions import DestinationError as DestinationException
from loadstone.exceptions import (
    LoaderFileFormatNotSupported as DestinationIncompatibleLoaderFileFormatException,
)
from loadstone.exceptions import LoadRefused as DestinationTerminalException
from loadstone.exceptions import UnknownDestination as UnknownDestinationModule

__all__ = [
    "DatabaseException",
    "DatabaseTerminalException",
    "DatabaseTransientException",
    "DatabaseUndefinedRelation",
    "DestinationException",
    "DestinationIncompatibleLoaderFileFormatException",
    "DestinationTerminalException",
    "UnknownDestinationModule",
]
