"""Decimal programs run the same under dlt 1.31 and loadstone (``lib`` is either module).

``tests/fixtures/decimals/record.py`` runs them under dlt (a throwaway environment) and keeps
the outcomes in ``tests/fixtures/decimals/dlt_decimals.json``; the tests run them under
loadstone and compare. Every reader opens the destination with its own library (DuckDB, a
PostgreSQL driver, pyarrow, deltalake), so both libraries are read back the same way.
"""

from __future__ import annotations

import contextlib
import importlib
import os
from collections.abc import Iterator, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

#: the values of issue 39: a tenth decimal, the smallest negative, all 38 digits
ISSUE_VALUES = ("1234567890123.0123456789", "-1E-10", "99999999999999999999999999.9999999999")
FILE_KINDS = ("parquet", "delta", "iceberg")
DESTINATIONS = ("duckdb", "postgres", *FILE_KINDS)

#: the source tables: declared decimals, copied by sql_table (PostgreSQL and MariaDB alike)
SOURCE_TABLE = "dec_src"
SOURCE_SQL = (
    "DROP TABLE IF EXISTS dec_src",
    "CREATE TABLE dec_src (id INT PRIMARY KEY, x DECIMAL(38,10), z DECIMAL(12,3), w DECIMAL(5,0))",
    "INSERT INTO dec_src VALUES (1, 1234567890123.0123456789, 123456789.123, 12345), "
    "(2, -1E-10, -0.001, -1), (3, 99999999999999999999999999.9999999999, NULL, NULL)",
)
#: issue 35's table: 1,000 rows, one amount no decimal(38,9) holds (unbounded NUMERIC)
REFUSED_TABLE = "dec_refused"
REFUSED_SQL = (
    "DROP TABLE IF EXISTS dec_refused",
    "CREATE TABLE dec_refused (id INT PRIMARY KEY, amount NUMERIC)",
    "INSERT INTO dec_refused SELECT g, g * 1.5 FROM generate_series(1, 1000) g",
    "UPDATE dec_refused SET amount = 1e40 WHERE id = 500",
)
REFUSED_FIX = "UPDATE dec_refused SET amount = 750 WHERE id = 500"


def destination(lib: Any, kind: str, work: Path, pg_url: str | None) -> tuple[Any, dict[str, Any]]:
    """The destination of ``kind`` and the run arguments it needs."""
    if kind == "duckdb":
        return lib.destinations.duckdb(str(work / "db.duckdb")), {}
    if kind == "postgres":
        return lib.destinations.postgres(pg_url), {}
    run_args: dict[str, Any] = {"loader_file_format": "parquet"}
    if kind != "parquet":
        run_args["table_format"] = kind
    return lib.destinations.filesystem(f"file://{work / 'files'}"), run_args


def pipeline(lib: Any, kind: str, work: Path, pg_url: str | None, dataset: str) -> Any:
    """A pipeline into ``dataset``; a PostgreSQL dataset left by an earlier run is dropped."""
    dest, _ = destination(lib, kind, work, pg_url)
    if kind == "postgres" and not (work / "p" / f"dec_{dataset}").exists():
        assert pg_url is not None
        with _pg(pg_url) as cur:
            for schema in (dataset, f"{dataset}_staging"):
                cur.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    return lib.pipeline(
        f"dec_{dataset}", destination=dest, dataset_name=dataset, pipelines_dir=str(work / "p")
    )


@contextlib.contextmanager
def _pg(url: str) -> Iterator[Any]:
    try:
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            yield conn.cursor()
    except ImportError:
        import psycopg2  # the dlt environment's driver

        conn = psycopg2.connect(url)
        conn.autocommit = True
        try:
            yield conn.cursor()
        finally:
            conn.close()


def read_back(kind: str, work: Path, pg_url: str | None, dataset: str, table: str) -> Any:
    """``{"types": {column: type}, "rows": [[str values]]}`` by ``id``, or None (no table)."""
    if kind == "duckdb":
        import duckdb

        with duckdb.connect(str(work / "db.duckdb"), read_only=True) as conn:
            found = conn.execute(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position",
                [dataset, table],
            ).fetchall()
            if not found:
                return None
            rows = conn.execute(f'SELECT * FROM "{dataset}"."{table}" ORDER BY id').fetchall()
        return _described(dict(found), [c for c, _ in found], rows)
    if kind == "postgres":
        assert pg_url is not None
        with _pg(pg_url) as cur:
            cur.execute(
                "SELECT column_name, format_type(a.atttypid, a.atttypmod) FROM "
                "information_schema.columns c JOIN pg_attribute a ON a.attname = c.column_name "
                "AND a.attrelid = (quote_ident(c.table_schema) || '.' || "
                "quote_ident(c.table_name))::regclass WHERE table_schema = %s AND "
                "table_name = %s ORDER BY ordinal_position",
                (dataset, table),
            )
            found = cur.fetchall()
            if not found:
                return None
            cur.execute(f'SELECT * FROM "{dataset}"."{table}" ORDER BY id')
            rows = cur.fetchall()
        return _described(dict(found), [c for c, _ in found], rows)
    return _read_files(kind, work, dataset, table)


def _read_files(kind: str, work: Path, dataset: str, table: str) -> Any:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = work / "files" / dataset / table
    if not folder.exists():
        return None
    if kind == "delta":
        import deltalake

        data = deltalake.DeltaTable(str(folder)).to_pyarrow_table()
    else:
        files = sorted(folder.rglob("*.parquet"))
        if not files:
            return None
        data = pa.concat_tables([pq.read_table(f) for f in files])
    data = data.sort_by("id")
    names = data.column_names
    rows = list(zip(*(data.column(n).to_pylist() for n in names), strict=True))
    return _described({f.name: str(f.type) for f in data.schema}, names, rows)


def _described(types: dict[str, str], names: Sequence[str], rows: Sequence[Any]) -> Any:
    """User columns only (``_dlt_*`` differ by design between the two libraries)."""
    keep = [i for i, n in enumerate(names) if not n.startswith("_dlt")]
    return {
        "types": {names[i]: types[names[i]] for i in keep},
        "rows": [{names[i]: None if r[i] is None else str(r[i]) for i in keep} for r in rows],
    }


def outcome_of(run: Any) -> str:
    """``ok`` or the class name of the innermost error (the cause users see)."""
    try:
        run()
    except Exception as error:
        cause: BaseException = error
        while cause.__cause__ is not None or cause.__context__ is not None:
            cause = cause.__cause__ or cause.__context__  # type: ignore[assignment]
        return type(cause).__name__
    return "ok"


def hinted_dicts(
    lib: Any,
    kind: str,
    work: Path,
    pg_url: str | None,
    hint: dict[str, Any],
    values: Sequence[str],
    case: str = "hinted",
) -> dict[str, Any]:
    """Dicts holding ``Decimal`` values with a ``columns=`` hint on ``x``."""
    dataset = f"{case}_{kind}"
    pipe = pipeline(lib, kind, work, pg_url, dataset)
    _, run_args = destination(lib, kind, work, pg_url)
    rows = [{"id": i, "x": Decimal(v)} for i, v in enumerate(values)]
    outcome = outcome_of(lambda: pipe.run(rows, table_name="t", columns={"x": hint}, **run_args))
    return {"outcome": outcome, "table": read_back(kind, work, pg_url, dataset, "t")}


def arrow_decimals(
    lib: Any, kind: str, work: Path, pg_url: str | None, shape: Sequence[int], values: Sequence[str]
) -> dict[str, Any]:
    """An Arrow table whose ``x`` is ``decimal128(*shape)``."""
    import pyarrow as pa

    dataset = f"arrow_{kind}"
    pipe = pipeline(lib, kind, work, pg_url, dataset)
    _, run_args = destination(lib, kind, work, pg_url)
    data = pa.table(
        {
            "id": pa.array(range(len(values)), pa.int64()),
            "x": pa.array([Decimal(v) for v in values], pa.decimal128(*shape)),
        }
    )
    outcome = outcome_of(lambda: pipe.run(data, table_name="t", **run_args))
    return {"outcome": outcome, "table": read_back(kind, work, pg_url, dataset, "t")}


def sql_copy(
    lib: Any, work: Path, source_url: str, table: str, backend: str, level: str
) -> dict[str, Any]:
    """``sql_table`` of a source table into DuckDB: the schema's decimals and the values."""
    source = _sql_table(lib)(
        credentials=source_url, table=table, backend=backend, reflection_level=level
    )
    dataset = f"sql_{backend}_{level}"
    pipe = pipeline(lib, "duckdb", work, None, dataset)
    outcome = outcome_of(lambda: pipe.run(source))
    columns = {}
    if table in pipe.default_schema.tables:
        for name, column in pipe.default_schema.tables[table]["columns"].items():
            if not name.startswith("_dlt"):
                keys = ("data_type", "precision", "scale")
                columns[name] = {k: column[k] for k in keys if column.get(k) is not None}
    return {
        "outcome": outcome,
        "schema": columns,
        "table": read_back("duckdb", work, None, dataset, table),
    }


def refused_value_then_fixed(
    lib: Any, work: Path, source_url: str, table: str, fix: Any
) -> list[dict[str, Any]]:
    """Issue 35's repro: an incremental copy whose one value its column cannot hold; the
    run fails, pending packages are dropped, the run goes again, the value is fixed
    (``fix()``), the run goes again. Each step: outcome, cursor, rows loaded."""
    steps = []

    def step(name: str) -> None:
        pipe = pipeline(lib, "duckdb", work, None, "refused")
        source = _sql_table(lib)(
            credentials=source_url, table=table, incremental=lib.sources.incremental("id")
        )
        outcome = outcome_of(lambda: pipe.run(source))
        pipe = pipeline(lib, "duckdb", work, None, "refused")
        loaded = read_back("duckdb", work, None, "refused", table)
        steps.append(
            {
                "step": name,
                "outcome": outcome,
                "cursor": _cursor(pipe.state, table),
                "rows": 0 if loaded is None else len(loaded["rows"]),
            }
        )
        if name == "first run":
            pipeline(lib, "duckdb", work, None, "refused").drop_pending_packages()

    step("first run")
    step("after drop-pending-packages")
    fix()
    step("after the value is fixed")
    return steps


def _sql_table(lib: Any) -> Any:
    return importlib.import_module(f"{lib.__name__}.sources.sql_database").sql_table


def _cursor(state: Any, table: str) -> Any:
    for source in (state.get("sources") or {}).values():
        resource = (source.get("resources") or {}).get(table) or {}
        incremental = (resource.get("incremental") or {}).get("id")
        if incremental:
            return incremental.get("last_value")
    return None


def env_url(name: str) -> str:
    url = os.environ.get(name)
    if not url:
        raise RuntimeError(f"{name} is not set (.ci/postgres or .ci/mariadb start)")
    return url
