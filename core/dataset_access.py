"""``loadstone.dataset(destination, dataset_name)``: read a dataset without a pipeline.

dlt users open a dataset a pipeline loaded from another program, knowing only where it is:
``dlt.dataset(dlt.destinations.duckdb("shop.duckdb"), "shop_data")["orders"].fetchall()``.
The :class:`~loadstone.Dataset` a pipeline gives reads through its destination, schema and
name; here those three come from the arguments instead. A destination given by name with no
credentials opens its default location for the name, as dlt's does (``duckdb.duckdb``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import attrs

from loadstone.destinations.contract import Destination
from loadstone.destinations.dataset import Dataset
from loadstone.exceptions import DatasetError
from loadstone.runtime.target import resolve_destination
from loadstone.schema import Schema

if TYPE_CHECKING:
    from loadstone.naming import NamingConvention
    from loadstone.pipelines.pipeline import Pipeline

__all__ = ["dataset"]


@attrs.frozen
class _Owner:
    """What a :class:`Dataset` reads of its pipeline: where, with which schema and naming
    convention, under which name (a DuckDB file without credentials is named after it)."""

    destination: Destination
    default_schema: Schema
    pipeline_name: str
    #: no pipeline resolved a convention: the destination's override, else the schema's
    naming: NamingConvention | None


def dataset(
    destination: str | Destination, dataset_name: str, schema: Schema | str | None = None
) -> Dataset:
    """The dataset ``dataset_name`` at ``destination`` (a name or a destination object);
    ``schema`` names its tables' schema (a Schema or a name; the dataset's name when None)."""
    resolved = resolve_destination(destination)
    if not isinstance(schema, Schema):
        stored = _stored_schema(resolved, dataset_name, schema)
        schema = stored or Schema(schema or dataset_name)
    return _dataset(resolved, dataset_name, schema)


def _dataset(destination: Destination, dataset_name: str, schema: Schema) -> Dataset:
    owner = _Owner(destination, schema, destination.name, destination.naming_for(schema))
    # a Dataset reads only these members of its pipeline
    return Dataset(cast("Pipeline", owner), dataset_name)


def _stored_schema(destination: Destination, dataset_name: str, name: str | None) -> Schema | None:
    """The schema the dataset's loads stored (``_dlt_version``): the newest one named
    ``name``, or the newest of any name, as dlt's ``dataset()`` reads it (its tables, their
    columns and parents); None when the dataset holds none."""
    probe = _dataset(destination, dataset_name, Schema(name or dataset_name))
    try:
        if name is None:
            newest = probe("SELECT schema_name FROM _dlt_version ORDER BY inserted_at DESC LIMIT 1")
            name = cast("str | None", newest.fetchscalar())
        if name is None:
            return None
        with probe._client() as client:
            stored = client.get_stored_schema(name)
    except DatasetError:  # no _dlt_version: nothing was loaded there
        return None
    return Schema.from_dict(stored) if stored else None
