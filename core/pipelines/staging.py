"""``staging=`` of ``pipeline()``, ``run()`` and ``attach()``: a staging destination, checked
as dlt 1.31 checks it.

A staging destination holds the files a warehouse then loads from (dlt's
``staging="filesystem"`` in front of Snowflake, BigQuery, Athena ...). Whether a destination
loads that way, and whether one can hold the staged files, are its plugin's capabilities
(``supported_staging_file_formats``, ``can_be_staging``): the pipeline only asks. None of
loadstone's loaders (DuckDB, PostgreSQL, the filesystem, Spark) loads through a staging
destination, and dlt 1.31 refuses staging for the same ones, with the same two errors:
:class:`~loadstone.exceptions.DestinationNoStagingMode` for a staging destination that cannot
hold files, :class:`~loadstone.exceptions.DestinationLoadingViaStagingNotSupported` for a
destination that does not load from one (``tests/fixtures/dlt_staging.json``). Both are
raised before anything is extracted, and a refused ``staging=`` is not kept: later runs of
the pipeline work (dlt keeps it on the pipeline object and every later run fails).
"""

from __future__ import annotations

import attrs

from loadstone.destinations.contract import Destination
from loadstone.exceptions import (
    DestinationLoadingViaStagingNotSupported,
    DestinationNoStagingMode,
)
from loadstone.runtime.target import resolve_destination

__all__ = ["check_staging", "destinations_of", "staging_destination"]


def staging_destination(staging: object) -> Destination | None:
    """The staging destination ``staging`` names (None or ``""``: none), if it can be one."""
    if staging is None or staging == "":
        return None
    if not isinstance(staging, (str, Destination)):
        raise TypeError(f"staging must be a destination name or object, got {staging!r}")
    found = resolve_destination(staging)
    if not found.capabilities.can_be_staging:
        raise DestinationNoStagingMode(found.destination_name)
    return found


def check_staging(
    destination: Destination | None, staging: object, kept: Destination | None = None
) -> Destination | None:
    """The staging destination a pipeline keeps: ``staging`` when given, else ``kept``;
    refused when ``destination`` (None: not chosen yet) does not load through one."""
    chosen = staging_destination(staging) if staging is not None else kept
    if chosen is not None and destination is not None:
        if not destination.capabilities.supported_staging_file_formats:
            raise DestinationLoadingViaStagingNotSupported(destination.destination_name)
    return chosen


def destinations_of(
    destination: object, stored: tuple[str, str | None] | None, staging: object
) -> tuple[Destination, Destination | None]:
    """A new pipeline's destination (given, else the one its state names: its type, renamed
    as it was, else the default) and staging destination, checked against a destination
    given or stored (dlt accepts a staging destination before any destination is chosen)."""
    if destination is None and stored is not None:
        kind, name = stored
        found = resolve_destination(kind)
        found = found if name is None else attrs.evolve(found, name=name)
        return found, check_staging(found, staging)
    found = resolve_destination(destination)
    return found, check_staging(None if destination is None else found, staging)
