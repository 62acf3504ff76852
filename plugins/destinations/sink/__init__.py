"""The custom destination: a sink function that receives the normalized rows in batches.

``loadstone.destination`` (dlt's ``@dlt.destination``, ``core/destinations/custom.py``) makes
a destination of a function; this plugin is its loader, registered as the destination
``destination`` (dlt's destination type) through the same entry point as every other one.

Modules, one idea each: ``options`` (the decorator's settings and the function's configured
arguments), ``batches`` (a table's files cut into batches of rows or Arrow record batches),
``progress`` (the rows of each table the function already accepted, kept in the package so
a retry resumes after them), ``client`` (the loader).
"""

from __future__ import annotations

from loadstone.destinations.contract import Capabilities, Destination, LazyClient
from loadstone.hookspecs import hookimpl

CAPABILITIES = Capabilities(
    max_identifier_length=None,
    max_column_identifier_length=None,
    has_case_sensitive_identifiers=True,
    casefold="keep",
    preferred_naming="direct",
    preferred_loader_file_format="typed-jsonl",
    supported_loader_file_formats=("typed-jsonl", "parquet"),
    supports_transactions=False,
    supports_ddl_transactions=False,
    supports_truncate_command=False,
    max_table_nesting=0,
)

SINK = Destination(
    name="destination",
    capabilities=CAPABILITIES,
    client_class=LazyClient("loadstone.plugins.destinations.sink.client", "SinkClient"),
    naming_convention="direct",
    description="a function that receives the rows in batches (loadstone.destination)",
)


@hookimpl
def loadstone_destinations() -> list[Destination]:
    """The custom destination's loader (made of a function by ``loadstone.destination``)."""
    return [SINK]
