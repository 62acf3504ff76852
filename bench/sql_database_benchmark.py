"""Benchmark: a PostgreSQL table and the same table in MariaDB copied into DuckDB by
``sql_database``, loadstone's backends against dlt 1.31's ``pyarrow`` and ``connectorx``.

Usage (servers of their own: ``LOADSTONE_PG_STATE=/tmp/pg-bench bash .ci/postgres start``,
``LOADSTONE_MARIADB_STATE=/tmp/maria-bench bash .ci/mariadb start``)::

    python bench/sql_database_benchmark.py --postgres URL [--mariadb URL] [--rows 2000000]
        [--backends pyarrow connectorx] [--dlt-python /tmp/dltsql/bin/python]
        [--dlt-backends pyarrow connectorx] [--workdir DIR]

The table ``orders`` (ints, a numeric, text, a boolean, timestamps with and without a zone,
a date, a double, a JSON document) is made once per server (``bench_src.orders`` with
``generate_series`` on PostgreSQL, database ``bench_src`` from MariaDB's ``seq_1_to_N``).
Each tool and backend then runs, in its own cold process,
``pipeline.run(sql_database(URL, ..., backend=BACKEND))`` into a DuckDB file; the parent
measures wall time, CPU and the peak RSS of the process tree and counts the rows loaded.

Beside them, the physical floor of reading the table: PostgreSQL's ``COPY (SELECT * ...) TO
STDOUT`` read to the end and dropped (what /dev/null would get), and ``SELECT *`` read into
Arrow by connectorx alone, on each server. Then, per server: loadstone's best backend against
dlt's fastest. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmark import measure_child, rows_loaded  # the process-tree sampler of the main benchmark

CREATE_POSTGRES = """
DROP SCHEMA IF EXISTS bench_src CASCADE;
CREATE SCHEMA bench_src;
CREATE TABLE bench_src.orders AS
SELECT g AS id,
       (g % 1000)::int AS customer_id,
       (g % 97)::smallint AS qty,
       round((random() * 10000)::numeric, 2)::numeric(12, 2) AS amount,
       'order number ' || g AS note,
       md5(g::text) AS code,
       (g % 2 = 0) AS paid,
       timestamptz '2024-01-01' + g * interval '1 second' AS created_at,
       timestamp '2024-01-01' + g * interval '1 second' AS local_time,
       date '2024-01-01' + (g % 365) AS day,
       random() AS score,
       jsonb_build_object('k', g % 10) AS meta
FROM generate_series(1, {rows}) AS g;
ALTER TABLE bench_src.orders ADD PRIMARY KEY (id);
"""
CREATE_MARIADB = [
    "DROP DATABASE IF EXISTS bench_src",
    "CREATE DATABASE bench_src CHARACTER SET utf8mb4",
    """CREATE TABLE bench_src.orders (
        id BIGINT PRIMARY KEY, customer_id INT, qty SMALLINT, amount DECIMAL(12, 2),
        note VARCHAR(40), code CHAR(32), paid TINYINT(1), created_at TIMESTAMP(6) NULL,
        local_time DATETIME(6), day DATE, score DOUBLE, meta JSON)""",
    """INSERT INTO bench_src.orders SELECT seq, seq %% 1000, seq %% 97,
        ROUND(RAND() * 10000, 2), CONCAT('order number ', seq), MD5(seq), seq %% 2 = 0,
        TIMESTAMP '2024-01-01 00:00:00' + INTERVAL seq SECOND,
        TIMESTAMP '2024-01-01 00:00:00' + INTERVAL seq SECOND,
        DATE '2024-01-01' + INTERVAL (seq %% 365) DAY, RAND(), JSON_OBJECT('k', seq %% 10)
        FROM seq_1_to_{rows}""",
]


def prepare_postgres(url: str, rows: int) -> None:
    import psycopg

    with psycopg.connect(_plain_url(url), autocommit=True) as conn:
        found = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'bench_src'"
        ).fetchone()
        if found and found[0]:
            count = conn.execute("SELECT count(*) FROM bench_src.orders").fetchone()
            if count and count[0] == rows:
                return
        conn.execute(CREATE_POSTGRES.format(rows=rows))  # type: ignore[call-overload]  # ours
        conn.execute("ANALYZE bench_src.orders")


def prepare_mariadb(url: str, rows: int) -> None:
    import sqlalchemy as sa

    engine = sa.create_engine(url)
    with engine.begin() as conn:
        try:
            count = conn.exec_driver_sql("SELECT count(*) FROM bench_src.orders").scalar()
        except sa.exc.SQLAlchemyError:
            count = None
        if count != rows:
            for statement in CREATE_MARIADB:
                conn.exec_driver_sql(statement.format(rows=rows))
    engine.dispose()


def _plain_url(url: str) -> str:
    """The URL without SQLAlchemy's driver (what psycopg and connectorx read)."""
    scheme, rest = url.split("://", 1)
    return f"{scheme.split('+')[0]}://{rest}"


def _table_url(server: str, url: str) -> str:
    """The URL the table is read from: MariaDB's table is in a database of its own."""
    return url.rsplit("/", 1)[0] + "/bench_src" if server == "mariadb" else url


def floors(server: str, url: str) -> dict[str, float]:
    """Seconds to read the table without loading it: COPY to nowhere, connectorx alone."""
    import connectorx

    out: dict[str, float] = {}
    if server == "postgres":
        import psycopg

        started = time.perf_counter()
        with psycopg.connect(_plain_url(url)) as conn, conn.cursor() as cursor:
            with cursor.copy("COPY (SELECT * FROM bench_src.orders) TO STDOUT") as copy:
                for _ in copy:
                    pass
        out["COPY TO STDOUT -> /dev/null"] = time.perf_counter() - started
    started = time.perf_counter()
    table = connectorx.read_sql(
        _plain_url(_table_url(server, url)), "SELECT * FROM bench_src.orders", return_type="arrow"
    )
    out[f"connectorx SELECT alone ({table.num_rows} rows)"] = time.perf_counter() - started
    return out


def child(tool: str, server: str, url: str, backend: str, work: str) -> None:
    os.chdir(work)
    if tool == "dlt":
        import dlt
        from dlt.sources.sql_database import sql_database
    else:
        import loadstone as dlt  # type: ignore[no-redef]
        from loadstone.sources.sql_database import sql_database  # type: ignore[no-redef]
    schema = "bench_src" if server == "postgres" else None
    source = sql_database(
        _table_url(server, url),
        schema=schema,
        table_names=["orders"],
        backend=backend,
        chunk_size=100_000,
    )
    pipe = dlt.pipeline(
        f"sqlbench_{tool}", destination="duckdb", dataset_name="copy", pipelines_dir=work
    )
    started = time.perf_counter()
    pipe.run(source)
    print(json.dumps({"run_seconds": time.perf_counter() - started}))


def _run(
    args: argparse.Namespace, tool: str, python: str, server: str, url: str, backend: str
) -> dict[str, Any]:
    work = Path(args.workdir) / f"{server}_{tool}_{backend}"
    # the child reads the server's URL from --postgres whichever server it is
    command = [python, str(Path(__file__).resolve()), "--postgres", url, "--backends", backend]
    command += ["--child", tool, server, str(work)]
    got = measure_child(command, dict(os.environ), work)
    got["rows"] = rows_loaded(work, f"sqlbench_{tool}", "copy.orders")
    print(
        f"  {tool:9} {backend:10}: wall {got['wall']:7.2f} s  run() {got.get('run_seconds', 0):7.2f} s"
        f"  cpu {got['cpu']:7.2f} s  peak {got['peak']:6.0f} MB  rows {got['rows']}",
        flush=True,
    )
    return got


def bench_server(args: argparse.Namespace, server: str, url: str) -> None:
    print(f"{server}: {args.rows} rows", flush=True)
    for name, seconds in floors(server, url).items():
        print(f"  floor     {name}: {seconds:7.2f} s", flush=True)
    ours = {b: _run(args, "loadstone", sys.executable, server, url, b) for b in args.backends}
    theirs: dict[str, dict[str, Any]] = {}
    if args.dlt_python:
        for backend in args.dlt_backends:
            dlt_url = url.replace("postgresql://", "postgresql+psycopg2://")
            theirs[backend] = _run(args, "dlt", args.dlt_python, server, dlt_url, backend)
    best = min(ours, key=lambda b: ours[b]["wall"])
    if theirs:
        fastest = min(theirs, key=lambda b: theirs[b]["wall"])
        ratio = theirs[fastest]["wall"] / ours[best]["wall"]
        print(
            f"  {server}: loadstone {best} {ours[best]['wall']:.2f} s against dlt's fastest "
            f"({fastest}) {theirs[fastest]['wall']:.2f} s: {ratio:.2f}x",
            flush=True,
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--postgres", required=True)
    parser.add_argument("--mariadb", default=None)
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--backends", nargs="+", default=["pyarrow", "connectorx"])
    parser.add_argument("--dlt-python", default=None)
    parser.add_argument("--dlt-backends", nargs="+", default=["pyarrow", "connectorx"])
    parser.add_argument("--workdir", default="/tmp/loadstone-sql-bench")
    parser.add_argument("--child", nargs=3, metavar=("TOOL", "SERVER", "WORK"))
    args = parser.parse_args()
    if args.child:
        tool, server, work = args.child
        child(tool, server, args.postgres, args.backends[0], work)
        return 0
    prepare_postgres(args.postgres, args.rows)
    bench_server(args, "postgres", args.postgres)
    if args.mariadb:
        prepare_mariadb(args.mariadb, args.rows)
        bench_server(args, "mariadb", args.mariadb)
    return 0


if __name__ == "__main__":
    sys.exit(main())
