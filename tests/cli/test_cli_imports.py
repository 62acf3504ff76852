"""What a JSON load into DuckDB imports: only what it needs, so the CLI starts in less CPU.

numpy costs ~0.17 CPU-s to import and pyarrow with ``pyarrow.parquet`` ~0.1 s more, out of
~1 CPU-s for a whole ``loadstone run`` of a small file; pandas, SQLAlchemy, fsspec and pyspark
cost more still. Inputs and destinations that need them (Arrow, pandas and Parquet inputs,
the filesystem, Delta and Iceberg destinations, Spark, sql_database) import them where they
use them. A run that normalizes rows needs pyarrow (the normalizer writes Parquet with it,
the DuckDB loader reads the files' schemas with it; pyarrow imports numpy); reading what a
pipeline loaded (``info``, ``show``, ``report``) or a run that skips files loaded already
needs neither.

Each check runs in a fresh interpreter: the suite's own process has all of them imported.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from cli_support import cli

HEAVY = ("numpy", "pyarrow", "pandas", "sqlalchemy", "fsspec", "pyspark")
#: what a run that writes Parquet files needs (the normalizer's writer, the DuckDB loader's
#: file schemas), and nothing else of :data:`HEAVY`
PARQUET = {"numpy", "pyarrow"}

API_RUN = "api"
#: runs each command of its argument (a JSON list): a command line through
#: ``loadstone.cli.main``, or :data:`API_RUN`: a ``pipeline.run`` of dicts into DuckDB;
#: then prints which of HEAVY the interpreter imported
PROGRAM = f"""
import json, sys
from loadstone.cli import main
import loadstone
for command in json.loads(sys.argv[1]):
    if command == {API_RUN!r}:
        rows = [{{"id": 1, "tags": ["a", "b"]}}, {{"id": 2, "owner": {{"name": "x"}}}}]
        loadstone.pipeline("api_run", destination="duckdb").run(rows, table_name="t")
    else:
        assert main(command) == 0, command
print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))
"""


def imported(*commands: list[str] | str) -> set[str]:
    """The modules of :data:`HEAVY` one fresh interpreter imported to run the commands
    (command lines, or :data:`API_RUN`)."""
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, json.dumps(commands)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return set(json.loads(done.stdout.splitlines()[-1]))


def write_jsonl(folder: Path) -> Path:
    path = folder / "events.jsonl"
    path.write_text('{"id": 1, "tags": ["a", "b"]}\n{"id": 2, "owner": {"name": "x"}}\n')
    return path


def test_a_run_of_json_into_duckdb_by_the_cli_or_the_api_imports_what_parquet_needs(
    tmp_path: Path,
) -> None:
    # one interpreter for both: each run's imports must be within PARQUET, so their union is
    cli_run = ["run", str(write_jsonl(tmp_path)), "--table", "events", "-q"]
    assert imported(cli_run, API_RUN) <= PARQUET


def test_reading_a_duckdb_pipeline_or_rerunning_loaded_files_imports_no_numpy_or_pyarrow(
    tmp_path: Path,
) -> None:
    run = ["run", str(write_jsonl(tmp_path)), "--table", "events", "-p", "seen", "-q"]
    assert cli(*run) == 0
    reading = (
        ["pipeline", "seen", "info"],
        ["pipeline", "seen", "show"],
        ["pipeline", "seen", "report", "--output", str(tmp_path / "seen.html")],
        run,  # the file is loaded already: skipped, nothing to normalize
    )
    assert imported(*reading) == set()
