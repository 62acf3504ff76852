"""What the run report shows, read once from a pipeline into plain values."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import attrs

from loadstone.exceptions import LoadstoneError

if TYPE_CHECKING:
    from loadstone.pipelines.pipeline import Pipeline
    from loadstone.runtime.trace import PipelineTrace
    from loadstone.schema.stored import TStoredSchema


@attrs.frozen
class LoadRow:
    """One row of ``_dlt_loads``."""

    load_id: str
    schema_name: str
    status: int
    inserted_at: str


@attrs.frozen
class ReportData:
    """Everything the page shows: no object of the pipeline, so rendering is pure."""

    pipeline_name: str
    destination: str
    dataset: str
    #: the default schema's stored document (``Schema.to_dict()``)
    schema: TStoredSchema
    #: (table, rows) of the data tables at the destination
    row_counts: list[tuple[str, int]]
    #: ``_dlt_loads``, newest first
    loads: list[LoadRow]
    #: the last run's trace (``pipeline.last_trace``), or None before the first run
    trace: PipelineTrace | None
    generated_at: float = attrs.field(factory=time.time)
    #: why the destination could not be read, when it could not (the page says so)
    destination_error: str | None = None


def _destination_facts(pipe: Pipeline, limit: int) -> tuple[list[tuple[str, int]], list[LoadRow]]:
    # one connection for every query: a connection each made 9 (~0.2 s CPU on DuckDB)
    from loadstone.destinations.dataset import stored_row_counts

    with pipe.dataset() as dataset:
        counts = stored_row_counts(dataset)
        if "_dlt_loads" not in dataset.stored_tables:
            return counts, []
        rows = dataset.query(
            f"SELECT load_id, schema_name, status, CAST(inserted_at AS VARCHAR) FROM "
            f"{dataset.qualified('_dlt_loads')} ORDER BY load_id DESC LIMIT {int(limit)}"
        ).fetchall()
    return counts, [LoadRow(str(r[0]), str(r[1]), int(r[2]), str(r[3])) for r in rows]


def collect(pipe: Pipeline, history: int = 50) -> ReportData:
    """The report's data for ``pipe``: schema, destination tables, history and last trace.

    A destination that cannot be reached leaves the tables and history empty and says why
    on the page: the schema and the trace are local and still worth seeing.
    """
    error = None
    try:
        counts, loads = _destination_facts(pipe, history)
    except LoadstoneError as failure:
        counts, loads, error = [], [], str(failure)
    return ReportData(
        pipeline_name=pipe.pipeline_name,
        destination=pipe.destination.name,
        dataset=str(pipe.state.get("dataset_name") or pipe.dataset_name),
        schema=pipe.default_schema.to_dict(bump_version=False),
        row_counts=counts,
        loads=loads,
        trace=pipe.last_trace,
        destination_error=error,
    )
