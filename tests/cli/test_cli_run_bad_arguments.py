"""``loadstone run`` refuses a bad argument in one line and leaves the pipeline usable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from loadstone.cli import EXIT_USAGE, main


@pytest.mark.parametrize("table", [" ", "__"])
def test_a_table_name_with_nothing_to_name_is_refused_and_later_runs_load(
    table: str, tmp_path: Path, capsys: Any
) -> None:
    data = tmp_path / "f.jsonl"
    data.write_text('{"a": 1}\n{"a": 2}\n')
    where = ("--pipeline", "blank", "--pipelines-dir", str(tmp_path / "pipelines"), "-q")

    assert main(["run", str(data), "--table", table, *where]) == EXIT_USAGE
    _, err = capsys.readouterr()
    assert err.count("\n") == 1 and "normalizes to an empty identifier" in err
    assert not (tmp_path / "pipelines" / "blank" / "schemas").exists()

    assert main(["run", str(data), "--table", "events", *where]) == 0
    out, _ = capsys.readouterr()
    assert "events  2" in out
