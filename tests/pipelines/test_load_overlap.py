"""Load overlapped with normalize (issue 37, ``load.overlap_normalize``): DuckDB appends a
package's finished files in the package's one transaction while later chunks are normalized.

The outcome must be a load after normalize's, whatever happens: the same tables (columns a
later chunk adds, variants, nested tables that appear late), a normalize failure that
leaves nothing in the database and the package where it was, and a process killed at any
moment of the overlap (alone, or with its whole process group) finished by the same command
with every row once. Kills come at progress events, as in the kill matrix: the load's
thread reports each batch it appended (``files_appended``); every file a normalizer reports
is appended by that thread, so these moments happen in every run, wherever the step is.
The killed programs are forked from one preloaded parent (``preloaded_children.py``) that
imported what a run imports: each is a process of its own, without paying the imports again.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pytest
from env_support import environment
from preloaded_children import PIPELINE_RUN, Preloaded, preloaded

import loadstone
from loadstone.destinations.overlap import FinishedFiles
from loadstone.exceptions import PipelineStepFailed
from loadstone.load.overlap import OverlapFeed
from loadstone.plugins.destinations.duckdb.client import DuckDBClient
from loadstone.plugins.destinations.duckdb.overlap import DuckDBOverlappedLoad

ROWS = 3_000
#: small chunks on two workers: many chunks, reported one by one while later ones run
POOL = {"NORMALIZE__ENGINE": "local", "NORMALIZE__WORKERS": "2", "NORMALIZE__CHUNK_BYTES": "16384"}


def write_input(path: Path, bad_last_line: bool = False) -> None:
    """Events whose later chunks change the schema: a new column from row 1,501, a text
    value in the bigint column ``n`` at row 2,001 (a variant), a nested table from 2,501."""
    with open(path, "w") as handle:
        for i in range(ROWS):
            event: dict[str, object] = {"id": i, "n": i, "tags": [i, i + 1], "who": {"k": str(i)}}
            if i > 1500:
                event["late"] = i * 2
            if i == 2001:
                event["n"] = f"text {i}"
            if i > 2500:
                event["deep"] = [{"x": i}]
            handle.write(json.dumps(event) + "\n")
        if bad_last_line:
            handle.write('{"id": "not closed"\n')


def run(
    name: str, overlap: bool, events: list[tuple[str, str]] | None = None, **hints: Any
) -> object:
    pipe = loadstone.pipeline(
        name,
        destination=loadstone.destinations.duckdb(f"{name}.duckdb"),
        pipelines_dir="pipelines",
        progress=(lambda ev: events.append((ev.step, ev.event))) if events is not None else None,
    )
    with environment({**POOL, "LOAD__OVERLAP_NORMALIZE": str(overlap).lower()}):
        pipe.run(Path("events.jsonl").absolute(), table_name="events", **hints)
    return pipe


def tables(name: str) -> dict[str, tuple[list[tuple[str, str, str]], list[tuple[object, ...]]]]:
    """Every data table: its columns (name, type, nullable) and its rows without the random
    keys, sorted."""
    found = {}
    with duckdb.connect(f"{name}.duckdb", read_only=True) as conn:
        names = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = ? "
            "AND table_name NOT LIKE '\\_dlt%' ESCAPE '\\'",
            [f"{name}_dataset"],
        ).fetchall()
        for (table,) in names:
            columns = [
                (str(r[0]), str(r[1]), str(r[2]))
                for r in conn.execute(f"DESCRIBE {name}_dataset.{table}").fetchall()
            ]
            kept = [c for c, _, _ in columns if c not in ("_dlt_id", "_dlt_parent_id")]
            selected = ", ".join(f'"{c}"' for c in kept if c != "_dlt_load_id")
            rows = conn.execute(f"SELECT {selected} FROM {name}_dataset.{table}").fetchall()
            found[table] = (columns, sorted(rows, key=repr))
    return found


def test_finished_files_are_appended_by_the_load_before_it_commits() -> None:
    write_input(Path("events.jsonl"))
    events: list[tuple[str, str]] = []
    run("on", True, events)
    appended = events.index(("load", "files_appended"))
    assert appended < events.index(("load", "package_committed"))


def test_the_setting_off_loads_after_normalize() -> None:
    write_input(Path("events.jsonl"))
    events: list[tuple[str, str]] = []
    run("off", False, events)
    assert ("load", "files_appended") not in events


def test_overlap_gives_the_tables_a_load_after_normalize_gives() -> None:
    write_input(Path("events.jsonl"))
    run("on", True)
    run("off", False)
    on, off = tables("on"), tables("off")
    assert on == off
    assert {"events", "events__tags", "events__deep"} <= set(on)
    assert "n__v_text" in [c for c, _, _ in on["events"][0]]
    assert "late" in [c for c, _, _ in on["events"][0]]


def test_a_column_a_later_chunk_adds_is_added_in_the_transaction_before_its_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write_input(Path("events.jsonl"))
    statements: list[str] = []
    original = DuckDBClient._exec

    def recording(self: DuckDBClient, sql: str, params: Sequence[object] | None = None) -> None:
        statements.append(sql)
        original(self, sql, params)

    def in_step(self: OverlapFeed, files: FinishedFiles) -> None:
        self._load.append([files])  # a load that keeps up: each chunk appended alone

    monkeypatch.setattr(DuckDBClient, "_exec", recording)
    monkeypatch.setattr(OverlapFeed, "sink", in_step)
    run("on", True)
    added = next(i for i, s in enumerate(statements) if 'ADD COLUMN "late"' in s)
    events = '"on"."on_dataset"."events"'
    created = next(s for s in statements if s.startswith(f"CREATE TABLE {events}"))
    inserts = [i for i, s in enumerate(statements) if s.startswith(f"INSERT INTO {events}")]
    assert '"late"' not in created
    assert any(i < added for i in inserts) and any(i > added for i in inserts)
    assert statements.count("BEGIN TRANSACTION") == 1
    assert statements.index("BEGIN TRANSACTION") < added < statements.index("COMMIT")


def test_tables_made_early_that_differ_roll_back_and_load_the_ordinary_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write_input(Path("events.jsonl"))
    monkeypatch.setattr(DuckDBOverlappedLoad, "_as_ordinary", lambda self, model: False)
    events: list[tuple[str, str]] = []
    run("on", True, events)
    run("off", False)
    assert ("load", "files_appended") in events
    assert tables("on") == tables("off")


def test_a_failed_append_rolls_back_and_loads_the_ordinary_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write_input(Path("events.jsonl"))
    original = DuckDBOverlappedLoad.append

    def failing(
        self: DuckDBOverlappedLoad, batch: Sequence[FinishedFiles], last: bool = False
    ) -> None:
        original(self, batch, last)
        raise duckdb.OutOfMemoryException("no memory for the second batch")

    monkeypatch.setattr(DuckDBOverlappedLoad, "append", failing)
    run("on", True)
    run("off", False)
    assert tables("on") == tables("off")


def test_merge_tables_wait_for_the_whole_package() -> None:
    write_input(Path("events.jsonl"))
    for _ in range(2):
        run("merge", True, write_disposition="merge", primary_key="id")
    with duckdb.connect("merge.duckdb", read_only=True) as conn:
        assert conn.execute(
            "SELECT count(*), count(DISTINCT id), "
            "(SELECT count(*) FROM merge_dataset.events__tags) FROM merge_dataset.events"
        ).fetchone() == (ROWS, ROWS, 2 * ROWS)


@pytest.mark.parametrize("overlap", [True, False])
def test_a_normalize_failure_leaves_the_database_and_the_package_as_without_overlap(
    overlap: bool,
) -> None:
    write_input(Path("events.jsonl"), bad_last_line=True)
    events: list[tuple[str, str]] = []
    with pytest.raises(PipelineStepFailed) as failed:
        run("failing", overlap, events)
    assert failed.value.step == "normalize"
    assert (("load", "files_appended") in events) is overlap
    # the database file is made only by a load that began (a first run's check of the
    # destination for state does not create it)
    assert Path("failing.duckdb").exists() is overlap
    if overlap:
        with duckdb.connect("failing.duckdb", read_only=True) as conn:
            assert conn.execute(
                "SELECT count(*) FROM information_schema.schemata "
                "WHERE schema_name = 'failing_dataset'"
            ).fetchone() == (0,)
    pipe = loadstone.attach("failing", pipelines_dir="pipelines")
    assert len(pipe.failed_packages()) == 1  # set aside, as a bad line always is
    assert pipe.list_pending_packages() == []


# -- kills ----------------------------------------------------------------------------------

KILLING_RUN = """
import os, signal, sys
from loadstone.cli import main, run_command

step, event, nth, whom = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
show = run_command.ProgressDisplay.__call__
seen = [0]

def killing(self, ev):
    if ev.step == step and ev.event == event:
        seen[0] += 1
        if seen[0] == nth:
            if whom == "group":
                os.killpg(0, signal.SIGKILL)
            os.kill(os.getpid(), signal.SIGKILL)
    return show(self, ev)

run_command.ProgressDisplay.__call__ = killing
sys.exit(main(sys.argv[5:]))
"""

COMMAND = ["run", "events.jsonl", "--table", "events", "--pipeline", "kills"]

#: moments of the overlap: the first batch appended (the thread appends every reported
#: chunk, so it comes in every run; how many batches there are depends on timing), a later
#: chunk normalized (appends beside it), normalize finished with the transaction still
#: open, and the commit
MOMENTS = {
    "first_append": ("load", "files_appended", 1),
    "later_chunk": ("normalize", "progress", 12),
    "normalized": ("normalize", "finished", 1),
    "committed": ("load", "package_committed", 1),
}


@pytest.fixture(scope="module")
def parent() -> Iterator[Preloaded]:
    yield from preloaded(*PIPELINE_RUN)


def run_killed(parent: Preloaded, moment: str, whom: str) -> None:
    """The command killed at ``moment``: its own pid alone, or its whole process group."""
    step, event, nth = MOMENTS[moment]
    Path("kill_run.py").write_text(KILLING_RUN)
    killed = parent.run(
        script="kill_run.py",
        args=[step, event, str(nth), whom, *COMMAND],
        env={**os.environ, **POOL},
        output="killed.log",
        timeout=300,
        new_session=True,  # its own process group: killpg takes no one else
    )
    assert killed.returncode == -signal.SIGKILL, Path("killed.log").read_text()[-2000:]


def counts() -> tuple[int, int, int, int]:
    """Rows of the root, distinct ids, nested rows, loads (zeros while nothing committed)."""
    with duckdb.connect("kills.duckdb", read_only=True) as conn:
        present = conn.execute(
            "SELECT count(*) FROM information_schema.tables "
            "WHERE table_schema = 'kills_dataset' AND table_name = '_dlt_loads'"
        ).fetchone()
        if present == (0,):
            return (0, 0, 0, 0)
        return conn.execute(
            "SELECT count(*), count(DISTINCT id), "
            "(SELECT count(*) FROM kills_dataset.events__tags), "
            "(SELECT count(*) FROM kills_dataset._dlt_loads) FROM kills_dataset.events"
        ).fetchone()


def rerun() -> int:
    from loadstone.cli import main

    with environment(POOL):
        return main([*COMMAND, "--quiet", "--lock-timeout", "0"])


@pytest.mark.parametrize("whom", ["alone", "group"])
@pytest.mark.parametrize("moment", list(MOMENTS))
def test_a_run_killed_during_the_overlap_is_finished_by_the_same_command(
    parent: Preloaded, moment: str, whom: str
) -> None:
    write_input(Path("events.jsonl"))
    run_killed(parent, moment, whom)
    if moment != "committed":
        assert counts() == (0, 0, 0, 0)  # nothing of the open transaction is visible
    assert rerun() == 0
    assert counts() == (ROWS, ROWS, 2 * ROWS, 1)
    assert rerun() == 0
    assert counts() == (ROWS, ROWS, 2 * ROWS, 1)


INCREMENTAL = """
import os, signal, sys
import loadstone as dlt

kill_at = int(sys.argv[1])
seen = [0]

def progress(ev):
    if ev.step == "load" and ev.event == "files_appended":
        seen[0] += 1
        if seen[0] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

@dlt.resource(table_name="events")
def events(cursor=dlt.sources.incremental("id")):
    for i in range(3000):
        if cursor.last_value is None or i > cursor.last_value:
            yield {"id": i, "tags": [i, i + 1], "who": {"k": str(i) * 5}}

pipe = dlt.pipeline("incr", destination=dlt.destinations.duckdb("incr.duckdb"),
                    pipelines_dir="pipelines", progress=progress)
pipe.run(events())
"""


def test_a_run_killed_during_the_overlap_keeps_its_cursor_with_the_rows_it_did_not_load(
    parent: Preloaded,
) -> None:
    Path("incr.py").write_text(INCREMENTAL)
    env = {**os.environ, **POOL, "NORMALIZE__CHUNK_BYTES": "8192"}
    killed = parent.run(script="incr.py", args=["1"], env=env)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    for _ in range(2):  # the pending package first (the run stops there), then nothing new
        done = parent.run(script="incr.py", args=["0"], env=env)
        assert done.returncode == 0, done.stderr[-2000:]
    with duckdb.connect("incr.duckdb", read_only=True) as conn:
        assert conn.execute(
            "SELECT count(*), count(DISTINCT id) FROM incr_dataset.events"
        ).fetchone() == (ROWS, ROWS)  # the third run found the cursor at the last row
