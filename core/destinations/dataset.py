"""Read what a pipeline loaded: ``pipeline.dataset()`` and ``pipeline.sql_client()``.

Users check a load by looking at the tables, so this gives the dlt-shaped way to do it
without knowing where the destination keeps its data: ``pipeline.dataset()["users"]``
is a relation with ``fetchall()``, ``fetchone()``, ``arrow()`` and ``count()``;
``pipeline.dataset().row_counts()`` counts every table. Every query opens a destination
client for its duration, so reading never holds a lock a later load would need.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from loadstone.errors import LoadstoneError

if TYPE_CHECKING:
    from loadstone.pipelines.pipeline import Pipeline


class DatasetError(LoadstoneError):
    """A query on the loaded data failed (unknown table, bad SQL)."""


def _quote(ident: str) -> str:
    return '"' + ident.replace('"', '""') + '"'


class _Result:
    """Rows and column names of one executed query."""

    def __init__(self, columns: list[str], rows: list[tuple[Any, ...]], arrow: Any = None):
        self.columns = columns
        self.rows = rows
        self._arrow = arrow

    def to_arrow(self) -> Any:
        if self._arrow is not None:
            return self._arrow
        import pyarrow as pa

        return pa.table(
            {name: [row[i] for row in self.rows] for i, name in enumerate(self.columns)}
        )


def _duckdb_arrow(conn: Any, sql: str, params: Sequence[Any]) -> Any:
    """A query's result as a ``pyarrow.Table`` from a DuckDB-style connection (or None)."""
    relation = conn.sql(sql, params=list(params) if params else None)
    if relation is None:  # a statement without a result
        return None
    for name in ("to_arrow_table", "arrow", "fetch_arrow_table"):
        method = getattr(relation, name, None)
        if method is not None:
            table = method()
            return table.read_all() if hasattr(table, "read_all") else table
    return None


def qmark_params(sql: str) -> str:
    """dlt's ``%s`` placeholders as DuckDB's ``?`` (quoted text left alone)."""
    out: list[str] = []
    quote: str | None = None
    i = 0
    while i < len(sql):
        char = sql[i]
        if quote is None and char in ("'", '"'):
            quote = char
        elif quote == char:
            quote = None
        if quote is None and sql.startswith("%s", i):
            out.append("?")
            i += 2
            continue
        out.append(char)
        i += 1
    return "".join(out)


def _execute(
    client: Any, sql: str, params: Sequence[Any] = (), want_arrow: bool = False
) -> _Result:
    """Run ``sql`` on a destination client.

    A DuckDB-style connection answers in Arrow, and rows are made from the Arrow columns:
    time zone aware timestamps then come back as ``datetime`` with ``zoneinfo`` (DuckDB's
    own row fetch needs ``pytz``). Other clients answer through ``client.query``.
    """
    conn = getattr(client, "connection", None)
    try:
        if conn is not None and hasattr(conn, "sql"):
            sql = qmark_params(sql) if params else sql
            table = _duckdb_arrow(conn, sql, params)
            if table is None:
                return _Result([], [])
            if want_arrow:
                return _Result(list(table.column_names), [], table)
            columns = [column.to_pylist() for column in table.columns]
            return _Result(list(table.column_names), list(zip(*columns, strict=True)))
        rows = client.query(sql, *params)
        return _Result([], rows)
    except LoadstoneError:
        raise
    except Exception as exc:
        raise DatasetError(f"query failed: {exc}\n  sql: {sql}") from exc


class Relation:
    """A query over the dataset; nothing runs until a fetch method is called."""

    def __init__(self, dataset: Dataset, sql: str, params: Sequence[Any] = ()) -> None:
        self._dataset = dataset
        self.sql = sql
        self._params = tuple(params)

    def _run(self, want_arrow: bool = False) -> _Result:
        with self._dataset._client() as client:
            return _execute(client, self.sql, self._params, want_arrow)

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self._run().rows

    def fetchone(self) -> tuple[Any, ...] | None:
        rows = self._run().rows
        return rows[0] if rows else None

    def fetchmany(self, size: int) -> list[tuple[Any, ...]]:
        return self._run().rows[:size]

    def arrow(self) -> Any:
        """The result as a ``pyarrow.Table``."""
        return self._run(want_arrow=True).to_arrow()

    def df(self) -> Any:
        """The result as a pandas DataFrame (needs pandas)."""
        return self.arrow().to_pandas()

    @property
    def columns(self) -> list[str]:
        return self._run().columns

    def limit(self, n: int) -> Relation:
        return Relation(
            self._dataset, f"SELECT * FROM ({self.sql}) AS q LIMIT {int(n)}", self._params
        )

    def select(self, *columns: str) -> Relation:
        cols = ", ".join(_quote(c) for c in columns)
        return Relation(self._dataset, f"SELECT {cols} FROM ({self.sql}) AS q", self._params)

    def order_by(self, *columns: str) -> Relation:
        cols = ", ".join(_quote(c) for c in columns)
        return Relation(
            self._dataset, f"SELECT * FROM ({self.sql}) AS q ORDER BY {cols}", self._params
        )

    def count(self) -> int:
        row = Relation(
            self._dataset, f"SELECT count(*) FROM ({self.sql}) AS q", self._params
        ).fetchone()
        return int(row[0]) if row else 0

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self.fetchall())

    def __repr__(self) -> str:
        return f"Relation({self.sql!r})"


class Dataset:
    """The tables of one dataset of the pipeline's destination."""

    def __init__(self, pipeline: Pipeline, dataset_name: str) -> None:
        self._pipeline = pipeline
        self.dataset_name = dataset_name

    @contextlib.contextmanager
    def _client(self) -> Iterator[Any]:
        client = self._pipeline.destination.client(
            self._pipeline.default_schema,
            self.dataset_name,
            pipeline_name=self._pipeline.pipeline_name,
        )
        try:
            yield client
        finally:
            client.close()

    def qualified(self, table: str) -> str:
        with self._client() as client:
            qualify = getattr(client, "qualified", None)
            if qualify is not None:
                return qualify(table)
        return f"{_quote(self.dataset_name)}.{_quote(table)}"

    def table(self, name: str) -> Relation:
        if name not in self.tables:
            raise DatasetError(
                f"dataset {self.dataset_name!r} has no table {name!r}; it has: "
                f"{', '.join(self.tables) or 'no tables'}"
            )
        return Relation(self, f"SELECT * FROM {self.qualified(name)}")

    def __getitem__(self, name: str) -> Relation:
        return self.table(name)

    def __getattr__(self, name: str) -> Relation:
        if name.startswith("_"):
            raise AttributeError(name)
        return self.table(name)

    def __call__(self, sql: str, *params: Any) -> Relation:
        return Relation(self, sql, params)

    def query(self, sql: str, *params: Any) -> Relation:
        return Relation(self, sql, params)

    @property
    def tables(self) -> list[str]:
        """Table names in the dataset (system tables included)."""
        with self._client() as client:
            names = getattr(client, "table_names", None)
            if names is not None:
                return list(names())
            return sorted(client.table_row_counts())

    def row_counts(self, include_system: bool = False) -> Relation:
        """A relation of ``(table_name, row_count)`` for every (data) table."""
        names = [t for t in self.tables if include_system or not t.startswith("_dlt")]
        if not names:
            return Relation(self, "SELECT NULL AS table_name, 0 AS row_count WHERE false")
        parts = [
            f"SELECT '{name.replace(chr(39), chr(39) * 2)}' AS table_name, count(*) AS row_count "
            f"FROM {self.qualified(name)}"
            for name in names
        ]
        return Relation(self, " UNION ALL ".join(parts))


class _Cursor:
    def __init__(self, result: _Result) -> None:
        self._result = result
        self.description = [(c,) for c in result.columns]

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self._result.rows

    def fetchone(self) -> tuple[Any, ...] | None:
        return self._result.rows[0] if self._result.rows else None

    def fetchmany(self, size: int) -> list[tuple[Any, ...]]:
        return self._result.rows[:size]

    def arrow(self) -> Any:
        return self._result.to_arrow()

    def df(self) -> Any:
        return self.arrow().to_pandas()


class SqlClient:
    """dlt's ``pipeline.sql_client()``: a context manager that runs SQL on the dataset."""

    def __init__(self, pipeline: Pipeline, dataset_name: str) -> None:
        self._pipeline = pipeline
        self.dataset_name = dataset_name
        self._client: Any = None

    def __enter__(self) -> SqlClient:
        self.open_connection()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close_connection()

    def open_connection(self) -> Any:
        if self._client is None:
            self._client = self._pipeline.destination.client(
                self._pipeline.default_schema,
                self.dataset_name,
                pipeline_name=self._pipeline.pipeline_name,
            )
            # unqualified names resolve in the dataset, as in dlt, where the client can
            use_dataset = getattr(self._client, "use_dataset", None)
            if use_dataset is not None:
                use_dataset()
        return self._client

    def close_connection(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def execute_sql(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        return _execute(self.open_connection(), sql, args).rows

    @contextlib.contextmanager
    def execute_query(self, sql: str, *args: Any) -> Iterator[_Cursor]:
        yield _Cursor(_execute(self.open_connection(), sql, args, want_arrow=False))

    def make_qualified_table_name(self, table: str) -> str:
        """``"dataset"."table"``: two parts, as dlt (the connection resolves the catalog)."""
        return f"{_quote(self.dataset_name)}.{_quote(table)}"

    @property
    def native_connection(self) -> Any:
        return getattr(self.open_connection(), "connection", None)
