"""Benchmark: a PostgreSQL table copied into DuckDB by ``sql_database``, loadstone vs dlt 1.31.

Usage (a server of its own: ``LOADSTONE_PG_STATE=/tmp/pg-bench bash .ci/postgres start``)::

    python bench/sql_database_benchmark.py --postgres URL [--rows 2000000]
        [--backend pyarrow] [--dlt-python /tmp/dltenv/bin/python] [--workdir DIR]

The table ``bench_src.orders`` (ints, a numeric, text, a boolean, timestamps with and
without a zone, a date, a jsonb) is made once with ``generate_series``. Each tool then runs,
in its own cold process, ``pipeline.run(sql_database(URL, schema="bench_src",
backend=BACKEND))`` into a DuckDB file; the parent measures wall time, CPU and the peak RSS
of the process tree and counts the rows loaded. Figures are printed, never asserted.
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

CREATE = """
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


def prepare(url: str, rows: int) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        found = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'bench_src'"
        ).fetchone()
        if found and found[0]:
            count = conn.execute("SELECT count(*) FROM bench_src.orders").fetchone()
            if count and count[0] == rows:
                return
        conn.execute(CREATE.format(rows=rows))
        conn.execute("ANALYZE bench_src.orders")


def child(tool: str, url: str, backend: str, work: str) -> None:
    os.chdir(work)
    if tool == "dlt":
        import dlt
        from dlt.sources.sql_database import sql_database
    else:
        import loadstone as dlt  # type: ignore[no-redef]
        from loadstone.sources.sql_database import sql_database  # type: ignore[no-redef]
    source = sql_database(url, schema="bench_src", backend=backend, chunk_size=100_000)
    pipe = dlt.pipeline(
        f"sqlbench_{tool}", destination="duckdb", dataset_name="copy", pipelines_dir=work
    )
    started = time.perf_counter()
    pipe.run(source)
    print(json.dumps({"run_seconds": time.perf_counter() - started}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--postgres", required=True)
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--backend", default="pyarrow")
    parser.add_argument("--dlt-python", default=None)
    parser.add_argument("--workdir", default="/tmp/loadstone-sql-bench")
    parser.add_argument("--child", nargs=2, metavar=("TOOL", "WORK"))
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.postgres, args.backend, args.child[1])
        return 0
    prepare(args.postgres, args.rows)
    tools = {"loadstone": sys.executable}
    if args.dlt_python:
        tools["dlt"] = args.dlt_python
    results: dict[str, Any] = {}
    for tool, python in tools.items():
        work = Path(args.workdir) / tool
        command = [python, str(Path(__file__).resolve()), "--postgres", args.postgres]
        command += ["--backend", args.backend, "--child", tool, str(work)]
        got = results[tool] = measure_child(command, dict(os.environ), work)
        loaded = rows_loaded(work, f"sqlbench_{tool}", "copy.orders")
        print(
            f"{tool:10} {args.backend}: wall {got['wall']:7.2f} s  run() "
            f"{got.get('run_seconds', 0):7.2f} s  cpu {got['cpu']:7.2f} s  peak {got['peak']:6.0f} MB"
            f"  rows {loaded}",
            flush=True,
        )
    if len(results) == 2:
        a, b = results["loadstone"], results["dlt"]
        print(
            f"dlt/loadstone: wall {b['wall'] / a['wall']:.2f}x, run() "
            f"{b['run_seconds'] / a['run_seconds']:.2f}x, peak memory {a['peak'] / b['peak']:.2f}"
            " of dlt's"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
