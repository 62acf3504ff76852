"""``kill -9`` while COPY streams a package into PostgreSQL; the next run loads it exactly once.

The pipeline runs in a subprocess whose connection carries an ``application_name``; the test
watches ``pg_stat_activity`` and sends SIGKILL the moment that connection runs a COPY. The
server then aborts the open transaction (nothing of the package is visible), and the next
run in this process finishes the pending package.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from postgres_support import connection, drop_datasets, pipeline, rows, unique_dataset

EVENTS = 3_000
SCRIPT = """
import sys
import loadstone
url, dataset, pipelines_dir, path = sys.argv[1:5]
pipe = loadstone.pipeline(
    pipeline_name="crashy",
    destination=loadstone.destinations.postgres(credentials=url),
    dataset_name=dataset,
    pipelines_dir=pipelines_dir,
)
pipe.run(path, table_name="events")
print("run finished without being killed")
"""


@pytest.fixture
def dataset(postgres_url: str) -> Iterator[str]:
    name = unique_dataset("crash")
    yield name
    drop_datasets(postgres_url, name)


def _events(cases_dir: Path, path: Path) -> None:
    events = json.loads((cases_dir / "github_events.json").read_text(encoding="utf-8"))
    with path.open("w", encoding="utf-8") as handle:
        for i in range(EVENTS):
            handle.write(json.dumps({**events[i % len(events)], "id": str(i)}) + "\n")


def _kill_during_copy(process: subprocess.Popen[str], url: str, app: str) -> bool:
    """SIGKILL ``process`` as soon as its connection runs a COPY; False if it never did.

    Watched every 2 ms once the process has connected; before that (Python's start-up, the
    imports, extract and normalize: seconds) every 50 ms, which costs the watch and the
    server a fraction of the CPU and cannot miss a COPY, as none comes before the connection.
    """
    active = f"SELECT count(*) FROM pg_stat_activity WHERE application_name = '{app}'"
    copying = f"{active} AND state = 'active' AND query LIKE 'COPY %'"
    with connection(url) as conn:
        while process.poll() is None and not conn.execute(active).fetchone()[0]:
            time.sleep(0.05)
        while process.poll() is None:
            if conn.execute(copying).fetchone()[0]:
                os.kill(process.pid, signal.SIGKILL)
                process.wait()
                return True
            time.sleep(0.002)
    return False


def _loaded_rows(url: str, dataset: str) -> int:
    """Rows in the dataset's ``events`` and ``_dlt_loads`` tables (0 when they are absent)."""
    found = rows(
        url,
        "SELECT tablename FROM pg_tables "
        f"WHERE schemaname = '{dataset}' AND tablename IN ('events', '_dlt_loads')",
    )
    return sum(rows(url, f'SELECT count(*) FROM "{dataset}"."{t}"')[0][0] for (t,) in found)


def test_kill_during_copy_then_rerun_loads_every_row_exactly_once(
    postgres_url: str, dataset: str, tmp_path: Path, cases_dir: Path
) -> None:
    data = tmp_path / "events.jsonl"
    _events(cases_dir, data)
    app = f"loadstone_{dataset}"
    killed_url = f"{postgres_url}?application_name={app}"
    script = tmp_path / "load.py"
    script.write_text(SCRIPT)
    process = subprocess.Popen(
        [sys.executable, str(script), killed_url, dataset, str(tmp_path / "p"), str(data)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert _kill_during_copy(process, postgres_url, app), process.communicate()[1][-2000:]
    assert process.returncode == -signal.SIGKILL
    # the aborted transaction left no row (the tables, migrated before the load, may exist)
    assert _loaded_rows(postgres_url, dataset) == 0

    pipe = pipeline(postgres_url, dataset, tmp_path, name="crashy", pipelines_dir=tmp_path / "p")
    pipe.run()
    pipe.run()  # nothing pending any more: a second run adds nothing
    assert rows(postgres_url, f'SELECT count(*), count(DISTINCT id) FROM "{dataset}".events') == [
        (EVENTS, EVENTS)
    ]
    assert rows(postgres_url, f'SELECT count(*) FROM "{dataset}"._dlt_loads') == [(1,)]
