"""Benchmark: a REST API parent with parallelized children, on a loopback server with latency.

Usage::

    python bench/extract_benchmark.py [--pages 20] [--per-page 20] [--latency 0.05]
        [--dlt-python /tmp/dltenv/bin/python] [--workdir /tmp/loadstone-extract-bench]

A threaded HTTP server on 127.0.0.1 answers every request after ``--latency`` seconds:
``/items?page=N`` lists ``--per-page`` items per page over ``--pages`` pages, and
``/items/{id}/detail`` is one item's detail. The same ``rest_api`` program (the items, and
their details as a ``parallelized`` child) runs under dlt 1.31 and under
``import loadstone as dlt``, each in a cold process, into DuckDB. The server counts the
requests of each run. Printed: wall seconds, requests (parent, child), rows loaded, and the
ratio; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmark import measure_child, rows_loaded

PROGRAM = """
import sys
if sys.argv[1] == "loadstone":
    import loadstone as dlt
    from loadstone.sources.rest_api import rest_api_source
else:
    import dlt
    from dlt.sources.rest_api import rest_api_source
url, folder = sys.argv[2], sys.argv[3]
config = {
    "client": {"base_url": url},
    "resources": [
        {
            "name": "items",
            "endpoint": {
                "path": "items",
                "data_selector": "data",
                "paginator": {"type": "page_number", "base_page": 1, "total_path": "total_pages"},
            },
        },
        {
            "name": "details",
            "parallelized": True,
            "endpoint": {"path": "items/{resources.items.id}/detail", "paginator": "single_page"},
        },
    ],
}
pipeline = dlt.pipeline(
    "extract_bench",
    destination=dlt.destinations.duckdb(folder + "/extract_bench.duckdb"),
    pipelines_dir=folder,
    dataset_name="d",
)
pipeline.run(rest_api_source(config))
"""


class Api:
    """The server's data and its request counts."""

    def __init__(self, pages: int, per_page: int, latency: float) -> None:
        self.pages, self.per_page, self.latency = pages, per_page, latency
        self.counts = {"parent": 0, "child": 0}
        self.lock = threading.Lock()

    def answer(self, path: str) -> Any:
        time.sleep(self.latency)
        detail = re.fullmatch(r"/items/(\d+)/detail", path.split("?")[0])
        with self.lock:
            self.counts["child" if detail else "parent"] += 1
        if detail:
            number = int(detail.group(1))
            return [{"id": number, "detail": f"detail of {number}", "weight": number * 3}]
        page = int(dict(p.split("=") for p in path.split("?")[1].split("&")).get("page", 1))
        first = (page - 1) * self.per_page
        items = [{"id": first + k, "name": f"item {first + k}"} for k in range(self.per_page)]
        return {"data": items if page <= self.pages else [], "total_pages": self.pages}


def serve(api: Api) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            body = json.dumps(api.answer(self.path if "?" in self.path else self.path + "?page=1"))
            data = body.encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def run_tool(tool: str, python: str, api: Api, url: str, workdir: Path) -> dict[str, Any]:
    work = workdir / f"run-{tool}"  # not named like a package the program imports
    program = workdir / "program.py"
    program.write_text(PROGRAM)
    api.counts = {"parent": 0, "child": 0}
    env = {**os.environ, "RUNTIME__LOG_LEVEL": "CRITICAL"}
    measured = measure_child([python, str(program), tool, url, str(work)], env, work)
    return {
        "wall": measured["wall"],
        "cpu": measured["cpu"],
        "requests": dict(api.counts),
        "details": rows_loaded(work, "extract_bench", "d.details"),
        "items": rows_loaded(work, "extract_bench", "d.items"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--per-page", type=int, default=20)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--dlt-python", default=None)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/loadstone-extract-bench"))
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    api = Api(args.pages, args.per_page, args.latency)
    server = serve(api)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    tools = {"loadstone": sys.executable}
    if args.dlt_python:
        tools["dlt"] = args.dlt_python
    results = {
        tool: run_tool(tool, python, api, url, args.workdir) for tool, python in tools.items()
    }
    server.shutdown()
    print(
        f"{args.pages} pages x {args.per_page} items, {args.latency * 1000:.0f} ms per request, "
        "parallelized children"
    )
    for tool, found in results.items():
        print(
            f"{tool:>9}: {found['wall']:6.2f} s wall, {found['cpu']:5.2f} s CPU, requests "
            f"{found['requests']['parent']} parent + {found['requests']['child']} child, "
            f"rows {found['items']} items / {found['details']} details"
        )
    if "dlt" in results:
        print(f"dlt / loadstone wall: {results['dlt']['wall'] / results['loadstone']['wall']:.2f}x")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
