"""A run killed with SIGKILL at any step is finished by the next one: every row exactly once.

The crash matrix: a ``loadstone run`` command is killed at each step (during extract,
normalize in the driver, normalize on Spark, load before the destination's COMMIT, load after
it), then finished either (a) by the same command again or (b) by ``pipeline.run()``. Either
way each row is loaded once and the package is loaded once (one ``_dlt_loads`` row).

The killed command runs in a subprocess that is killed at a known point through the public
progress events (the commands that finish the work run in-process, through ``main``): the CLI's own progress display is wrapped so that it sends SIGKILL to its process
when the step reaches the point; no test-only branch exists in the product. The killed
commands are forked from one preloaded parent (``preloaded_children.py``) that imported what
a run imports: each is a process of its own, without paying the imports again.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from preloaded_children import PIPELINE_RUN, Preloaded, preloaded

pytestmark = pytest.mark.spark

ROWS = 300

KILLING_CLI = """
import os, signal, sys
from loadstone.cli import main, run_command

step, event = sys.argv[1], sys.argv[2]
show = run_command.ProgressDisplay.__call__

def killing(self, ev):
    spark_task_done = ev.step != "normalize" or ev.event != "progress" or ev.parts_done >= 1
    if ev.step == step and ev.event == event and spark_task_done:
        os.kill(os.getpid(), signal.SIGKILL)
    return show(self, ev)

run_command.ProgressDisplay.__call__ = killing
sys.exit(main(sys.argv[3:]))
"""

SPARK_NORMALIZER = """
from loadstone.hookspecs import hookimpl
from loadstone.plugins.normalizers.relational import RelationalNormalizer


@hookimpl
def loadstone_normalizer():
    # small chunks, so that the package is normalized by several Spark tasks
    return RelationalNormalizer(chunk_bytes=2048)
"""

KILLING_NORMALIZER = """
import os, signal
from loadstone.hookspecs import hookimpl
from loadstone.plugin_manager import get_normalizer


class KillAfterWriting:
    def normalize(self, package, schema, context):
        get_normalizer("relational").normalize(package, schema, context)
        os.kill(os.getpid(), signal.SIGKILL)


@hookimpl
def loadstone_normalizer():
    return KillAfterWriting()
"""

COMMAND = ["run", "items.jsonl", "--table", "items", "--pipeline", "crashy", "--dataset", "crash"]

#: kill point -> (step, event, extra environment, package state left behind)
KILL_POINTS = {
    "extract": ("extract", "progress", {}, "extracting"),
    "normalize_driver": ("normalize", "package_started", {}, "extracted"),
    "normalize_spark": (
        "normalize",
        "progress",
        {
            "NORMALIZE__NORMALIZER": "crash_plugins.spark_normalizer",
            "NORMALIZE__SPARK_MIN_BYTES": "0",
        },
        "extracted",
    ),
    "load_before_commit": ("load", "package_started", {}, "normalized"),
    "load_after_commit": ("load", "package_committed", {}, "normalized"),
}


@pytest.fixture(scope="module")
def parent() -> Iterator[Preloaded]:
    yield from preloaded(*PIPELINE_RUN, "pyspark", "pyspark.sql")


def write_input() -> None:
    with open("items.jsonl", "w") as handle:
        for i in range(ROWS):
            handle.write(json.dumps({"id": i, "tags": [i, i + 1]}) + "\n")


def plugins_folder() -> None:
    Path("crash_plugins").mkdir(exist_ok=True)
    Path("crash_plugins/__init__.py").write_text("")
    Path("crash_plugins/spark_normalizer.py").write_text(SPARK_NORMALIZER)
    Path("crash_plugins/killing_normalizer.py").write_text(KILLING_NORMALIZER)


def environment(extra: dict[str, str]) -> dict[str, str]:
    return dict(os.environ, SPARK__MASTER="local[1]", PYTHONPATH=os.getcwd(), **extra)


def run_killed(
    parent: Preloaded, step: str, event: str, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    Path("kill_cli.py").write_text(KILLING_CLI)
    return parent.run(
        script="kill_cli.py", args=[step, event, *COMMAND], env=environment(env), timeout=300
    )


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The command that finishes the work, run in this process through the CLI's ``main``:
    only the killed run needs a process of its own (finishing is not about processes)."""
    from loadstone.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        returncode = main(list(args))
    return subprocess.CompletedProcess(list(args), returncode, out.getvalue(), err.getvalue())


def package_states() -> list[str]:
    root = Path(os.environ["LOADSTONE_HOME"]) / "pipelines" / "crashy" / "packages"
    return [json.loads((p / "package.json").read_text())["state"] for p in sorted(root.iterdir())]


def loaded_counts() -> tuple[int, int, int, int]:
    with duckdb.connect("crashy.duckdb", read_only=True) as conn:
        (items, distinct) = conn.execute(
            "SELECT count(*), count(DISTINCT id) FROM crash.items"
        ).fetchone()
        (tags,) = conn.execute("SELECT count(*) FROM crash.items__tags").fetchone()
        (loads,) = conn.execute("SELECT count(*) FROM crash._dlt_loads").fetchone()
    return items, distinct, tags, loads


def finish_with_api() -> None:
    import loadstone as dlt

    pipe = dlt.pipeline("crashy", destination="duckdb", dataset_name="crash")
    pipe.run()
    assert pipe.list_pending_packages() == []


@pytest.mark.parametrize("point", list(KILL_POINTS))
@pytest.mark.parametrize("resume", ["same_command", "pipeline_run"])
def test_a_killed_run_is_finished_with_every_row_exactly_once(
    parent: Preloaded, point: str, resume: str
) -> None:
    step, event, env, left = KILL_POINTS[point]
    write_input()
    plugins_folder()
    killed = run_killed(parent, step, event, env)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert package_states() == [left]
    if left == "extracting":  # a first run killed in extract has no state yet: info finds it
        assert run_cli("pipeline", "crashy", "info").returncode == 0
    if resume == "same_command":
        again = run_cli(*COMMAND, "--quiet")
        assert again.returncode == 0, again.stderr[-2000:]
        if left != "extracting":
            assert "instead of extracting it again" in again.stderr
    else:
        finish_with_api()
        if left == "extracting":  # nothing was extracted: the input was never in a package
            run_cli(*COMMAND, "--quiet")
    assert loaded_counts() == (ROWS, ROWS, 2 * ROWS, 1)
    assert package_states() == ["loaded"]


def test_the_load_command_finishes_a_pending_package_and_extracts_nothing(
    parent: Preloaded,
) -> None:
    write_input()
    killed = run_killed(parent, "load", "package_started", {})
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    info = run_cli("pipeline", "crashy", "info")
    assert "normalized" in info.stdout and "pipeline crashy load" in info.stdout
    loaded = run_cli("pipeline", "crashy", "load")
    assert loaded.returncode == 0, loaded.stderr[-2000:]
    assert loaded_counts() == (ROWS, ROWS, 2 * ROWS, 1)


def test_info_shows_a_package_committed_before_the_crash_as_loaded(parent: Preloaded) -> None:
    write_input()
    killed = run_killed(parent, "load", "package_committed", {})
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    info = run_cli("pipeline", "crashy", "info")
    assert "loaded packages: 1" in info.stdout
    assert "pending packages: 0" in info.stdout
    again = run_cli(*COMMAND, "--quiet")  # info changed nothing: the same command is still safe
    assert again.returncode == 0, again.stderr[-2000:]
    assert loaded_counts() == (ROWS, ROWS, 2 * ROWS, 1)


def test_kill_after_the_normalizer_wrote_its_files_is_finished_by_the_next_run(
    parent: Preloaded,
) -> None:
    # the normalizer is chosen by config; this one (named by module path) dies after writing
    write_input()
    plugins_folder()
    killed = run_killed(
        parent, "none", "none", {"NORMALIZE__NORMALIZER": "crash_plugins.killing_normalizer"}
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert package_states() == ["extracted"]
    root = Path(os.environ["LOADSTONE_HOME"]) / "pipelines" / "crashy" / "packages"
    assert any(root.glob("*/normalized/**/*.parquet"))
    finish_with_api()
    assert loaded_counts() == (ROWS, ROWS, 2 * ROWS, 1)
