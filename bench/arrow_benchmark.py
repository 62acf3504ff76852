"""Benchmark: Arrow tables, pandas frames and Parquet files into DuckDB, loadstone vs dlt 1.31.

Usage::

    python bench/arrow_benchmark.py [--rows 1000000] [--dlt-python /tmp/dltenv/bin/python]
        [--parquet-mb 1024] [--workdir /tmp/loadstone-arrow-bench] [--only loadstone]

Cases, each tool in its own cold process (imports count), on the same data:

* ``arrow``: one ``pyarrow.Table`` of ``--rows`` rows and 20 mixed-type columns (ints of
  several widths, floats, bools, strings, a dictionary column, decimals, dates, timestamps
  with and without a zone, a struct and a list column) passed to ``pipeline.run``;
* ``pandas``: the same data as a ``pandas.DataFrame`` (nested columns left out: pandas holds
  them as Python objects);
* ``parquet`` (loadstone only, with ``--parquet-mb``): the table written as a Parquet file of
  about that size and loaded with ``loadstone run FILE`` (dlt has no file input for it).

The data is built inside the child from a fixed seed (same rows for both tools); the child
prints the seconds ``run()`` took, the parent measures the whole process (wall, CPU, peak RSS
of the process tree). Figures are printed, never asserted.
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


def build_table(rows: int, nested: bool = True) -> Any:
    """``rows`` rows of 20 mixed-type columns (18 without the nested ones), seeded."""
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(7)
    base = np.datetime64("2024-01-01T00:00:00", "us")
    stamps = base + rng.integers(0, 365 * 86400 * 10**6, rows).astype("timedelta64[us]")
    words = np.array(["alpha", "beta", "gamma", "delta", "epsilon"])
    columns: dict[str, Any] = {
        "id": pa.array(np.arange(rows, dtype=np.int64)),
        "Account ID": pa.array(rng.integers(0, 2**31 - 1, rows, dtype=np.int32)),
        "qty": pa.array(rng.integers(0, 100, rows, dtype=np.int16)),
        "flags": pa.array(rng.integers(0, 8, rows, dtype=np.int8)),
        "price": pa.array(rng.random(rows) * 1000),
        "ratio": pa.array(rng.random(rows).astype(np.float32)),
        "active": pa.array(rng.random(rows) > 0.5),
        "name": pa.array(words[rng.integers(0, 5, rows)]).cast(pa.string()),
        "city": pa.array(words[rng.integers(0, 5, rows)]).dictionary_encode(),
        "comment": pa.array([f"row {i} comment" for i in range(rows)]),
        "amount": pa.array(rng.integers(0, 10**8, rows, dtype=np.int32))
        .cast(pa.decimal128(10, 0))
        .cast(pa.decimal128(12, 2)),
        "day": pa.array(stamps.astype("datetime64[D]")),
        "created": pa.array(stamps).cast(pa.timestamp("us", tz="UTC")),
        "updated": pa.array(stamps),
        "score": pa.array(np.where(rng.random(rows) > 0.1, rng.random(rows), np.nan)),
        "visits": pa.array(rng.integers(0, 10**6, rows, dtype=np.int64)),
        "code": pa.array(rng.integers(0, 10**9, rows).astype(str)),
        "big": pa.array(rng.integers(0, 2**62, rows, dtype=np.int64)),
    }
    if nested:
        small = rng.integers(0, 9, rows)
        columns["meta"] = pa.StructArray.from_arrays(
            [pa.array(small), pa.array(words[small % 5])], ["level", "tag"]
        )
        columns["tags"] = pa.array([[int(v), int(v) + 1] for v in small])
    return pa.table(columns)


# -- children ---------------------------------------------------------------------------------
def child(tool: str, case: str, rows: int, work: str) -> None:
    """Build the data, run one pipeline, print the seconds ``run()`` took as JSON."""
    os.chdir(work)
    if tool == "dlt":
        import dlt

        os.environ.setdefault("NORMALIZE__WORKERS", "2")
    else:
        import loadstone as dlt  # type: ignore[no-redef]
    table = build_table(rows, nested=case == "arrow")
    data = table if case == "arrow" else table.to_pandas()
    del table
    pipe = dlt.pipeline(
        f"bench_{tool}", destination="duckdb", dataset_name="bench", pipelines_dir=work
    )
    started = time.perf_counter()
    pipe.run(data, table_name="events")
    print(json.dumps({"run_seconds": time.perf_counter() - started}))


def _measure(command: list[str], work: Path) -> dict[str, Any]:
    return measure_child(command, dict(os.environ), work)


def _line(tool: str, case: str, figures: dict[str, Any], rows: int) -> str:
    run = figures.get("run_seconds")
    return (
        f"{case:8} {tool:10} wall {figures['wall']:7.2f} s  run() "
        f"{run if run is None else f'{run:7.2f}'} s  cpu {figures['cpu']:7.2f} s  "
        f"peak {figures['peak']:7.0f} MB  rows {rows}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--dlt-python", default=None)
    parser.add_argument("--parquet-mb", type=int, default=0)
    parser.add_argument("--workdir", default="/tmp/loadstone-arrow-bench")
    parser.add_argument("--only", choices=["loadstone", "dlt"], default=None)
    parser.add_argument("--child", nargs=3, metavar=("TOOL", "CASE", "WORK"))
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], args.rows, args.child[2])
        return 0
    root = Path(args.workdir)
    tools = {"loadstone": sys.executable}
    if args.dlt_python and args.only != "loadstone":
        tools["dlt"] = args.dlt_python
    if args.only == "dlt":
        tools.pop("loadstone")
    script = str(Path(__file__).resolve())
    for case in ("arrow", "pandas"):
        results = {}
        for tool, python in tools.items():
            work = root / f"{case}_{tool}"
            command = [python, script, "--rows", str(args.rows), "--child", tool, case, str(work)]
            results[tool] = _measure(command, work)
            loaded = rows_loaded(work, f"bench_{tool}", "bench.events")
            print(_line(tool, case, results[tool], loaded), flush=True)
        if len(results) == 2:
            a, b = results["loadstone"], results["dlt"]
            print(
                f"{case:8} dlt/loadstone: wall {b['wall'] / a['wall']:.2f}x, run() "
                f"{b['run_seconds'] / a['run_seconds']:.2f}x, peak memory "
                f"{a['peak'] / b['peak']:.2f} of dlt's",
                flush=True,
            )
    if args.parquet_mb and "loadstone" in tools:
        parquet_case(root, args.parquet_mb)
    return 0


def parquet_case(root: Path, megabytes: int) -> None:
    """A Parquet file of about ``megabytes`` through ``loadstone run`` (a cold process)."""
    import pyarrow.parquet as pq

    path = root / "big.parquet"
    root.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        chunk = build_table(500_000, nested=False)
        with pq.ParquetWriter(path, chunk.schema) as writer:
            while path.stat().st_size < megabytes * 2**20:
                writer.write_table(chunk)
    size_mb = path.stat().st_size / 2**20
    rows = pq.ParquetFile(path).metadata.num_rows
    work = root / "parquet_loadstone"
    loadstone_cli = str(Path(sys.executable).with_name("loadstone"))
    command = [loadstone_cli, "run", str(path), "--table", "events", "--pipeline", "bench_pq"]
    command += ["--dataset", "bench", "--pipelines-dir", str(work), "-q"]
    figures = _measure(command, work)
    loaded = rows_loaded(work, "bench_pq", "bench.events")
    print(
        f"parquet  loadstone  {size_mb:.0f} MB file, {rows} rows: wall {figures['wall']:.2f} s, "
        f"cpu {figures['cpu']:.2f} s, peak {figures['peak']:.0f} MB, "
        f"{size_mb / figures['wall']:.0f} MB/s, rows loaded {loaded}"
    )


if __name__ == "__main__":
    sys.exit(main())
