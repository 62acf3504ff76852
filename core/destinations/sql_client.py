"""dlt's ``pipeline.sql_client()``: a context manager that runs SQL on the pipeline's dataset.

dlt 1.31 users call it for the odd statement a pipeline does not make (``execute_sql``,
``execute_query``, ``execute_many``), for a transaction around several, and to look at or
create the merge staging dataset (``with_staging_dataset()``). It opens a destination client
for the dataset on first use and closes it when the ``with`` block ends.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from loadstone.destinations.contract import Row
from loadstone.destinations.dataset_owner import open_reading_client
from loadstone.destinations.query_cursor import QueryCursor
from loadstone.destinations.query_results import (
    arrow_frame,
    execute_query,
    frame_chunk_rows,
    quote_identifier,
    replace_placeholders,
)

if TYPE_CHECKING:
    from loadstone.destinations.capabilities import Capabilities
    from loadstone.destinations.contract import DestinationClient
    from loadstone.destinations.dataset_owner import DatasetOwner

#: the staging dataset's name from the dataset's, as merges name it (``<dataset>_staging``)
STAGING_DATASET_LAYOUT = "{}_staging"
#: the most SQL text ``execute_many`` sends as one batch (statements are never split)
BATCH_CHARS = 1 << 20


class SqlClient:
    """dlt's ``pipeline.sql_client()``: a context manager that runs SQL on the dataset."""

    def __init__(self, pipeline: DatasetOwner, dataset_name: str) -> None:
        self._pipeline = pipeline
        self.dataset_name = dataset_name
        self._client: DestinationClient | None = None
        self._in_transaction = False

    def __enter__(self) -> SqlClient:
        self.open_connection()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close_connection()

    def open_connection(self) -> DestinationClient:
        if self._client is None:
            self._client = open_reading_client(self._pipeline, self.dataset_name)
        return self._client

    def close_connection(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def execute_sql(self, sql: str, *args: object) -> list[Row] | None:
        """The statement's rows; None where the database says it gave no result (an
        UPDATE or a DDL on PostgreSQL: dlt 1.31 answers None there, DuckDB answers rows)."""
        result = execute_query(self.open_connection(), sql, args)
        return result.rows if result.has_result else None

    def _rows(self, sql: str, *args: object) -> list[Row]:
        """The rows of a query that gives some (the client's own SELECTs)."""
        return execute_query(self.open_connection(), sql, args).rows

    def execute_many(self, statements: Sequence[str], *args: object) -> list[list[Row] | None]:
        """dlt's ``execute_many``: the statements run in order, in batches of up to
        :data:`BATCH_CHARS` of SQL; each batch answers with its last statement's rows
        (as ``execute_sql`` answers it), so a short list gives one answer, as dlt's. The
        arguments fill the ``%s`` placeholders of all statements in order, as they would
        the one SQL text dlt sends per batch. A batch without placeholders runs as that one
        text, so the database answers as it answers dlt (DuckDB: the last statement that
        has rows, ``SELECT 7; UPDATE ...`` answers 7)."""
        answers: list[list[Row] | None] = []
        remaining = list(args)  # one list of arguments for all, in placeholder order
        for batch in _batches(statements):
            rows: list[Row] | None = []
            if not any(_placeholder_count(s) for s in batch):
                answers.append(self.execute_sql(";\n".join(s.rstrip().rstrip(";") for s in batch)))
                continue
            for statement in batch:
                taken = _placeholder_count(statement)
                rows = self.execute_sql(statement, *remaining[:taken])
                remaining = remaining[taken:]
            answers.append(rows)
        return answers

    @property
    def capabilities(self) -> Capabilities:
        """The destination's capabilities (dlt's ``sql_client.capabilities``)."""
        return self._pipeline.destination.capabilities

    @contextlib.contextmanager
    def with_staging_dataset(self) -> Iterator[SqlClient]:
        """dlt's ``with client.with_staging_dataset():``: inside the block the client works
        on the staging dataset merges use (``<dataset>_staging``), then on the dataset again.
        The connection is reopened on each switch, as it is bound to one dataset."""
        dataset_name = self.dataset_name
        self._switch_dataset(STAGING_DATASET_LAYOUT.format(dataset_name))
        try:
            yield self
        finally:
            self._switch_dataset(dataset_name)

    def _switch_dataset(self, dataset_name: str) -> None:
        was_open = self._client is not None
        self.close_connection()
        self.dataset_name = dataset_name
        if was_open:
            self.open_connection()

    @contextlib.contextmanager
    def execute_query(self, sql: str, *args: object) -> Iterator[QueryCursor]:
        client = self.open_connection()
        # dlt 1.31's cursor gives Arrow the types its values show (its datasets the columns')
        result = execute_query(client, sql, args, want_arrow=False, typed=False)
        yield QueryCursor(
            result, lambda table: arrow_frame(client, table), frame_chunk_rows(client)
        )

    @contextlib.contextmanager
    def begin_transaction(self) -> Iterator[SqlClient]:
        """dlt's ``with client.begin_transaction() as tx:``: the statements of the block
        commit together when it ends, and none of them when it raises. ``tx`` is the client
        itself, as in dlt 1.31 (``tx.execute_sql``, ``tx.rollback_transaction()``)."""
        self.execute_sql("BEGIN TRANSACTION")
        self._in_transaction = True
        try:
            yield self
        except BaseException:
            self.rollback_transaction()
            raise
        self.commit_transaction()

    def commit_transaction(self) -> None:
        """Commit the open transaction (once: a transaction already ended is left alone)."""
        if self._in_transaction:
            self._in_transaction = False
            self._end_transaction("commit")

    def rollback_transaction(self) -> None:
        """Roll the open transaction back (once, as :meth:`commit_transaction`)."""
        if self._in_transaction:
            self._in_transaction = False
            self._end_transaction("rollback")

    def _end_transaction(self, how: str) -> None:
        """By the driver's own ``commit()`` / ``rollback()`` where it has them: they know
        whether a transaction is still open (the block may have ended it on the driver,
        ``tx.rollback()``), as dlt's do; else by SQL."""
        end = getattr(self.native_connection, how, None)
        if callable(end):
            end()
        else:
            self.execute_sql(how.upper())

    def __getattr__(self, name: str) -> Any:
        """What the client does not have is the driver connection's (dlt 1.31's client
        hands ``c.cursor()``, ``c.commit()`` ... to it)."""
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.native_connection, name)

    def make_qualified_table_name(self, table: str) -> str:
        """``"dataset"."table"``: two parts, as dlt (the connection resolves the catalog)."""
        return f"{quote_identifier(self.dataset_name)}.{quote_identifier(table)}"

    @property
    def native_connection(self) -> Any:  # the driver's own connection: users call its API
        return self.open_connection().connection

    def fully_qualified_dataset_name(self) -> str:
        return quote_identifier(self.dataset_name)

    def has_dataset(self) -> bool:
        """Whether the destination has the dataset (its schema), as dlt's."""
        sql = "SELECT count(*) FROM information_schema.schemata WHERE schema_name = %s"
        return bool(self._rows(sql, self.dataset_name)[0][0])

    def create_dataset(self) -> None:
        self.open_connection().initialize_storage()

    def drop_dataset(self) -> None:
        """Drop the dataset with every table in it (the pipeline's state there too)."""
        self.open_connection().drop_dataset()

    def drop_tables(self, *tables: str) -> None:
        for table in tables:
            self.execute_sql(f"DROP TABLE IF EXISTS {self.make_qualified_table_name(table)}")

    def truncate_tables(self, *tables: str) -> None:
        for table in tables:
            self.execute_sql(f"DELETE FROM {self.make_qualified_table_name(table)}")


def _batches(statements: Sequence[str]) -> Iterator[list[str]]:
    """The statements in runs of up to :data:`BATCH_CHARS` characters (at least one each)."""
    batch: list[str] = []
    size = 0
    for statement in statements:
        if batch and size + len(statement) > BATCH_CHARS:
            yield batch
            batch, size = [], 0
        batch.append(statement)
        size += len(statement)
    if batch:
        yield batch


def _placeholder_count(statement: str) -> int:
    """How many ``%s`` placeholders (outside quotes) the statement has."""
    count = 0

    def mark() -> str:
        nonlocal count
        count += 1
        return "?"

    replace_placeholders(statement, mark)
    return count
