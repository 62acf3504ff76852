"""Which way into PostgreSQL: COPY as CSV through psycopg (loadstone's), the same with the
table's ``toast_tuple_target`` raised for the COPY (what loadstone does), or ADBC's binary COPY.

Usage (needs a server, e.g. ``eval "$(bash .ci/postgres start)"``, and
``pip install adbc-driver-postgresql`` beside loadstone; it is not a dependency)::

    python bench/postgres_copy_methods.py --records 20000 [--postgres URL]

Builds ``records`` GitHub events, normalizes them with loadstone into Parquet (one package,
not loaded), then loads the root table (the widest, ~690 columns) into an empty copy of
itself with each method, several times, and prints wall seconds, this process's CPU, the
server's CPU (see ``benchmark.server_cpu``), the WAL written and the table's size (TOAST
included). ADBC runs only where ``adbc-driver-postgresql`` is installed. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

import psycopg
import pyarrow as pa
import pyarrow.parquet as pq

import loadstone
from loadstone.plugins.destinations.postgres.copy import copy_statement, csv_chunks

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parent))
from benchmark import server_cpu  # noqa: E402  (a sibling script, found through the path above)

CASES = HERE.parents[1] / "tests" / "fixtures" / "cases"


def normalized_root(url: str, records: int, work: Path) -> tuple[list[Path], str]:
    """Load ``records`` events with loadstone once; return the root's Parquet files and table DDL."""
    events = json.loads(gzip.decompress((CASES / "github_events.json.gz").read_bytes()))
    data = work / "events.jsonl"
    with data.open("w", encoding="utf-8") as handle:
        for i in range(records):
            handle.write(json.dumps({**events[i % len(events)], "id": str(i)}) + "\n")
    pipe = loadstone.pipeline(
        "copy_methods",
        destination=loadstone.destinations.postgres(credentials=url),
        dataset_name="copy_methods",
        pipelines_dir=str(work / "p"),
    )
    pipe.extract(data, table_name="events")
    pipe.normalize()
    files = sorted((work / "p").rglob("*.parquet"))
    return [f for f in files if pq.read_schema(f).names[:2] == ["id", "type"]], "events"


def fresh_table(conn: psycopg.Connection, files: list[Path]) -> list[str]:
    conn.execute("DROP SCHEMA IF EXISTS copy_methods CASCADE")
    conn.execute("CREATE SCHEMA copy_methods")
    columns = pq.read_schema(files[0]).names
    ddl = ", ".join(f'"{c}" text' for c in columns)  # one type: both methods send the same
    conn.execute(f"CREATE TABLE copy_methods.events ({ddl})")
    return columns


def via_csv(url: str, files: list[Path]) -> None:
    with psycopg.connect(url) as conn, conn.cursor() as cur:
        for file in files:
            names = pq.read_schema(file).names
            with cur.copy(copy_statement('"copy_methods"."events"', names)) as copy:
                for chunk in csv_chunks(file, names):
                    copy.write(chunk)


def via_csv_inline(url: str, files: list[Path]) -> None:
    """``via_csv`` with ``toast_tuple_target`` at 8160 for the COPY (``client._inline_rows``)."""
    with psycopg.connect(url) as conn:
        conn.execute('ALTER TABLE "copy_methods"."events" SET (toast_tuple_target = 8160)')
        with conn.cursor() as cur:
            for file in files:
                names = pq.read_schema(file).names
                with cur.copy(copy_statement('"copy_methods"."events"', names)) as copy:
                    for chunk in csv_chunks(file, names):
                        copy.write(chunk)
        conn.execute('ALTER TABLE "copy_methods"."events" RESET (toast_tuple_target)')


def wal_and_size(url: str) -> tuple[int, int]:
    """The server's WAL position and the test table's size with its TOAST, in bytes."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint, "
            "pg_total_relation_size('copy_methods.events')"
        ).fetchone()
        return int(row[0]), int(row[1])


def via_adbc(url: str, files: list[Path]) -> None:
    import adbc_driver_postgresql.dbapi as adbc

    with adbc.connect(url) as conn, conn.cursor() as cur:
        for file in files:
            table = pq.read_table(file)  # every column text, as in the target table
            table = table.cast(pa.schema([f.with_type(pa.string()) for f in table.schema]))
            cur.adbc_ingest("events", table, mode="append", db_schema_name="copy_methods")
        conn.commit()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--postgres", default=os.environ.get("LOADSTONE_TEST_POSTGRES"))
    parser.add_argument("--workdir", default="/tmp/loadstone-copy-methods")
    args = parser.parse_args()
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    files, _ = normalized_root(args.postgres, args.records, work)
    print(
        f"{args.records} events: {len(files)} files, {sum(f.stat().st_size for f in files) / 1e6:.1f} MB Parquet"
    )
    methods = [("psycopg csv COPY", via_csv), ("csv, toast target", via_csv_inline)]
    if importlib.util.find_spec("adbc_driver_postgresql") is not None:
        methods.append(("adbc binary COPY", via_adbc))
    else:
        print("adbc binary COPY skipped (pip install adbc-driver-postgresql to compare it)")
    for name, method in methods:
        for _ in range(args.repeat):
            with psycopg.connect(args.postgres, autocommit=True) as conn:
                fresh_table(conn, files)
                conn.execute("CHECKPOINT")
            wal, _ = wal_and_size(args.postgres)
            server, cpu, wall = server_cpu(args.postgres), time.process_time(), time.perf_counter()
            method(args.postgres, files)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            server = server_cpu(args.postgres) - server
            wal_after, size = wal_and_size(args.postgres)
            print(
                f"{name:<18} {wall:6.2f} s  client cpu {cpu:5.2f} s  server cpu {server:5.2f} s  "
                f"WAL {(wal_after - wal) / 1e6:6.0f} MB  table {size / 1e6:6.0f} MB  "
                f"load {os.getloadavg()[0]:.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
