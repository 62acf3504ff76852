"""Benchmark: gzipped JSON-lines objects on a loopback S3 server, through the filesystem source.

Usage::

    python bench/filesystem_benchmark.py [--objects 200] [--records-per-object 5000]
        [--dlt-python /tmp/dltenv/bin/python] [--workdir /tmp/loadstone-fs-bench]

It starts moto's S3 server on loopback (as the tests do), uploads ``--objects`` gzipped
objects of GitHub events (``tests/fixtures/cases``, fresh ids), then runs, each in a cold
process, into DuckDB:

* ``dlt``: ``filesystem(bucket, file_glob="*.jsonl.gz") | read_jsonl()`` under dlt 1.31 (rows
  parsed in the pipeline's process);
* ``loadstone``: the same program under ``import loadstone as dlt``, with
  ``packages.storage_url`` on the same bucket, so the listed objects are read where they lie
  by the normalize step's local workers (``loadstone.extract.file_pipes``).

Figures (wall, CPU, peak memory of the process tree, rows loaded) are printed, never asserted.
The Spark-cluster variant of the in-place path is the main benchmark's ``--master`` run.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmark import EVENTS, measure_child, rows_loaded

CREDENTIALS = {
    "aws_access_key_id": "testing",
    "aws_secret_access_key": "testing",
    "region_name": "us-east-1",
}


def start_s3(port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(3)
    return process


def upload(endpoint: str, bucket: str, objects: int, per_object: int) -> int:
    """``objects`` gzipped JSONL objects; returns their total uncompressed size."""
    import boto3

    client = boto3.client("s3", endpoint_url=endpoint, **CREDENTIALS)
    client.create_bucket(Bucket=bucket)
    events = json.loads(gzip.decompress(EVENTS.read_bytes()))
    total = 0
    for number in range(objects):
        lines = []
        for i in range(per_object):
            event = dict(events[(number * per_object + i) % len(events)])
            event["id"] = str(40_000_000_000 + number * per_object + i)
            lines.append(json.dumps(event, ensure_ascii=False))
        body = ("\n".join(lines) + "\n").encode("utf-8")
        total += len(body)
        client.put_object(
            Bucket=bucket, Key=f"events/part-{number:05d}.jsonl.gz", Body=gzip.compress(body, 1)
        )
    return total


def child(tool: str, bucket_url: str, work: str) -> None:
    os.chdir(work)
    if tool == "dlt":
        import dlt
        from dlt.sources.filesystem import filesystem, read_jsonl
    else:
        import loadstone as dlt  # type: ignore[no-redef]
        from loadstone.sources.filesystem import filesystem, read_jsonl  # type: ignore[no-redef]
    endpoint = os.environ["BENCH_S3_ENDPOINT"]
    credentials = {**CREDENTIALS, "endpoint_url": endpoint}
    files = filesystem(bucket_url, credentials, file_glob="*.jsonl.gz")
    pipe = dlt.pipeline(
        f"fsbench_{tool}", destination="duckdb", dataset_name="fs", pipelines_dir=work
    )
    started = time.perf_counter()
    pipe.run((files | read_jsonl()).with_name("events"))
    print(json.dumps({"run_seconds": time.perf_counter() - started}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--objects", type=int, default=200)
    parser.add_argument("--records-per-object", type=int, default=5000)
    parser.add_argument("--dlt-python", default=None)
    parser.add_argument("--workdir", default="/tmp/loadstone-fs-bench")
    parser.add_argument("--port", type=int, default=39517)
    parser.add_argument("--child", nargs=3, metavar=("TOOL", "BUCKET_URL", "WORK"))
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return 0
    endpoint = f"http://127.0.0.1:{args.port}"
    server = start_s3(args.port)
    try:
        size = upload(endpoint, "bench", args.objects, args.records_per_object)
        print(f"{args.objects} objects, {size / 2**20:.0f} MB of JSON lines (gzipped on S3)")
        env = {**os.environ, "BENCH_S3_ENDPOINT": endpoint}
        env_loadstone = {
            **env,
            "PACKAGES__STORAGE_URL": "s3://bench/packages",
            "NORMALIZE__ENGINE": "local",
            **{f"PACKAGES__CREDENTIALS__{k.upper()}": v for k, v in CREDENTIALS.items()},
            "PACKAGES__CREDENTIALS__ENDPOINT_URL": endpoint,
        }
        tools: dict[str, tuple[str, dict[str, str]]] = {
            "loadstone": (sys.executable, env_loadstone)
        }
        if args.dlt_python:
            tools["dlt"] = (args.dlt_python, env)
        results: dict[str, Any] = {}
        for tool, (python, tool_env) in tools.items():
            work = Path(args.workdir) / tool
            command = [
                python,
                str(Path(__file__).resolve()),
                "--child",
                tool,
                "s3://bench/events",
                str(work),
            ]
            got = results[tool] = measure_child(command, tool_env, work)
            print(
                f"{tool:10} wall {got['wall']:7.2f} s  run() {got.get('run_seconds', 0):7.2f} s  "
                f"cpu {got['cpu']:7.2f} s  peak {got['peak']:6.0f} MB  rows {rows_loaded(work, f'fsbench_{tool}', 'fs.events')}",
                flush=True,
            )
        if len(results) == 2:
            a, b = results["loadstone"], results["dlt"]
            print(
                f"dlt/loadstone: wall {b['wall'] / a['wall']:.2f}x, peak memory {a['peak'] / b['peak']:.2f} of dlt's"
            )
    finally:
        server.terminate()
    return 0


if __name__ == "__main__":
    sys.exit(main())
