"""Benchmark: loadstone end to end vs dlt 1.31 vs the raw Spark floor, on the same JSONL file.

Usage::

    python bench/benchmark.py --records 20000 100000 200000 \
        [--dlt-python /work/venvs/dlt/bin/python] [--workdir /tmp/loadstone-bench] \
        [--destination postgres [--postgres URL]]
    python bench/benchmark.py --engine spark --master spark://127.0.0.1:7077 \
        --storage-url /shared/store [--cores-max 1] --only loadstone
    python bench/benchmark.py --compare-cluster --start-cluster --records 20000
    python bench/benchmark.py --records 20000 100000 --only loadstone dlt duckdb \
        --dlt-python ... --chart docs/performance/figures.json   # and benchmark.svg beside it

``--compare-cluster`` runs loadstone three times on one file: every chunk in the driver
process (``normalize.engine = local``, one worker), then as Spark tasks on one and on two
one-core workers of ``--master`` (or of the loopback cluster ``--start-cluster`` starts
with ``tests/cluster_support.py``: a standalone master and two one-core workers), and
prints CPU per chunk in a Spark task against the driver and the two-worker speed-up.

On a cluster (``--master``) every loadstone run also prints the per-chunk CPU of its Spark
tasks (from the trace); ``--engine local`` prints the same figure for the driver.

For each size it builds one JSONL file by replicating ``../shared/cases/github_events.json``
with fresh ids, then runs, each in its own cold process (so JVM start and imports count):

* ``loadstone``: ``loadstone.pipeline(...).run(path, table_name="events")`` into DuckDB
  (extract, normalize on Spark, load);
* ``dlt`` (optional, needs ``--dlt-python``): dlt 1.31 end to end into DuckDB with
  ``loader_file_format="parquet"``, items read from the same file;
* ``duckdb``: DuckDB's own ``read_json_auto`` into one table (``CREATE TABLE AS``), the
  tool a user would reach for instead (no child tables, nested values left as STRUCTs);
* ``spark_floor``: ``spark.read.json(path).write.parquet(...)``: Spark reading and writing
  the data with no normalization at all, the floor a Spark-based loader cannot beat;
* ``parser_floor``: simdjson (the native engine core's parser) over every line of the file,
  in 64 MiB pieces, nothing built: the floor of a JSON-lines normalizer on this machine.

``--engine-core python native`` runs loadstone once per engine core
(``normalize.engine_core``) and prints, for each, the workers' CPU seconds per event (the
chunks' CPU from the trace) and which core wrote the chunks (native, or handed back to the
Python engine and why).

With ``--destination postgres`` both tools load into the same PostgreSQL server (datasets
``bench_loadstone`` and ``bench_dlt``, dropped before every run; dlt with its COPY-based
``csv`` format, ``BENCH_DLT_FORMAT=insert_values`` for its default), and there is no
spark floor. The server's CPU and the WAL written during each run are printed too; both
count everything on the server, so give the benchmark a server of its own
(``LOADSTONE_PG_STATE=/tmp/pg-bench bash .ci/postgres start``).

It prints seconds, records/s, MB/s, peak memory (sum of the RSS of the whole process tree,
JVM included, sampled from /proc every 50 ms; and the driver process's own peak, which
holds DuckDB), CPU seconds and the ratios. Nothing is asserted: speed is
measured, not tested.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import os
import resource
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
#: the real GitHub events the suite keeps (gzipped), so the benchmark needs nothing beside
#: the clone either
EVENTS = HERE.parents[1] / "tests" / "fixtures" / "cases" / "github_events.json.gz"
PAGE = os.sysconf("SC_PAGE_SIZE")
TICKS = os.sysconf("SC_CLK_TCK")
CORES = len(os.sched_getaffinity(0))


# -- input ------------------------------------------------------------------------------------
def build_input(path: Path, records: int) -> int:
    """Write ``records`` GitHub events (fresh ids) as JSONL; returns the file size."""
    events = json.loads(gzip.decompress(EVENTS.read_bytes()))
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(records):
            event = dict(events[i % len(events)])
            event["id"] = str(30_000_000_000 + i)
            handle.write(json.dumps(event, ensure_ascii=False))
            handle.write("\n")
    return path.stat().st_size


#: synthetic shapes for the schema-width measurement: every record has the same size (20
#: scalar fields and 2 nested lists of 3 rows), but draws its field names and nested lists
#: from a pool: (columns, nested tables) per shape, so only the width of the schema differs
WIDTHS = {"narrow": (20, 2), "medium": (300, 20), "wide": (3000, 200)}
SHAPES = ("events", *WIDTHS)


def build_shaped_input(path: Path, records: int, shape: str) -> int:
    """Write ``records`` synthetic records of one ``shape`` as JSONL; returns the file size."""
    columns, tables = WIDTHS[shape]
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(records):
            record: dict[str, object] = {"id": i}
            for j in range(20):
                column = (i * 20 + j) % columns
                record[f"field_{column}"] = f"value {i} {j}" if j % 2 else i * j
            for j in range(2):
                table = (i * 2 + j) % tables
                record[f"list_{table}"] = [
                    {"pos": k, "name": f"n{k}", "x": k * 1.5} for k in range(3)
                ]
            handle.write(json.dumps(record))
            handle.write("\n")
    return path.stat().st_size


def compile_loadstone() -> None:
    """Byte-compile loadstone's modules once, as ``pip install`` does for a regular install.

    An editable install leaves that to the first import, and where the environment sets
    ``PYTHONDONTWRITEBYTECODE`` (as this machine's does) every cold run would compile about
    140 modules again (0.1 s), which neither a user's install nor dlt's environment pays.
    """
    import loadstone
    import loadstone.plugins

    folders = {Path(loadstone.__file__).parent, Path(loadstone.plugins.__file__).parent}
    for folder in sorted(folders):
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(folder)], check=True)


# -- memory of a process tree ----------------------------------------------------------------
def _children_map() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    return children


def tree_usage(root: int) -> tuple[int, dict[int, float]]:
    """Resident memory (bytes) of ``root`` and all descendants, and CPU seconds per pid."""
    children = _children_map()
    total = 0
    cpu: dict[int, float] = {}
    stack = [root]
    while stack:
        pid = stack.pop()
        try:
            with open(f"/proc/{pid}/statm", "rb") as handle:
                total += int(handle.read().split()[1]) * PAGE
            with open(f"/proc/{pid}/stat", "rb") as handle:
                stat = handle.read()
            fields = stat[stat.rindex(b")") + 2 :].split()
            cpu[pid] = (int(fields[11]) + int(fields[12])) / TICKS
        except (OSError, ValueError, IndexError):
            pass
        stack.extend(children.get(pid, ()))
    return total, cpu


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_measured(
    command: list[str], env: dict[str, str], cwd: Path
) -> tuple[float, int, str, float]:
    """Run ``command``; returns (seconds, peak tree RSS in bytes, stdout, CPU seconds).

    CPU seconds (user + system of the whole reaped process tree, JVM included) are reported
    beside wall time because they are far less sensitive to other load on the machine.
    """
    cpu_before = _children_cpu()
    started = time.perf_counter()
    process = subprocess.Popen(
        command, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    peak = 0
    cpu_seen: dict[int, float] = {}
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            rss, cpu = tree_usage(process.pid)
            peak = max(peak, rss)
            for pid, seconds in cpu.items():
                cpu_seen[pid] = max(cpu_seen.get(pid, 0.0), seconds)
            stop.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = process.communicate()
    elapsed = time.perf_counter() - started
    stop.set()
    sampler.join()
    if process.returncode != 0:
        raise RuntimeError(f"{command[:3]} failed ({process.returncode}):\n{err[-4000:]}")
    # CPU of the whole tree: /proc samples catch the JVM and Python workers, which the child
    # does not always reap; getrusage catches short-lived processes the sampler missed
    sampled = sum(cpu_seen.values())
    return elapsed, peak, out, max(sampled, _children_cpu() - cpu_before)


def measure_child(command: list[str], env: dict[str, str], work: Path) -> dict[str, Any]:
    """Run a benchmark child in a fresh ``work`` folder: wall, CPU, peak tree RSS (MB) and
    the ``{"run_seconds": ...}`` line the child printed (the other benchmarks' children)."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    seconds, peak, out, cpu = run_measured(command, env, work)
    lines = [line for line in out.splitlines() if line.startswith('{"run_seconds"')]
    inner = json.loads(lines[-1]) if lines else {}
    return {"wall": seconds, "cpu": cpu, "peak": peak / 2**20, **inner}


def rows_loaded(work: Path, database: str, table: str) -> int:
    """Rows of ``table`` (``dataset.table``) in the DuckDB file ``<database>.duckdb`` under
    ``work``: what a child loaded."""
    import duckdb

    found = sorted(work.rglob(f"{database}.duckdb"))
    with duckdb.connect(str(found[0]), read_only=True) as conn:
        row = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
    return int(row[0]) if row else 0


# -- children (each runs in a cold process) ---------------------------------------------------
def _report(
    info: str,
    normalize: dict[str, object] | None = None,
    steps: dict[str, tuple[float, float]] | None = None,
    spark_phases: dict[str, float] | None = None,
) -> None:
    """Last line of a child's output: its load info and the peak RSS of its own process.

    The child's own process is the driver: our Python, the normalizer's driver side and the
    embedded DuckDB. Its peak is what must stay flat as data grows; the Spark JVM and Python
    workers are separate processes, counted in the tree peak only.
    """
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(
        json.dumps(
            {
                "info": info[-2000:],
                "driver_peak": maxrss,
                "normalize": normalize,
                "steps": steps or {},
                "spark_phases": spark_phases or {},
            }
        )
    )


def chunk_figures(normalize: dict[str, object] | None) -> str:
    """Per-chunk CPU where the chunks ran (a Spark task or the driver), from the trace."""
    if not normalize or not normalize.get("chunks"):
        return ""
    chunks = [c for c in normalize["chunks"] if c.get("cpu_seconds") is not None]  # type: ignore[union-attr]
    if not chunks:
        return ""
    cpu = sorted(float(c["cpu_seconds"]) for c in chunks)
    cores = normalize.get("cores") or {}
    core_text = ", ".join(f"{n} {core}" for core, n in sorted(cores.items()))  # type: ignore[union-attr]
    executors = sorted({str(c["executor"]) for c in chunks})
    busy: dict[str, float] = {}
    for c in chunks:
        busy[str(c["executor"])] = busy.get(str(c["executor"]), 0.0) + float(c["wall_seconds"])
    return (
        f"engine {normalize.get('engine')} on {normalize.get('master') or normalize.get('remote') or '-'}: "
        f"{len(chunks)} chunks on {len(executors)} executor(s), CPU per chunk median "
        f"{cpu[len(cpu) // 2]:.3f} s, mean {sum(cpu) / len(cpu):.3f} s, "
        f"native {all(c.get('native') for c in chunks)}; task wall time {sum(busy.values()):.2f} s, "
        f"busiest executor {max(busy.values()):.2f} s; workers' CPU {sum(cpu):.2f} s; "
        f"chunks by engine core: {core_text or '-'}"
    )


def _postgres() -> str | None:
    """The server of ``--destination postgres`` (None: DuckDB files in the work folder)."""
    return os.environ.get("BENCH_POSTGRES") or None


def _cpu_seconds() -> float:
    """CPU of this process and of the children it has reaped (the local worker processes)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _time_spark_phases() -> dict[str, float]:
    """Wall seconds of the Spark phases of a normalize step, by wrapping the three calls.

    Session start (JVM and, on a cluster, application registration), the wait for executors,
    and the Spark jobs themselves (tasks plus scheduling); what the step takes beyond these
    is the driver's own work.
    """
    import loadstone.spark_session as session_module
    from loadstone.plugins.normalizers.relational import spark_tasks

    spent: dict[str, Any] = {}

    def timed(module: Any, name: str, label: str) -> None:
        inner = getattr(module, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            began, stamp = time.perf_counter(), time.time()
            try:
                return inner(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.perf_counter() - began
                spent.setdefault("_calls", []).append([label, stamp, time.time()])

        setattr(module, name, wrapper)

    timed(session_module, "get_spark_session", "session start")
    timed(spark_tasks, "wait_for_executors", "executor wait")
    timed(spark_tasks, "run_on_spark", "spark jobs")
    return spent


def spark_overhead(normalize: dict[str, Any], phases: dict[str, Any]) -> str:
    """Where a Spark job's time went beside the chunks' own work, from the task stamps.

    ``startup``: job submitted -> each executor's first task began (scheduling, Python worker
    start, imports, closure); ``between``: one task's end -> the next task's start on the same
    executor; ``in task``: the task's time outside the engine (input check, upload, facts);
    ``tail``: last task ended -> results back in the driver.
    """
    jobs = [(b, e) for label, b, e in phases.get("_calls", []) if label == "spark jobs"]
    chunks = [c for c in normalize.get("chunks") or [] if c.get("started_at")]
    if not jobs or not chunks:
        return ""
    startup = between = tail = in_task = 0.0
    for begin, end in jobs:
        mine = [c for c in chunks if begin <= c["started_at"] <= end]
        by_executor: dict[str, list[dict[str, Any]]] = {}
        for c in sorted(mine, key=lambda c: c["started_at"]):
            by_executor.setdefault(str(c["executor"]), []).append(c)
        for tasks in by_executor.values():
            startup += tasks[0]["started_at"] - begin
            between += sum(b["started_at"] - a["ended_at"] for a, b in itertools.pairwise(tasks))
        in_task += sum(c["ended_at"] - c["started_at"] - c["wall_seconds"] for c in mine)
        tail += end - max((c["ended_at"] for c in mine), default=end)
    executors = len({str(c["executor"]) for c in chunks})
    return (
        f"startup {startup / executors:.2f} s per executor, between tasks {between:.2f} s, "
        f"in task outside the engine {in_task:.2f} s, tail {tail:.2f} s ({len(jobs)} job(s))"
    )


def child_loadstone(path: str, work: str) -> None:
    import loadstone

    spark_phases = _time_spark_phases()

    url = _postgres()
    destination = (
        loadstone.destinations.postgres(credentials=url)
        if url
        else loadstone.destinations.duckdb(os.path.join(work, "loadstone.duckdb"))
    )
    # each step's wall and CPU seconds, read at its "started" and "finished" events
    steps: dict[str, tuple[float, float]] = {}
    began: dict[str, tuple[float, float]] = {}

    def on_progress(event: Any) -> None:
        if event.event == "started":
            began[event.step] = (time.perf_counter(), _cpu_seconds())
        elif event.event == "finished" and event.step in began:
            wall, cpu = began.pop(event.step)
            steps[event.step] = (time.perf_counter() - wall, _cpu_seconds() - cpu)

    pipeline = loadstone.pipeline(
        "bench_loadstone",
        pipelines_dir=os.path.join(work, "pipelines"),
        destination=destination,
        dataset_name="bench_loadstone" if url else "bench",
        progress=on_progress,
    )
    cores = _count_cores()
    info = pipeline.run(Path(path), table_name="events")
    normalize = pipeline.last_trace.get("normalize")
    if isinstance(normalize, dict):
        normalize = {**normalize, "cores": dict(cores)}
    _report(str(info), normalize, steps, spark_phases)


def _count_cores() -> dict[str, int]:
    """Chunks per engine core (``ChunkFacts.core``: native, python, or a hand-back's reason),
    counted by wrapping the normalizer's chunk rounds in this benchmark child."""
    from loadstone.plugins.normalizers.relational import normalizer

    counted: dict[str, int] = {}
    inner = normalizer.RelationalNormalizer._run

    def counting(self: Any, *args: Any, **kwargs: Any) -> Any:
        facts = inner(self, *args, **kwargs)
        for fact in facts:
            counted[fact.core] = counted.get(fact.core, 0) + 1
        return facts

    normalizer.RelationalNormalizer._run = counting  # type: ignore[method-assign]  # measuring only
    return counted


def child_dlt(path: str, work: str) -> None:
    import dlt
    import orjson

    def items():  # type: ignore[no-untyped-def]
        with open(path, "rb") as handle:
            for line in handle:
                if line.strip():
                    yield orjson.loads(line)

    url = _postgres()
    destination = (
        dlt.destinations.postgres(credentials=url)
        if url
        else dlt.destinations.duckdb(os.path.join(work, "dlt.duckdb"))
    )
    pipeline = dlt.pipeline(
        pipeline_name="bench_dlt",
        pipelines_dir=os.path.join(work, "pipelines"),
        destination=destination,
        dataset_name="bench_dlt" if url else "bench",
    )
    # parquet on DuckDB; on PostgreSQL dlt's fastest format, csv (COPY), unless told otherwise
    file_format = os.environ.get("BENCH_DLT_FORMAT") or ("csv" if url else "parquet")
    info = pipeline.run(dlt.resource(items(), name="events"), loader_file_format=file_format)
    _report(str(info))


def child_spark_floor(path: str, work: str) -> None:
    from loadstone.spark_session import DEFAULT_OPTIONS, get_spark_session

    # the stock JIT: loadstone's local default (C1 only) suits a driver that only schedules
    # Python work but slows Spark's own JSON reader, and the floor must be Spark at its best
    stock = {"spark.driver.extraJavaOptions": DEFAULT_OPTIONS["spark.driver.extraJavaOptions"]}
    spark = get_spark_session(stock)
    spark.read.json(path).write.mode("overwrite").parquet(os.path.join(work, "floor.parquet"))
    spark.stop()
    _report("spark.read.json + write.parquet")


def child_duckdb(path: str, work: str) -> None:
    """DuckDB's own JSON reader into one table: what a user reaches for instead (nested
    values stay STRUCTs, no child tables, dlt's names not applied; default sampling)."""
    import duckdb

    with duckdb.connect(os.path.join(work, "duckdb_own.duckdb")) as conn:
        conn.execute(f"CREATE TABLE events AS SELECT * FROM read_json_auto('{path}')")
    _report("duckdb read_json_auto")


def child_parser_floor(path: str, work: str) -> None:
    """simdjson over every line of the file, 64 MiB at a time, nothing built."""
    from loadstone.plugins.normalizers.relational import native_core

    documents, parse_cpu = 0, 0.0
    with open(path, "rb") as handle:
        rest = b""
        while piece := handle.read(64 << 20):
            piece = rest + piece
            cut = piece.rfind(b"\n") + 1
            began = time.process_time()
            documents += native_core.parse_lines(memoryview(piece)[:cut])
            parse_cpu += time.process_time() - began
            rest = piece[cut:]
        began = time.process_time()
        documents += native_core.parse_lines(rest)
        parse_cpu += time.process_time() - began
    _report(f"{documents} documents parsed", {"parse_cpu": parse_cpu})


CHILDREN = {
    "loadstone": child_loadstone,
    "parser_floor": child_parser_floor,
    "dlt": child_dlt,
    "spark_floor": child_spark_floor,
    "duckdb": child_duckdb,
}


def cluster_env(args: argparse.Namespace) -> dict[str, str]:
    """Environment that points loadstone's children at the engine and master asked for."""
    env: dict[str, str] = {}
    if args.engine:
        env["NORMALIZE__ENGINE"] = args.engine
    if args.storage_url:
        env["PACKAGES__STORAGE_URL"] = args.storage_url
    if args.master:
        env.update(
            SPARK__MASTER=args.master,
            SPARK__PYSPARK__PYTHON=sys.executable,
            SPARK__DRIVER__HOST="127.0.0.1",
            SPARK__DRIVER__BINDADDRESS="127.0.0.1",
            SPARK_LOCAL_IP="127.0.0.1",
        )
        if not args.master.startswith("local"):
            env["NORMALIZE__MIN_EXECUTORS"] = str(args.cores_max or 1)
    if args.cores_max:
        env["SPARK__CORES__MAX"] = str(args.cores_max)
    if getattr(args, "overlap", None):  # load.overlap_normalize (default: the product's)
        env["LOAD__OVERLAP_NORMALIZE"] = "true" if args.overlap == "on" else "false"
    return env


# -- driver ---------------------------------------------------------------------------------
def server_cpu(url: str | None) -> float:
    """CPU seconds the PostgreSQL server has used so far (0 without one).

    The postmaster's own and reaped children's time (backends of closed connections) plus
    its live children's: the server parses every COPY and INSERT, work a client-side CPU
    figure misses. Needs the server on this machine (the bench's own, from .ci/postgres).
    """
    if not url:
        return 0.0
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        data_dir = conn.execute("SHOW data_directory").fetchone()[0]
    with open(os.path.join(data_dir, "postmaster.pid"), encoding="utf-8") as handle:
        postmaster = int(handle.readline())
    total = 0.0
    for pid in [postmaster, *_children_map().get(postmaster, ())]:
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rindex(b")") + 2 :].split()
        reaped = int(fields[13]) + int(fields[14]) if pid == postmaster else 0
        total += (int(fields[11]) + int(fields[12]) + reaped) / TICKS
    return total


def wal_position(url: str | None) -> int:
    """The server's WAL position in bytes (0 without one): the difference over a run is
    the WAL that run wrote (everything on the server counts: give the bench its own)."""
    if not url:
        return 0
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint").fetchone()
    return int(row[0]) if row else 0


def _drop_postgres_datasets(url: str) -> None:
    """Each run starts from an empty dataset (and the previous run's data is gone)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for name in ("bench_loadstone", "bench_dlt"):
            for schema in (name, f"{name}_staging"):
                conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        conn.execute("CHECKPOINT")


def _measure_loadstone(data: Path, work: Path, extra: dict[str, str]) -> dict[str, Any]:
    """One cold loadstone run with ``extra`` environment: wall, CPU, steps and its trace."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    env = dict(os.environ, LOADSTONE_HOME=str(work / "home"), **extra)
    os.sync()
    load = os.getloadavg()[0]
    seconds, _, out, cpu = run_measured(
        [sys.executable, str(HERE), "--child", "loadstone", str(data), str(work)], env, work
    )
    report = json.loads(out.strip().splitlines()[-1])
    shutil.rmtree(work, ignore_errors=True)
    load = max(load, os.getloadavg()[0])
    return {"seconds": seconds, "cpu": cpu, "load": load, **report}


def _chunk_cpu(normalize: dict[str, Any]) -> tuple[float, float, float, int]:
    """(median CPU per chunk, busiest executor's task wall time, all tasks' wall, chunks)."""
    chunks = [c for c in normalize.get("chunks") or [] if c.get("cpu_seconds") is not None]
    cpu = sorted(float(c["cpu_seconds"]) for c in chunks)
    busy: dict[str, float] = {}
    for c in chunks:
        busy[str(c["executor"])] = busy.get(str(c["executor"]), 0.0) + float(c["wall_seconds"])
    median = cpu[len(cpu) // 2] if cpu else float("nan")
    return median, max(busy.values(), default=0.0), sum(busy.values()), len(chunks)


def compare_cluster(args: argparse.Namespace, root: Path) -> int:
    """Driver vs one vs two one-core workers on the same file (see the module docstring)."""
    cluster = None
    if args.start_cluster:
        sys.path.insert(0, str(HERE.parents[1] / "tests"))
        from cluster_support import start_cluster

        cluster = start_cluster(root / "cluster", connect=False)
        args.master = cluster.master_url
        args.storage_url = args.storage_url or str(cluster.shared / "store")
    if not args.master or args.master.startswith("local"):
        raise SystemExit("--compare-cluster needs --master spark://... or --start-cluster")
    try:
        for records in args.records:
            data = root / f"events_{records}.jsonl"
            size = build_input(data, records)
            base = {"PACKAGES__STORAGE_URL": args.storage_url} if args.storage_url else {}
            variants = {
                "driver": {**base, "NORMALIZE__ENGINE": "local", "NORMALIZE__WORKERS": "1"},
            }
            for workers in (1, 2):
                spark = argparse.Namespace(
                    **{**vars(args), "engine": "spark", "cores_max": workers}
                )
                variants[f"{workers} worker(s)"] = {**base, **cluster_env(spark)}
            runs = {
                name: _measure_loadstone(data, root / "work", env) for name, env in variants.items()
            }
            print(f"\n{records} records, {size / 1e6:.0f} MB, master {args.master}")
            print("| where chunks ran | chunks | CPU per chunk (median) | busiest executor (task wall) "
                  "| normalize step wall | end to end | load avg |")  # fmt: skip
            print("|---|---:|---:|---:|---:|---:|---:|")
            figures = {}
            for name, run in runs.items():
                median, busiest, _, count = _chunk_cpu(run.get("normalize") or {})
                step = run.get("steps", {}).get("normalize", (float("nan"), 0.0))[0]
                figures[name] = (median, busiest, step)
                print(f"| {name} | {count} | {median:.3f} s | {busiest:.2f} s | {step:.2f} s "
                      f"| {run['seconds']:.2f} s | {run['load']:.1f} |")  # fmt: skip
            for name, run in runs.items():
                phases = run.get("spark_phases") or {}
                if phases:
                    step = run.get("steps", {}).get("normalize", (0.0, 0.0))[0]
                    timed = {k: v for k, v in phases.items() if not k.startswith("_")}
                    rest = step - sum(timed.values())
                    print(f"  {name}: normalize step {step:.2f} s = "
                          + ", ".join(f"{k} {v:.2f} s" for k, v in timed.items())
                          + f", driver's own work {rest:.2f} s")  # fmt: skip
                    overhead = spark_overhead(run.get("normalize") or {}, phases)
                    if overhead:
                        print(f"    spark jobs beside the chunks' work: {overhead}")
            one, two, driver = figures["1 worker(s)"], figures["2 worker(s)"], figures["driver"]
            print(f"Spark task CPU per chunk / driver's: {one[0] / driver[0]:.2f}x (one worker), "
                  f"{two[0] / driver[0]:.2f}x (two workers); target <= 1.15x")  # fmt: skip
            print(f"two workers vs one: busiest executor {one[1] / two[1]:.2f}x faster, normalize "
                  f"step {one[2] / two[2]:.2f}x faster; target >= 1.7x")  # fmt: skip
            data.unlink()
    finally:
        if cluster is not None:
            cluster.stop()
    return 0


def print_steps(results: list[dict[str, Any]]) -> None:
    """Each step's wall and CPU seconds and its share of the cores, per run that has them."""
    rows = [r for r in results if r.get("steps")]
    if not rows:
        return
    print()
    print(f"| records | tool | step | wall s | CPU s | CPU use of {CORES} cores | load avg |")
    print("|---:|---|---|---:|---:|---:|---:|")
    for r in rows:
        for step, (wall, cpu) in r["steps"].items():
            print(
                f"| {r['records']} | {r['kind']} | {step} | {wall:.2f} | {cpu:.2f} | "
                f"{cpu / wall / CORES:.0%} | {float(r['load']):.1f} |"
            )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, nargs="+", default=[20_000, 100_000, 200_000])
    parser.add_argument(
        "--dlt-python", default=None, help="python of a venv with dlt 1.31 (optional)"
    )
    parser.add_argument("--workdir", default="/tmp/loadstone-bench")
    parser.add_argument(
        "--shape",
        choices=SHAPES,
        default="events",
        help="events: replicated GitHub events; narrow / medium / wide: same-size synthetic "
        "records over 20, 300 or 3,000 columns and 2, 20 or 200 nested tables",
    )
    parser.add_argument("--only", nargs="+", choices=sorted(CHILDREN), default=None)
    parser.add_argument(
        "--engine",
        choices=("auto", "local", "spark"),
        default=None,
        help="loadstone's normalize.engine (default: its own auto)",
    )
    parser.add_argument("--master", default=None, help="spark.master, e.g. spark://127.0.0.1:7077")
    parser.add_argument(
        "--cores-max", type=int, default=None, help="spark.cores.max on a cluster (1: one worker)"
    )
    parser.add_argument(
        "--storage-url", default=None, help="packages.storage_url (storage the executors share)"
    )
    parser.add_argument(
        "--destination",
        choices=("duckdb", "postgres"),
        default="duckdb",
        help="postgres: both tools load into the server of --postgres (default: "
        "$LOADSTONE_TEST_POSTGRES, see .ci/postgres), datasets bench_loadstone / bench_dlt",
    )
    parser.add_argument("--postgres", default=os.environ.get("LOADSTONE_TEST_POSTGRES"))
    parser.add_argument(
        "--chart",
        metavar="FIGURES_JSON",
        default=None,
        help="write the run's figures there (e.g. docs/performance/figures.json) and draw "
        "the chart beside it (benchmark.svg): seconds per tool and size, loadstone's steps",
    )
    parser.add_argument(
        "--compare-cluster",
        action="store_true",
        help="driver vs one vs two workers of the cluster (see above)",
    )
    parser.add_argument(
        "--start-cluster",
        action="store_true",
        help="start the tests' loopback standalone cluster (two one-core workers) for the run",
    )
    parser.add_argument(
        "--overlap",
        choices=("on", "off"),
        default=None,
        help="load.overlap_normalize for loadstone: load while normalizing, or after",
    )
    parser.add_argument(
        "--engine-core",
        nargs="+",
        choices=("python", "native"),
        default=None,
        help="normalize.engine_core for loadstone: one run per core given (default: the product's)",
    )
    parser.add_argument(
        "--child", nargs=3, metavar=("KIND", "PATH", "WORK"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.child:
        kind, path, work = args.child
        CHILDREN[kind](path, work)
        return 0
    if args.destination == "postgres" and not args.postgres:
        parser.error('--postgres URL needed (or: eval "$(bash .ci/postgres start)")')
    if args.destination == "postgres" and "spark_floor" in (args.only or []):
        parser.error("spark_floor writes files only; it has no postgres variant")

    root = Path(args.workdir)
    root.mkdir(parents=True, exist_ok=True)
    if args.compare_cluster:
        return compare_cluster(args, root)
    kinds = args.only or (
        ["loadstone", "dlt"]
        if args.destination == "postgres"
        else ["loadstone", "dlt", "duckdb", "spark_floor"]
    )
    if args.dlt_python is None and "dlt" in kinds:
        kinds.remove("dlt")
        print("dlt skipped (no --dlt-python)")
    compile_loadstone()
    results: list[dict[str, object]] = []
    for records in args.records:
        data = root / f"{args.shape}_{records}.jsonl"
        if args.shape == "events":
            size = build_input(data, records)
        else:
            size = build_shaped_input(data, records, args.shape)
        # the input was just written: flush it now, or the first tool timed pays its writeback
        os.sync()
        for kind, core in _runs(kinds, args.engine_core):
            work = root / f"{kind}_{records}"
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
            env = dict(os.environ)
            env["LOADSTONE_HOME"] = str(work / "home")
            env["DLT_DATA_DIR"] = str(work / "dlt_home")
            env.update(cluster_env(args))
            if core is not None:
                env["NORMALIZE__ENGINE_CORE"] = core
            if args.destination == "postgres":
                env["BENCH_POSTGRES"] = args.postgres
                _drop_postgres_datasets(args.postgres)
            python = args.dlt_python if kind == "dlt" else sys.executable
            os.sync()  # nor does a tool pay for what the previous one left to write
            load_before = os.getloadavg()[0]
            server_before = server_cpu(env.get("BENCH_POSTGRES"))
            wal_before = wal_position(env.get("BENCH_POSTGRES"))
            seconds, peak, out, cpu = run_measured(
                [python, str(HERE), "--child", kind, str(data), str(work)], env, work
            )
            server = server_cpu(env.get("BENCH_POSTGRES")) - server_before
            wal = wal_position(env.get("BENCH_POSTGRES")) - wal_before
            load = max(load_before, os.getloadavg()[0])
            report = json.loads(out.strip().splitlines()[-1])
            driver = int(report.get("driver_peak", 0))
            for step, (wall, step_cpu) in report.get("steps", {}).items():
                print(
                    f"{records:>7} {kind:<12}   {step:<9} {wall:6.2f} s  cpu {step_cpu:6.2f} s  "
                    f"CPU use {step_cpu / wall / CORES:4.0%} of {CORES} cores",
                    flush=True,
                )
            figures = chunk_figures(report.get("normalize"))
            if figures:
                print(f"        {figures}", flush=True)
            worker_cpu = _workers_cpu(report.get("normalize"))
            if kind == "parser_floor" or worker_cpu:
                floor = report["normalize"]["parse_cpu"] if kind == "parser_floor" else worker_cpu
                what = "parser alone" if kind == "parser_floor" else "workers"
                print(
                    f"        {what}: {floor / records * 1e6:.1f} CPU us per event "
                    f"({floor:.2f} CPU s for {records} events)",
                    flush=True,
                )
            label = kind if core is None or kind != "loadstone" else f"loadstone[{core}]"
            results.append(
                {
                    "records": records,
                    "kind": label,
                    "seconds": seconds,
                    "peak": peak,
                    "bytes": size,
                    "cpu": cpu,
                    "load": load,
                    "driver": driver,
                    "server": server,
                    "wal": wal,
                    "steps": report.get("steps", {}),
                }
            )
            print(
                f"{records:>7} {label:<12} {seconds:8.2f} s {records / seconds:10.0f} rec/s "
                f"{size / seconds / 1e6:8.2f} MB/s  peak {peak / 1e6:6.0f} MB (driver {driver / 1e6:5.0f})  "
                f"cpu {cpu:6.1f} s  server cpu {server:6.1f} s  WAL {wal / 1e6:6.0f} MB  "
                f"load {load:4.1f}",
                flush=True,
            )
            shutil.rmtree(work, ignore_errors=True)
        data.unlink()

    print()
    print(
        "| records | MB | tool | seconds | records/s | MB/s | peak RSS MB (tree) "
        f"| driver peak MB | CPU s | CPU use of {CORES} cores | server CPU s | WAL MB | load avg |"
    )
    print("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {r['records']} | {int(r['bytes']) / 1e6:.0f} | {r['kind']} | {r['seconds']:.2f} | "
            f"{int(r['records']) / float(r['seconds']):.0f} | {int(r['bytes']) / float(r['seconds']) / 1e6:.2f} | "
            f"{int(r['peak']) / 1e6:.0f} | {int(r['driver']) / 1e6:.0f} | {float(r['cpu']):.1f} | "
            f"{float(r['cpu']) / float(r['seconds']) / CORES:.0%} | "
            f"{float(r['server']):.1f} | {int(r['wal']) / 1e6:.0f} | "
            f"{float(r['load']):.1f} |"
        )
    print_steps(results)
    print()
    for records in args.records:
        by_kind = {r["kind"]: float(r["seconds"]) for r in results if r["records"] == records}
        line = [f"{records} records:"]
        for ours in [k for k in by_kind if k.startswith("loadstone")]:
            if ours in by_kind and "dlt" in by_kind:
                line.append(
                    f"dlt/{ours} = {by_kind['dlt'] / by_kind[ours]:.2f}x (>1: {ours} faster)"
                )
            if ours in by_kind and "duckdb" in by_kind:
                line.append(
                    f"duckdb/{ours} = {by_kind['duckdb'] / by_kind[ours]:.2f}x (>1: {ours} faster)"
                )
            if ours in by_kind and "spark_floor" in by_kind:
                line.append(f"{ours}/spark_floor = {by_kind[ours] / by_kind['spark_floor']:.2f}x")
        print("  ".join(line))
    if args.chart:
        write_figures(Path(args.chart), results)
    return 0


#: the names the chart gives the benchmark's tools
CHART_NAMES = {
    "loadstone": "loadstone",
    "dlt": "dlt 1.31",
    "duckdb": "DuckDB read_json_auto",
    "spark_floor": "Spark floor",
}


def _runs(kinds: list[str], cores: list[str] | None) -> list[tuple[str, str | None]]:
    """(tool, engine core) of each run: loadstone once per core asked for."""
    runs: list[tuple[str, str | None]] = []
    for kind in kinds:
        if kind == "loadstone" and cores:
            runs.extend((kind, core) for core in cores)
        else:
            runs.append((kind, None))
    return runs


def _workers_cpu(normalize: dict[str, Any] | None) -> float:
    """The chunks' CPU seconds where they ran (the trace's), 0 without a trace."""
    if not normalize:
        return 0.0
    return sum(float(c.get("cpu_seconds") or 0) for c in normalize.get("chunks") or [])


def write_figures(path: Path, results: list[dict[str, Any]]) -> None:
    """The run's figures as ``docs/gen/bench_chart.py`` reads them, and the chart they make."""
    sys.path.insert(0, str(HERE.parents[1] / "docs" / "gen"))
    import bench_chart

    sizes = list(dict.fromkeys(int(r["records"]) for r in results))
    groups, steps = [], []
    for records in sizes:
        runs = [r for r in results if r["records"] == records]
        count = f"{records // 10**6}M" if records % 10**6 == 0 else f"{records // 1000:,}k"
        label = f"{count} events ({int(runs[0]['bytes']) / 1e6:,.0f} MB)"
        values = {CHART_NAMES[r["kind"]]: round(float(r["seconds"]), 2) for r in runs}
        groups.append({"label": label, "values": values})
        for r in runs:
            if r["kind"] == "loadstone" and r.get("steps"):
                walls = {step: round(wall, 2) for step, (wall, _cpu) in r["steps"].items()}
                steps.append({"label": label, "values": walls})
    figures = {
        "title": "GitHub events into DuckDB, end to end, 2 cores (seconds, lower is better)",
        "source": f"bench/benchmark.py {' '.join(sys.argv[1:])}, {time.strftime('%Y-%m-%d')}, "
        "each tool in a cold process; DuckDB is its own read_json_auto into one table",
        "unit": "s",
        "groups": groups,
        "steps": steps,
    }
    path.write_text(json.dumps(figures, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    chart = path.with_name("benchmark.svg")
    bench_chart.write_chart(path, chart)
    print(f"figures: {path}, chart: {chart}")


if __name__ == "__main__":
    sys.exit(main())
