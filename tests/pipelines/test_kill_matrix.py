"""``kill -9`` of the ``loadstone run`` process alone, at moments spread over a run, then the
same command again: the rerun finishes at once and every row is loaded exactly once.

Only the command's own pid is killed, as the OOM killer or ``kill -9 PID`` does: its
normalize worker processes are left to fend for themselves. They must die with it (else
they kept the pipeline's lock and the rerun waited for a dead process), and the rerun runs
with ``--lock-timeout 0``, so a lock still held by anyone fails it at once instead of
hanging. A kill after the commit (before or after the package is marked loaded) must not
load the input a second time: the rerun says the input was loaded, and loads nothing.

The command is killed through the public progress events (as in test_crash_recovery.py):
its progress display is wrapped to send SIGKILL to its own process at the n-th event of a
step, after writing the pids of its child processes (the pool workers) to a file. The commands
killed are forked from one preloaded parent (``preloaded_children.py``) that imported what a
run imports: each is a process of its own, killed alone, without paying the imports again.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from env_support import environment
from preloaded_children import PIPELINE_RUN, Preloaded, preloaded

ROWS = 3_000

KILLING_CLI = """
import os, signal, sys
from pathlib import Path
from loadstone.cli import main, run_command

step, event, nth = sys.argv[1], sys.argv[2], int(sys.argv[3])
show = run_command.ProgressDisplay.__call__
seen = [0]

def children():
    found = []
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        try:  # a thread (deltalake's, say) may end between the listing and the read
            found += (task / "children").read_text().split()
        except FileNotFoundError:
            pass
    return found

def killing(self, ev):
    if ev.step == step and ev.event == event:
        seen[0] += 1
        if seen[0] == nth:
            Path("children.txt").write_text(" ".join(children()))
            os.kill(os.getpid(), signal.SIGKILL)
    return show(self, ev)

run_command.ProgressDisplay.__call__ = killing
sys.exit(main(sys.argv[4:]))
"""

#: small chunks and two workers: normalize runs on the local pool, several chunks each
POOL = {"NORMALIZE__ENGINE": "local", "NORMALIZE__WORKERS": "2", "NORMALIZE__CHUNK_BYTES": "16384"}

#: moment -> (step, event, n-th such event): spread from extract to the end of the load
MOMENTS = {
    "extract": ("extract", "progress", 1),
    "normalize_started": ("normalize", "started", 1),
    "normalize_first_chunk": ("normalize", "progress", 1),
    "normalize_later_chunk": ("normalize", "progress", 4),
    "normalized": ("normalize", "finished", 1),
    "load_started": ("load", "package_started", 1),
    "load_committed": ("load", "package_committed", 1),
    "marked_loaded": ("load", "package_done", 1),
}
#: the moments the destinations with a slower load are killed at
LOAD_MOMENTS = ("normalize_first_chunk", "load_started", "load_committed", "marked_loaded")


@pytest.fixture(scope="module")
def parent() -> Iterator[Preloaded]:
    yield from preloaded(*PIPELINE_RUN, "pyspark")


def write_input() -> None:
    with open("events.jsonl", "w") as handle:
        for i in range(ROWS):
            event = {"id": i, "kind": f"k{i % 7}", "tags": [i, i + 1], "who": {"n": str(i)}}
            handle.write(json.dumps(event) + "\n")


def command(*extra: str) -> list[str]:
    return ["run", "events.jsonl", "--table", "events", "--pipeline", "kills", *extra]


def run_killed(parent: Preloaded, moment: str, env: dict[str, str], *extra: str) -> list[int]:
    """The command, killed at ``moment``; then its workers must be gone. Returns their pids.

    Its output goes to a file, not a pipe: a worker that outlived it would hold the pipe
    open, and reading it would wait for that worker instead of failing the test.
    """
    step, event, nth = MOMENTS[moment]
    Path("kill_cli.py").write_text(KILLING_CLI)
    killed = parent.run(
        script="kill_cli.py",
        args=[step, event, str(nth), *command(*extra)],
        env={**os.environ, "PYTHONPATH": os.getcwd(), **POOL, **env},
        output="killed.log",
        timeout=300,
    )
    assert killed.returncode == -signal.SIGKILL, Path("killed.log").read_text()[-2000:]
    children = [int(pid) for pid in Path("children.txt").read_text().split()]
    for pid in children:
        assert_exits(pid)
    return children


def assert_exits(pid: int) -> None:
    """A process left behind by the killed command exits by itself (waited for generously:
    the guards act at once; a machine under load may be slow to schedule the exit)."""
    for _ in range(600):
        if not _alive(pid):
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)  # not to leave it running after the test
    raise AssertionError(f"process {pid} outlived the killed command")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited; only its parent's reaping is left


def rerun(env: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    """The same command again, in this process; ``--lock-timeout 0``: a held lock fails it."""
    from loadstone.cli import main

    out, err = io.StringIO(), io.StringIO()
    with environment({**POOL, **env}), contextlib.redirect_stdout(out):
        with contextlib.redirect_stderr(err):
            code = main([*command(*extra), "--quiet", "--lock-timeout", "0"])
    return subprocess.CompletedProcess([], code, out.getvalue(), err.getvalue())


def duckdb_counts() -> tuple[int, int, int, int]:
    with duckdb.connect("kills.duckdb", read_only=True) as conn:
        return conn.execute(
            "SELECT count(*), count(DISTINCT id), "
            "(SELECT count(*) FROM kills_dataset.events__tags), "
            "(SELECT count(*) FROM kills_dataset._dlt_loads) FROM kills_dataset.events"
        ).fetchone()


def finish_and_check(env: dict[str, str], counts: object, *extra: str) -> None:
    """Rerun: it succeeds, every row once; a third run loads nothing and says why."""
    again = rerun(env, *extra)
    assert again.returncode == 0, again.stderr[-2000:]
    assert counts() == (ROWS, ROWS, 2 * ROWS, 1)  # type: ignore[operator]
    third = rerun(env, *extra)
    assert third.returncode == 0, third.stderr[-2000:]
    assert "already loaded unchanged: not loaded again" in third.stderr
    assert counts() == (ROWS, ROWS, 2 * ROWS, 1)  # type: ignore[operator]


@pytest.mark.parametrize("moment", list(MOMENTS))
def test_duckdb_run_killed_alone_is_finished_by_the_same_command(
    parent: Preloaded, moment: str
) -> None:
    write_input()
    children = run_killed(parent, moment, {})
    if moment.startswith("normalize_") and moment != "normalize_started":
        assert len(children) == 2  # the pool's workers were running, and exited
    finish_and_check({}, duckdb_counts)


def test_a_run_killed_after_its_commit_loads_nothing_again_and_says_so(parent: Preloaded) -> None:
    write_input()
    run_killed(parent, "marked_loaded", {})
    again = rerun({})
    assert again.returncode == 0, again.stderr[-2000:]
    assert again.stderr.count("\n") == 1
    assert "events.jsonl (package " in again.stderr and "--reload" in again.stderr
    assert duckdb_counts() == (ROWS, ROWS, 2 * ROWS, 1)


def test_reload_loads_an_input_loaded_before_again() -> None:
    write_input()
    assert rerun({}).returncode == 0
    again = rerun({}, "--reload")
    assert again.returncode == 0, again.stderr[-2000:]
    assert duckdb_counts() == (2 * ROWS, ROWS, 4 * ROWS, 2)


def test_a_replace_run_loads_an_input_loaded_before_again() -> None:
    write_input()
    assert rerun({}).returncode == 0
    again = rerun({}, "--write-disposition", "replace")
    assert again.returncode == 0, again.stderr[-2000:]
    assert "already loaded" not in again.stderr
    assert duckdb_counts() == (ROWS, ROWS, 2 * ROWS, 2)


def test_a_changed_input_is_loaded_again() -> None:
    write_input()
    assert rerun({}).returncode == 0
    with open("events.jsonl", "a") as handle:
        handle.write(json.dumps({"id": ROWS, "tags": []}) + "\n")
    assert rerun({}).returncode == 0
    assert duckdb_counts()[0] == 2 * ROWS + 1


@pytest.mark.spark
def test_a_run_killed_alone_while_spark_normalizes_is_finished_by_the_same_command(
    parent: Preloaded,
) -> None:
    # the killed run's Spark driver JVM is one of its children: it must exit too
    write_input()
    spark = {"NORMALIZE__ENGINE": "spark", "SPARK__MASTER": "local[1]"}
    assert run_killed(parent, "normalize_first_chunk", spark)  # the JVM, which exited
    finish_and_check({}, duckdb_counts)  # the rerun normalizes on the local pool


@pytest.mark.parametrize("moment", LOAD_MOMENTS)
def test_delta_run_killed_alone_is_finished_by_the_same_command(
    parent: Preloaded, moment: str
) -> None:
    from deltalake import DeltaTable

    bucket = Path("bucket").absolute()
    env = {
        "DESTINATION__FILESYSTEM__BUCKET_URL": bucket.as_uri(),
        "DESTINATION__FILESYSTEM__TABLE_FORMAT": "delta",
    }

    def counts() -> tuple[int, int, int, int]:
        events = DeltaTable(str(bucket / "kills_dataset" / "events")).to_pyarrow_table()
        tags = DeltaTable(str(bucket / "kills_dataset" / "events__tags")).to_pyarrow_table()
        loads = list((bucket / "kills_dataset" / "_dlt_loads").iterdir())
        return events.num_rows, len(set(events.column("id").to_pylist())), tags.num_rows, len(loads)

    write_input()
    run_killed(parent, moment, env, "--destination", "filesystem")
    finish_and_check(env, counts, "--destination", "filesystem")


@pytest.fixture
def postgres_dataset(postgres_url: str) -> Iterator[str]:
    from postgres_support import drop_datasets, unique_dataset

    name = unique_dataset("kills")
    yield name
    drop_datasets(postgres_url, name)


@pytest.mark.parametrize("moment", LOAD_MOMENTS)
def test_postgres_run_killed_alone_is_finished_by_the_same_command(
    parent: Preloaded, moment: str, postgres_url: str, postgres_dataset: str
) -> None:
    from postgres_support import rows

    env = {"DESTINATION__POSTGRES__CREDENTIALS": postgres_url}
    extra = ("--destination", "postgres", "--dataset", postgres_dataset)

    def counts() -> tuple[int, int, int, int]:
        table = f'"{postgres_dataset}".events'
        return rows(
            postgres_url,
            f"SELECT count(*), count(DISTINCT id), "
            f'(SELECT count(*) FROM "{postgres_dataset}".events__tags), '
            f'(SELECT count(*) FROM "{postgres_dataset}"._dlt_loads) FROM {table}',
        )[0]

    write_input()
    run_killed(parent, moment, env, *extra)
    finish_and_check(env, counts, *extra)
