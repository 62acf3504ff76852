"""What a dataset or a SQL client reads of its pipeline (:class:`DatasetOwner`), and the
destination client both open from it for one dataset (:func:`open_reading_client`); apart
from :mod:`loadstone.destinations.dataset` so the SQL client can use them without a cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from loadstone.destinations.contract import Destination, DestinationClient
    from loadstone.naming import NamingConvention
    from loadstone.schema import Schema


class DatasetOwner(Protocol):
    """What a dataset reads of its pipeline: where, with which schema and naming convention,
    under which name. :class:`loadstone.pipelines.pipeline.Pipeline` is one; named by
    protocol, as the destinations lie below the pipeline (``loadstone.dataset()`` passes a
    small stand-in)."""

    @property
    def destination(self) -> Destination: ...

    @property
    def default_schema(self) -> Schema: ...

    @property
    def pipeline_name(self) -> str: ...

    @property
    def naming(self) -> NamingConvention | None: ...


def open_reading_client(pipeline: DatasetOwner, dataset_name: str) -> DestinationClient:
    """A client of the pipeline's destination for reading ``dataset_name``: unqualified table
    names in SQL resolve in the dataset, as in dlt, where the client can."""
    client: DestinationClient = pipeline.destination.client(
        pipeline.default_schema,
        dataset_name,
        pipeline_name=pipeline.pipeline_name,
        naming=pipeline.naming,  # the convention the pipeline loaded with, resolved once
    )
    client.use_dataset()
    return client
