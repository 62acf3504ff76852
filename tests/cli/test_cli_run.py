"""``loadstone run`` and ``loadstone pipeline``: the main job from the command line."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_support import cli
from locations import EXAMPLES

from loadstone.cli import run_command

pytestmark = pytest.mark.spark


def test_examples_data_is_a_small_nested_sample() -> None:
    lines = (EXAMPLES / "orders.jsonl").read_text().splitlines()
    assert 150 <= len(lines) <= 300
    first = json.loads(lines[0])
    assert isinstance(first["items"], list) and isinstance(first["customer"], dict)


def test_run_loads_the_example_orders_and_prints_load_info(capsys: Any) -> None:
    assert (
        cli("run", str(EXAMPLES / "orders.jsonl"), "--table", "orders", "--pipeline", "quickstart")
        == 0
    )
    out, err = capsys.readouterr()
    assert "LOADED" in out
    assert "orders__items" in out
    assert "extract" in err and "normalize" in err and "load" in err and "rows" in err

    assert cli("pipeline", "quickstart", "show") == 0
    out, _ = capsys.readouterr()
    assert "orders " in out and "200" in out
    assert "orders__items" in out and "orders__tags" in out
    assert "load history" in out


def test_pipeline_info_schema_and_trace_describe_the_last_run(capsys: Any) -> None:
    cli(
        "run", str(EXAMPLES / "orders.jsonl"), "--table", "orders", "--pipeline", "quickstart", "-q"
    )
    capsys.readouterr()
    assert cli("pipeline", "quickstart", "info") == 0
    out, _ = capsys.readouterr()
    assert "pending packages: 0" in out and "quickstart_dataset" in out
    assert cli("pipeline", "quickstart", "schema") == 0
    out, _ = capsys.readouterr()
    assert "orders__items:" in out and "zip__v_text:" in out
    assert cli("pipeline", "quickstart", "trace") == 0
    out, _ = capsys.readouterr()
    assert "normalize" in out and "orders: 200" in out


def test_run_reads_gzipped_files_and_folders_with_options(tmp_path: Path, capsys: Any) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    with gzip.open(folder / "a.jsonl.gz", "wt") as handle:
        handle.write('{"id": 1, "v": "x"}\n{"id": 2, "v": "y"}\n')
    (folder / "b.json").write_text('[{"id": 2, "v": "z"}]')
    code = cli(
        "run",
        str(folder),
        "--table",
        "things",
        "--pipeline",
        "p",
        "--dataset",
        "ds",
        "--write-disposition",
        "merge",
        "--primary-key",
        "id",
        "--pipelines-dir",
        str(tmp_path / "pipes"),
        "-q",
    )
    assert code == 0
    capsys.readouterr()
    assert cli("pipeline", "p", "show", "--pipelines-dir", str(tmp_path / "pipes")) == 0
    out, _ = capsys.readouterr()
    assert "things" in out


def test_pipeline_drop_pending_packages_reports_what_it_dropped(capsys: Any) -> None:
    import loadstone as dlt

    pipe = dlt.pipeline("leftover", destination="duckdb")
    pipe.extract([{"id": 1}], table_name="t")
    assert cli("pipeline", "leftover", "info") == 0
    assert "pending packages: 1" in capsys.readouterr().out
    assert cli("pipeline", "leftover", "drop-pending-packages") == 0
    assert "dropped 1 pending package(s)" in capsys.readouterr().out


def test_unknown_pipeline_is_a_clear_error() -> None:
    from loadstone.exceptions import PipelineNotFound

    with pytest.raises(PipelineNotFound, match="nope"):
        cli("pipeline", "nope", "info")


def test_missing_input_is_a_clear_error() -> None:
    from loadstone.exceptions import InputError

    with pytest.raises(InputError, match=r"missing\.jsonl"):
        cli("run", "missing.jsonl", "--table", "t")


def test_console_script_runs_the_example_end_to_end() -> None:
    env = dict(os.environ, SPARK__MASTER="local[1]")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "loadstone.cli",
            "run",
            str(EXAMPLES / "orders.jsonl"),
            "--table",
            "orders",
            "--pipeline",
            "quickstart",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "LOADED" in done.stdout


def test_progress_display_writes_one_line_per_update_when_not_a_tty() -> None:
    import io

    from loadstone.runtime.load_info import ProgressEvent

    stream = io.StringIO()
    display = run_command.ProgressDisplay(stream, interval=0)
    display(ProgressEvent("extract", "started"))
    display(
        ProgressEvent("extract", "progress", rows=10_000, bytes=2_000_000, files=1, elapsed=1.5)
    )
    display(
        ProgressEvent("extract", "finished", rows=12_000, bytes=2_500_000, files=2, elapsed=2.0)
    )
    display.close()
    lines = stream.getvalue().splitlines()
    assert lines[0] == "extract   started"
    assert "10,000 rows" in lines[1] and "2.00 MB" in lines[1] and "1 files" in lines[1]
    assert lines[-1].endswith("done") and "12,000 rows" in lines[-1] and "2.0 s" in lines[-1]
