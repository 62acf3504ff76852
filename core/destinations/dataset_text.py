"""What ``print(pipeline.dataset())`` and ``print(dataset.table)`` show, as dlt 1.31 shows it.

Users look at a dataset and a relation in a notebook or a log before reading rows: the
dataset names where it is and its tables (per schema), a relation its query and its
columns with their types. The query is loadstone's SQL as it is sent (dlt prints its
sqlglot form); the rest is dlt's wording.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from loadstone.exceptions import LoadstoneError

if TYPE_CHECKING:
    from loadstone.destinations.contract import Destination
    from loadstone.schema import Schema

__all__ = ["dataset_text", "relation_text"]


class _Dataset(Protocol):
    dataset_name: str

    @property
    def stored_tables(self) -> list[str]: ...


class _Relation(Protocol):
    sql: str

    @property
    def columns_schema(self) -> dict[str, dict[str, Any]]: ...


def dataset_text(
    dataset: _Dataset, schemas: Sequence[Schema], destination: Destination, pipeline_name: str
) -> str:
    """dlt's text of a dataset: where it is, then the data tables of each of the pipeline's
    ``schemas`` it reads (or that the destination has no such dataset)."""
    head = f"Dataset `{dataset.dataset_name}` at `{destination.kind}[{_where(destination, pipeline_name)}]`"  # fmt: skip
    try:
        stored = dataset.stored_tables
    except LoadstoneError:
        stored = []
    if not stored:
        return f"{head} \nDataset is not available at the destination.\n"
    if len(schemas) == 1:
        tables = ", ".join(schemas[0].data_table_names())
        return f"{head} with schema `{schemas[0].name}`:\n  {tables}"
    lines = [f"  {s.name}: {', '.join(s.data_table_names())}" for s in schemas]
    return f"{head} with schemas:\n" + "\n".join(lines)


def relation_text(relation: _Relation) -> str:
    """dlt's text of a relation: its query, then its columns and their types."""
    query = "\n".join(f"  {line}" for line in relation.sql.splitlines())
    try:
        columns = relation.columns_schema
    except LoadstoneError as error:  # a query the destination refuses: say so, not raise
        return f"Relation query:\n{query}\nColumns: unknown ({error})\n"
    listed = "".join(f"  {name} {c.get('data_type')}\n" for name, c in columns.items())
    return f"Relation query:\n{query}\nColumns:\n{listed}"


def _where(destination: Destination, pipeline_name: str) -> str:
    """The destination's location as dlt shows it: a DuckDB file as its ``duckdb:///`` URL,
    credentials without their password."""
    stored = destination.stored_at(pipeline_name)
    if stored is not None:
        location = stored.location
        return location if "://" in location else f"{destination.kind}:///{location}"
    shown = destination.shown_location()
    if shown is not None:
        return shown
    credentials = destination.config.get("credentials")
    if not isinstance(credentials, str):
        return ""
    parts = urlsplit(credentials)
    if parts.password is None:
        return credentials
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))
