"""The CLI a scheduler and an operator rely on: exit codes, inputs it refuses by name, and
``loadstone pipeline`` drop / load-package / failed-jobs / sync / --list-pipelines / info."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loadstone.cli import main
from loadstone.cli.run_command import ProgressDisplay
from loadstone.runtime.load_info import ProgressEvent


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def loaded(tmp_path: Path) -> Path:
    """A pipeline ``adm`` that loaded two tables from two runs."""
    data = write_jsonl(tmp_path / "orders.jsonl", [{"id": 1, "tags": ["a"]}, {"id": 2, "tags": []}])
    notes = write_jsonl(tmp_path / "notes.jsonl", [{"note": "x"}])
    assert main(["run", str(data), "-t", "orders", "-p", "adm", "-q"]) == 0
    assert main(["run", str(notes), "-t", "notes", "-p", "adm", "-q"]) == 0
    return tmp_path


def test_a_failed_run_exits_1_with_one_error_line(tmp_path: Path, capsys: Any) -> None:
    data = write_jsonl(tmp_path / "o.jsonl", [{"a": 1}])
    code = main(["run", str(data), "-t", "t", "-q", "-w", "merge", "-k", "nosuchcol"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("error: ") and "nosuchcol" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_usage_errors_exit_2(tmp_path: Path, capsys: Any) -> None:
    assert main(["run", str(tmp_path / "missing.jsonl"), "-t", "t"]) == 2
    with pytest.raises(SystemExit) as bad_flag:
        main(["run", "x.jsonl", "-t", "t", "--no-such-flag"])
    assert bad_flag.value.code == 2


def test_run_on_a_spreadsheet_says_excel_is_not_a_supported_input(
    tmp_path: Path, capsys: Any
) -> None:
    sheet = tmp_path / "rows.xlsx"
    sheet.write_bytes(b"PK")
    assert main(["run", str(sheet), "-t", "t"]) == 2
    assert "Excel is not a supported input" in capsys.readouterr().err


def test_list_pipelines_names_each_pipeline(loaded: Path, capsys: Any) -> None:
    assert main(["pipeline", "--list-pipelines"]) == 0
    assert "adm" in capsys.readouterr().out


def test_info_shows_the_sources_state(loaded: Path, capsys: Any) -> None:
    assert main(["pipeline", "adm", "info"]) == 0
    assert "sources state" in capsys.readouterr().out


def test_load_package_describes_the_newest_package(loaded: Path, capsys: Any) -> None:
    assert main(["pipeline", "adm", "load-package"]) == 0
    out = capsys.readouterr().out
    assert "state:   loaded" in out and "table notes: 1 rows" in out
    assert main(["pipeline", "adm", "load-package", "no-such-id"]) == 1


def test_drop_removes_a_resources_tables_and_keeps_the_others(loaded: Path, capsys: Any) -> None:
    assert main(["pipeline", "adm", "drop", "orders"]) == 0
    out = capsys.readouterr().out
    assert "orders" in out and "orders__tags" in out
    assert main(["pipeline", "adm", "show"]) == 0
    shown = capsys.readouterr().out
    assert "notes" in shown and "orders " not in shown
    assert main(["pipeline", "adm", "drop"]) == 1  # neither resources nor --all


def test_failed_jobs_lists_a_package_set_aside_with_its_cause(tmp_path: Path, capsys: Any) -> None:
    data = write_jsonl(tmp_path / "o.jsonl", [{"a": 1}])
    assert main(["run", str(data), "-t", "t", "-p", "fj", "-q", "-w", "merge", "-k", "nope"]) == 1
    capsys.readouterr()
    assert main(["pipeline", "fj", "failed-jobs"]) == 0
    out = capsys.readouterr().out
    assert "failed package" in out and "nope" in out and "did not receive any data" in out


def test_sync_restores_state_and_schema_from_the_destination(loaded: Path, capsys: Any) -> None:
    assert main(["pipeline", "adm", "sync"]) == 0
    assert "restored" in capsys.readouterr().out
    assert main(["pipeline", "adm", "schema"]) == 0
    assert "orders" in capsys.readouterr().out


def test_normalize_progress_moves_before_the_first_part_finishes() -> None:
    class Stream:
        def __init__(self) -> None:
            self.lines: list[str] = []

        def write(self, text: str) -> None:
            self.lines.append(text)

        def flush(self) -> None:
            pass

    display = ProgressDisplay(Stream())  # type: ignore[arg-type]
    started = ProgressEvent("normalize", "started", input_rows=1200, input_bytes=3_000_000)
    first, second = display._line(started, 1.0), display._line(started, 2.0)
    assert "1,200 rows" in first and "3.00 MB" in first
    assert first != second  # the spinner and the clock move


def test_trace_says_what_each_mb_figure_measures(loaded: Path, capsys: Any) -> None:
    """extract: what it wrote; normalize: the Parquet it wrote; load: those files, loaded."""
    assert main(["pipeline", "adm", "trace"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[1:4]}
    assert "MB extracted" in lines["extract"]
    assert "MB normalized (Parquet written)" in lines["normalize"]
    assert "MB loaded (the normalized files)" in lines["load"]
    normalized = lines["normalize"].split(" MB ")[0].split()[-1]
    assert lines["load"].split(" MB ")[0].split()[-1] == normalized
