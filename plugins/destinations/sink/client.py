"""The custom destination's loader: every table of a package, batch by batch, to a function.

Order: tables in the schema's order (a root before its nested tables), then, when
``skip_dlt_columns_and_tables=False`` and the package carries the pipeline state, its
``_dlt_pipeline_state`` row. dlt 1.31 runs tables on threads, in no fixed order: this is one
of its orders, kept the same from run to run.

A batch the function raises on is tried again, up to :data:`ATTEMPTS` times in all (dlt's
retries of a job within one load); then the load fails with :class:`LoadFailed` (its cause
the function's exception) and the package stays pending: the next run sends the rest of the
package, starting with the batch that failed (``progress``). Nothing is stored anywhere else:
no ``_dlt_loads`` row, no schema, no state to restore, no SQL to read the data back.
"""

from __future__ import annotations

import datetime as _dt
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from loadstone.destinations.contract import (
    SYSTEM_TABLES,
    ClosesOnExit,
    Destination,
    LoadRequest,
    Row,
    StateDict,
    encode_state,
    load_files,
    new_row_id,
)
from loadstone.destinations.custom import SINK_DESTINATION_TYPE
from loadstone.exceptions import LoadFailed, SqlClientNotAvailable
from loadstone.plugins.destinations.sink import batches
from loadstone.plugins.destinations.sink.job_files import job_files
from loadstone.plugins.destinations.sink.options import SinkOptions
from loadstone.plugins.destinations.sink.progress import Progress

if TYPE_CHECKING:
    from loadstone.schema import Schema
    from loadstone.schema.stored import TStoredSchema

#: attempts of one batch within one load (dlt 1.31: a job failing 5 times fails the load)
ATTEMPTS = 5
STATE_TABLE = "_dlt_pipeline_state"


class SinkClient(ClosesOnExit):
    """Sends packages to a sink function (see the module docstring)."""

    def __init__(
        self,
        destination: Destination,
        schema: Schema | None,
        dataset_name: str,
        *,
        pipeline_name: str | None = None,
        **_options: object,
    ) -> None:
        self.destination = destination
        self.schema = schema
        self.dataset_name = dataset_name
        self.pipeline_name = pipeline_name
        self.options = SinkOptions.of(destination)
        self.sink: Callable[..., Any] = self.options.bound()

    # --- loading ------------------------------------------------------------------------

    def load_package(self, request: LoadRequest) -> None:
        """Send every table's rows not yet accepted, then the state row (when asked for)."""
        progress = Progress.of_package(request.package_dir)
        stored = request.schema.to_dict()["tables"]
        for name in self._table_order(request, stored):
            files = load_files(request.tables[name])
            table = batches.table_schema(stored, name, self.options.skip_dlt)
            start = progress.delivered(name)
            if self.options.batch_size == 0:
                self._send_files(request, name, files, table, progress)
                continue
            for batch in batches.record_batches(files, self.options.batch_size, start):
                self._send(request.load_id, name, batch, table, [str(f) for f in files])
                progress.accepted(name, batch.num_rows)
        if request.pipeline_state is not None and not self.options.skip_dlt:
            if progress.delivered(STATE_TABLE) == 0:
                row = self._state_batch(request)
                table = batches.table_schema(
                    {STATE_TABLE: self._state_table(stored)}, STATE_TABLE, False
                )
                self._send(request.load_id, STATE_TABLE, row, table, [])
                progress.accepted(STATE_TABLE, 1)

    def _table_order(self, request: LoadRequest, stored: dict[str, Any]) -> list[str]:
        """The package's tables with rows, in the schema's order; system tables left out."""
        return [
            name
            for name in stored
            if name in request.tables
            and request.tables[name]
            and not (batches.is_dlt_name(name) and self.options.skip_dlt)
            and name != STATE_TABLE
        ]

    def _send_files(
        self,
        request: LoadRequest,
        name: str,
        files: list[Path],
        table: dict[str, Any],
        progress: Progress,
    ) -> None:
        """``batch_size=0``: each file's path, files the function took before skipped."""
        with tempfile.TemporaryDirectory() as scratch:
            folder = Path(request.package_dir or scratch) / "sink_files"
            done = progress.delivered(name)
            columns = batches.json_columns(table)
            for path, rows in job_files(name, files, self.options.file_format, columns, folder):
                if done >= rows:
                    done -= rows
                    continue
                self._send(request.load_id, name, path, table, [path])
                progress.accepted(name, rows)

    def _send(
        self,
        load_id: str,
        name: str,
        batch: pa.RecordBatch | str,
        table: dict[str, Any],
        files: list[str],
    ) -> None:
        """One batch (or a file's path) to the function, tried up to :data:`ATTEMPTS` times."""
        items: object = batch
        if isinstance(batch, pa.RecordBatch):
            if self.options.skip_dlt:
                batch = batches.without_dlt_columns(batch)
            items = batch
            if self.options.file_format != "parquet":
                items = batches.as_rows(batch, batches.json_columns(table))
        for attempt in range(1, ATTEMPTS + 1):
            try:
                self.sink(items, table)
                return
            except Exception as error:
                if attempt == ATTEMPTS:
                    raise LoadFailed(
                        load_id,
                        name,
                        f"the sink {self.options.name!r} raised on a batch {ATTEMPTS} times, "
                        f"last: {type(error).__name__}: {error}; the next run sends the "
                        f"package from that batch on",
                        files,
                    ) from error

    def _state_batch(self, request: LoadRequest) -> pa.RecordBatch:
        state = request.pipeline_state
        assert state is not None  # checked by the caller
        row = {
            "version": state.version,
            "engine_version": state.engine_version,
            "pipeline_name": state.pipeline_name,
            "state": encode_state(state.state),
            "created_at": state.created_at or _dt.datetime.now(tz=_dt.timezone.utc),
            "version_hash": state.version_hash,
            "_dlt_load_id": request.load_id,
            "_dlt_id": new_row_id(),
        }
        return pa.RecordBatch.from_pylist([row])

    @staticmethod
    def _state_table(stored: dict[str, Any]) -> dict[str, Any]:
        if STATE_TABLE in stored and stored[STATE_TABLE].get("columns"):
            return dict(stored[STATE_TABLE])
        columns = {
            c.name: {"name": c.name, "data_type": c.data_type, "nullable": c.nullable}
            for c in SYSTEM_TABLES[STATE_TABLE]
        }
        return {"name": STATE_TABLE, "write_disposition": "append", "columns": columns}

    # --- what a sink does not have ------------------------------------------------------

    def initialize_storage(self) -> None:
        """Nothing to create: the function is the destination."""

    def update_stored_schema(self, schema: Schema | None = None) -> list[str]:
        return []

    def is_package_loaded(self, load_id: str) -> bool:
        """A sink keeps no record of loads: a package's progress file says what was sent."""
        return False

    def get_stored_schema(self, schema_name: str) -> TStoredSchema | None:
        return None

    def get_stored_state(self, pipeline_name: str) -> StateDict | None:
        return None

    def table_row_counts(self) -> dict[str, int]:
        return {}

    def table_names(self) -> list[str]:
        raise self._no_sql()

    def qualified(self, table: str) -> str:
        raise self._no_sql()

    def use_dataset(self) -> None:
        """Nothing to resolve names in."""

    @property
    def connection(self) -> object:
        raise self._no_sql()

    def query(self, sql: str, *params: object) -> list[Row]:
        raise self._no_sql()

    def drop_dataset(self) -> None:
        """Nothing to drop: what the function received is the function's."""

    def close(self) -> None:
        """No connection to release."""

    def _no_sql(self) -> SqlClientNotAvailable:
        # dlt names the destination by its type here
        return SqlClientNotAvailable(self.dataset_name, SINK_DESTINATION_TYPE)
