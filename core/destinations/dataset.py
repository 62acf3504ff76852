"""Read what a pipeline loaded: ``pipeline.dataset()`` and ``pipeline.sql_client()``.

Users check a load by looking at the tables, so this gives the dlt-shaped way to do it
without knowing where the destination keeps its data: ``pipeline.dataset()["users"]``
is a relation with ``fetchall()``, ``fetchone()``, ``arrow()`` and ``count()``;
``pipeline.dataset().row_counts()`` counts every table. Every query opens a destination
client for its duration, so reading never holds a lock a later load would need.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, cast

from loadstone.destinations.contract import Row
from loadstone.destinations.dataset_loads import (
    LOAD_ID,
    DatasetLoads,
    RelationLoads,
)
from loadstone.destinations.dataset_owner import DatasetOwner, open_reading_client
from loadstone.destinations.dataset_text import dataset_text, relation_text
from loadstone.destinations.query_results import (
    QueryResult,
    execute_frame,
    execute_query,
    frame_chunk_rows,
    quote_identifier,
)
from loadstone.destinations.sql_client import SqlClient
from loadstone.exceptions import (
    DatasetError,
    TableAttributeNotInDataset,
    TableNotInDataset,
)
from loadstone.typing import TDataItem

if TYPE_CHECKING:
    import pandas as pd  # type: ignore[import-untyped,unused-ignore]  # pandas ships no stubs
    import pyarrow as pa

    from loadstone.destinations.contract import DestinationClient
    from loadstone.schema import Schema


#: ``where`` operators (dlt's names) -> SQL
FILTER_OPERATORS: dict[str, str] = {
    "eq": "=",
    "ne": "<>",
    "gt": ">",
    "lt": "<",
    "gte": ">=",
    "lte": "<=",
    "in": "IN",
    "not_in": "NOT IN",
}
JOIN_KINDS = ("inner", "left", "right", "full", "cross")


class Relation(RelationLoads):
    """A query over the dataset; nothing runs until a fetch method is called.

    Methods that refine it (``select``, ``where``, ``order_by``, ``limit``/``head``,
    ``join``, ``max``/``min``, ``rel[["a", "b"]]``) return a new relation, as dlt's do.
    ``table`` is the table name when the relation is a whole table (``join`` uses it).
    """

    def __init__(
        self,
        dataset: Dataset,
        sql: str,
        params: Sequence[object] = (),
        table: str | None = None,
        origin: str | None = None,
    ) -> None:
        self._dataset = dataset
        self.sql = sql
        self._params = tuple(params)
        self.table = table
        #: the table a refined relation reads (``columns_schema`` takes its hints from it)
        self._origin = origin or table
        #: ``(columns, query)`` when this relation is ``select(columns)`` of ``query``: an
        #: ``order_by`` then sorts by any column of ``query`` (dlt's relation does)
        self._projection: tuple[str, str] | None = None

    def _wrap(self, sql: str, params: Sequence[object] = ()) -> Relation:
        return Relation(self._dataset, sql, (*self._params, *params), origin=self._origin)

    def _run(self, want_arrow: bool = False) -> QueryResult:
        with self._dataset._client() as client:
            return execute_query(client, self.sql, self._params, want_arrow)

    # -- fetching -----------------------------------------------------------------------
    def fetchall(self) -> list[Row]:
        return self._run().rows

    def fetchone(self) -> Row | None:
        rows = self._run().rows
        return rows[0] if rows else None

    def fetchmany(self, size: int = 1) -> list[Row]:
        """The first ``size`` rows (one by default, DB-API's ``arraysize``, as dlt's)."""
        return self._run().rows[:size]

    def fetchscalar(self) -> TDataItem:
        """The first column of the first row (None when there is no row)."""
        row = self.fetchone()
        return row[0] if row else None

    def iter_fetch(self, chunk_size: int) -> Iterator[list[Row]]:
        """The rows in lists of ``chunk_size``."""
        rows = self.fetchall()
        for start in range(0, len(rows), chunk_size):
            yield rows[start : start + chunk_size]

    def iter_arrow(self, chunk_size: int) -> Iterator[pa.Table]:
        """The result as ``pyarrow.Table`` chunks of ``chunk_size`` rows."""
        table = self.arrow()
        for start in range(0, table.num_rows, chunk_size):
            yield table.slice(start, chunk_size)

    def iter_df(self, chunk_size: int) -> Iterator[pd.DataFrame]:
        """The result as pandas frames of ``chunk_size`` rows (DuckDB: of one vector, 2048
        rows, as dlt 1.31's)."""
        frame, rows = self._frame()
        step = rows or chunk_size
        for start in range(0, len(frame), step):
            yield frame.iloc[start : start + step].reset_index(drop=True)

    def arrow(self, chunk_size: int | None = None) -> pa.Table:
        """The result as a ``pyarrow.Table`` (its first ``chunk_size`` rows, when given)."""
        table = self._run(want_arrow=True).to_arrow()
        return table if chunk_size is None else table.slice(0, chunk_size)

    def df(self, chunk_size: int | None = None) -> pd.DataFrame:
        """The result as a pandas DataFrame (needs pandas): DuckDB's own on DuckDB, as dlt's
        (its column types), else made from Arrow; its first chunk when ``chunk_size`` is
        given (as :meth:`iter_df` counts it)."""
        frame, rows = self._frame()
        if chunk_size is None:
            return frame
        return frame.iloc[: rows or chunk_size].reset_index(drop=True)

    def _frame(self) -> tuple[pd.DataFrame, int | None]:
        """The whole result as a frame, and the rows of its chunks (None: as asked)."""
        with self._dataset._client() as client:
            frame = execute_frame(client, self.sql, self._params)
            rows = frame_chunk_rows(client)
        return (frame if frame is not None else self.arrow().to_pandas()), rows

    @property
    def columns(self) -> list[str]:
        return self._wrap(f"SELECT * FROM ({self.sql}) AS q LIMIT 0")._run(want_arrow=True).columns

    # -- refining -----------------------------------------------------------------------
    def limit(self, n: int) -> Relation:
        return self._wrap(f"SELECT * FROM ({self.sql}) AS q LIMIT {int(n)}")

    def head(self, limit: int = 5) -> Relation:
        return self.limit(limit)

    def select(self, *columns: str) -> Relation:
        cols = ", ".join(quote_identifier(c) for c in columns)
        selected = self._wrap(f"SELECT {cols} FROM ({self.sql}) AS q")
        selected._projection = (cols, self.sql)
        return selected

    def __getitem__(self, columns: str | Sequence[str]) -> Relation:
        """``rel["a"]`` or ``rel[["a", "b"]]``: only those columns."""
        if isinstance(columns, str):
            return self.select(columns)
        return self.select(*columns)

    def order_by(self, column_name: str, direction: str = "asc") -> Relation:
        if direction.lower() not in ("asc", "desc"):
            raise DatasetError(f"order_by direction must be 'asc' or 'desc', not {direction!r}")
        order = f"ORDER BY {quote_identifier(column_name)} {direction.upper()}"
        if self._projection is not None:  # sort by the selected query's columns, any of them
            cols, query = self._projection
            return self._wrap(f"SELECT {cols} FROM ({query}) AS q {order}")
        return self._wrap(f"SELECT * FROM ({self.sql}) AS q {order}")

    def where(
        self, column_or_expr: str, operator: str | None = None, value: TDataItem = None
    ) -> Relation:
        """Rows where ``column operator value`` (dlt's operators: eq, ne, gt, lt, gte, lte,
        in, not_in); with only a string, that string is the SQL condition."""
        if operator is None:
            return self._wrap(f"SELECT * FROM ({self.sql}) AS q WHERE {column_or_expr}")
        sql_op = FILTER_OPERATORS.get(operator)
        if sql_op is None:
            raise DatasetError(
                f"where operator {operator!r} is not one of {', '.join(FILTER_OPERATORS)}"
            )
        column = quote_identifier(column_or_expr)
        if operator in ("in", "not_in"):
            values = list(cast("Iterable[object]", value))
            marks = ", ".join("%s" for _ in values) or "NULL"
            return self._wrap(
                f"SELECT * FROM ({self.sql}) AS q WHERE {column} {sql_op} ({marks})", values
            )
        # %s placeholders: psycopg's and dlt's; DuckDB's client turns them into ?
        return self._wrap(f"SELECT * FROM ({self.sql}) AS q WHERE {column} {sql_op} %s", [value])

    def _aggregate(self, function: str) -> Relation:
        columns = self.columns
        if len(columns) != 1:
            raise DatasetError(
                f"{function}() needs a relation of one column, this one has {len(columns)}: "
                f"select one first (rel.select('col').{function}())"
            )
        # dlt 1.31 names the column as its query builder (sqlglot) names an unnamed one
        return self._wrap(
            f"SELECT {function}({quote_identifier(columns[0])}) AS _col_0 FROM ({self.sql}) AS q"
        )

    def max(self) -> Relation:
        return self._aggregate("max")

    def min(self) -> Relation:
        return self._aggregate("min")

    def join(
        self,
        other: str | Relation,
        on: str | None = None,
        *,
        kind: str = "inner",
        alias: str | None = None,
    ) -> Relation:
        """Join a table: by default a nested table on its parent (``_dlt_id`` =
        ``_dlt_parent_id``); the other table's columns are named ``<table>__<column>``."""
        if kind not in JOIN_KINDS:
            raise DatasetError(f"join kind {kind!r} is not one of {', '.join(JOIN_KINDS)}")
        right = other if isinstance(other, Relation) else self._dataset.table(other)
        name = alias or right.table or "joined"
        if on is None:
            on = 'l."_dlt_id" = r."_dlt_parent_id"'
        left_cols = [f"l.{quote_identifier(c)} AS {quote_identifier(c)}" for c in self.columns]
        right_cols = [
            f"r.{quote_identifier(c)} AS {quote_identifier(f'{name}__{c}')}" for c in right.columns
        ]
        join = "CROSS JOIN" if kind == "cross" else f"{kind.upper()} JOIN"
        condition = "" if kind == "cross" else f" ON {on}"
        return Relation(
            self._dataset,
            f"SELECT {', '.join(left_cols + right_cols)} FROM ({self.sql}) AS l "
            f"{join} ({right.sql}) AS r{condition}",
            (*self._params, *right._params),
        )

    def count(self) -> int:
        row = self._wrap(f"SELECT count(*) FROM ({self.sql}) AS q").fetchone()
        return int(row[0]) if row else 0

    def __iter__(self) -> Iterator[Row]:
        return iter(self.fetchall())

    def __repr__(self) -> str:
        return f"Relation({self.sql!r})"

    def __str__(self) -> str:
        return relation_text(self)


class SchemaOwner:
    """A dataset's owner read with another of its pipeline's schemas (dlt's
    ``pipeline.dataset(schema=...)``): the same destination and pipeline name, that schema
    and its naming convention in the destination."""

    def __init__(self, owner: DatasetOwner, schema: Schema) -> None:
        self.destination = owner.destination
        self.default_schema = schema
        self.pipeline_name = owner.pipeline_name
        self.naming = owner.destination.naming_for(schema)


class Dataset(DatasetLoads):
    """The tables of one dataset of the pipeline's destination."""

    def __init__(
        self, pipeline: DatasetOwner, dataset_name: str, others: Sequence[Schema] = ()
    ) -> None:
        self._pipeline = pipeline
        self.dataset_name = dataset_name
        self._open: DestinationClient | None = None
        #: the pipeline's other schemas: their data tables are listed too, last (as dlt's)
        self._others = tuple(others)

    def _new_client(self) -> DestinationClient:
        return open_reading_client(self._pipeline, self.dataset_name)

    def __str__(self) -> str:
        pipeline = self._pipeline
        schemas = [self.schema, *self._others]
        return dataset_text(self, schemas, pipeline.destination, pipeline.pipeline_name)

    @contextlib.contextmanager
    def _client(self) -> Iterator[DestinationClient]:
        if self._open is not None:  # inside ``with dataset:`` one connection serves all
            yield self._open
            return
        client = self._new_client()
        try:
            yield client
        finally:
            client.close()

    def __enter__(self) -> Dataset:
        """``with pipeline.dataset() as ds:`` keeps one connection open for the block."""
        if self._open is None:
            self._open = self._new_client()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._open is not None:
            self._open.close()
            self._open = None

    def qualified(self, table: str) -> str:
        with self._client() as client:
            return client.qualified(table)

    def table(self, name: str, *, missing: type[TableNotInDataset] = TableNotInDataset) -> Relation:
        """A table of the schema, or one the destination holds (of another schema, or made
        by hand: dlt 1.31 refuses those, loadstone reads them); ``missing`` is raised for a
        table it lacks (a ``KeyError``; an ``AttributeError`` too for ``dataset.name``)."""
        if name not in self.stored_tables and name not in self.tables:
            raise missing(
                f"dataset {self.dataset_name!r} has no table {name!r}; it has: "
                f"{', '.join(self.tables) or 'no tables'}"
            )
        return Relation(self, f"SELECT * FROM {self.qualified(name)}", table=name)

    def __getitem__(self, name: str) -> Relation:
        return self.table(name)

    def __getattr__(self, name: str) -> Relation:
        if name.startswith("_"):
            raise AttributeError(name)
        return self.table(name, missing=TableAttributeNotInDataset)

    def __call__(self, sql: str, *params: object) -> Relation:
        return Relation(self, sql, params)

    def query(self, sql: str, *params: object) -> Relation:
        return Relation(self, sql, params)

    @property
    def sql_client(self) -> SqlClient:
        """dlt's ``dataset.sql_client``: runs SQL on this dataset (``with`` it, or not)."""
        return SqlClient(self._pipeline, self.dataset_name)

    @property
    def destination_client(self) -> DestinationClient:
        """A client of the destination for this dataset; the caller closes it."""
        return self._new_client()

    @property
    def tables(self) -> list[str]:
        """The schema's tables as dlt 1.31 lists them: its data tables, then its ``_dlt_``
        tables, each in the schema's order. A schema that knows no data table (a dataset
        opened by name, ``loadstone.dataset(...)``) lists the tables the destination holds."""
        schema = self.schema
        data = schema.data_table_names()
        if not data:
            stored = self.stored_tables
            system = schema.is_system_table
            return [t for t in stored if not system(t)] + [t for t in stored if system(t)]
        listed = [*data, *schema.dlt_table_names()]
        more = [t for other in self._others for t in other.data_table_names()]
        return listed + [t for t in dict.fromkeys(more) if t not in listed]

    @property
    def stored_tables(self) -> list[str]:
        """The tables the destination holds in this dataset (loadstone's: of every schema,
        and tables made by hand), system tables included."""
        with self._client() as client:
            return client.table_names()

    def row_counts(
        self,
        *,
        data_tables: bool = True,
        dlt_tables: bool = False,
        table_names: Sequence[str] | None = None,
        load_id: str | None = None,
    ) -> Relation:
        """dlt 1.31's ``(table_name, row_count)`` per table: the data tables, then (with
        ``dlt_tables``) the ``_dlt_`` ones, or ``table_names`` in their order; ``load_id``
        counts that load's rows of the tables that record it (root tables, the state)."""
        names = list(table_names or [])
        if not names:
            listed = self.tables
            system = self.schema.is_system_table
            names = [t for t in listed if not system(t)] if data_tables else []
            names += [t for t in listed if system(t)] if dlt_tables else []
        if not names:
            raise ValueError("row_counts() needs data_tables=True, dlt_tables=True or table_names")
        where = ""
        if load_id is not None:
            names = [t for t in names if LOAD_ID in self._columns_of(t)]
            where = f" WHERE {quote_identifier(LOAD_ID)} = %s"
        if not names:
            return Relation(self, "SELECT NULL AS table_name, 0 AS row_count WHERE false")
        parts = [
            f"SELECT '{name.replace(chr(39), chr(39) * 2)}' AS table_name, count(*) AS row_count "
            f"FROM {self.qualified(name)}{where}"
            for name in names
        ]
        params = [load_id] * len(names) if load_id is not None else []
        return Relation(self, " UNION ALL ".join(parts), params)

    def _columns_of(self, table: str) -> list[str]:
        """The table's columns, from the schema (or the destination, for a table it lacks)."""
        known = self.schema.tables.get(table)
        if known is not None:
            return list(known.columns)
        return self.table(table).columns


def stored_row_counts(dataset: Dataset) -> list[tuple[str, int]]:
    """``(table, rows)`` of every data table the destination holds, by name: what ``show``
    and the report list (all schemas' tables, not the default schema's alone)."""
    names = [t for t in dataset.stored_tables if not dataset.schema.is_system_table(t)]
    if not names:
        return []
    return sorted((str(t), int(n)) for t, n in dataset.row_counts(table_names=names).fetchall())
