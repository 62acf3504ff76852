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
        schema = Schema(schema or dataset_name)
    owner = _Owner(resolved, schema, resolved.name, resolved.naming_for(schema))
    # a Dataset reads only these members of its pipeline
    return Dataset(cast("Pipeline", owner), dataset_name)
