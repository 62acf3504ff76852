"""``pipeline(progress=...)`` takes dlt's display names: each draws through its library."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import loadstone as dlt
from loadstone.exceptions import MissingDependencyException


def _run(tmp_path: Path, progress: str) -> None:
    pipe = dlt.pipeline(
        f"shown_{progress}", destination="duckdb", pipelines_dir=str(tmp_path), progress=progress
    )
    pipe.run([{"id": i} for i in range(50)], table_name="t")


def test_log_prints_a_block_per_step_with_its_rows(tmp_path: Path, capsys: Any) -> None:
    _run(tmp_path, "log")
    out = capsys.readouterr().out
    for step in ("Extract", "Normalize", "Load"):
        assert f" {step} shown_log " in out
    assert "Rows: 50 |" in out


def test_tqdm_draws_a_bar_of_rows_per_step(tmp_path: Path, capsys: Any) -> None:
    _run(tmp_path, "tqdm")
    err = capsys.readouterr().err
    assert "Extract shown_tqdm" in err and "Load shown_tqdm" in err and "50" in err


def test_alive_progress_draws_a_bar_of_rows_per_step(tmp_path: Path, capsys: Any) -> None:
    _run(tmp_path, "alive_progress")
    out = capsys.readouterr().out
    assert "Normalize shown_alive_progress" in out and "50" in out


def test_alive_progress_draws_where_sys_stdout_is_now(tmp_path: Path, capsys: Any) -> None:
    """alive_progress's default stream is the sys.stdout of its import (in a test worker,
    an earlier test's capture): the bar names today's."""
    import io

    import alive_progress.core.configuration as alive_config

    alive_config.config_handler.set_global(file=io.StringIO())  # a stream of the past
    try:
        _run(tmp_path, "alive_progress")
    finally:
        alive_config.config_handler.reset()
    assert "Normalize shown_alive_progress" in capsys.readouterr().out


def test_enlighten_loads_with_its_bars(tmp_path: Path) -> None:
    _run(tmp_path, "enlighten")  # enlighten draws only on a terminal


@pytest.mark.parametrize(
    ("name", "module", "package"),
    [("tqdm", "tqdm", "tqdm"), ("enlighten", "enlighten", "enlighten"),
     ("alive_progress", "alive_progress", "alive-progress")],
)  # fmt: skip
def test_a_display_whose_library_is_missing_names_the_package(
    name: str, module: str, package: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # `import` of it fails, as when missing
    with pytest.raises(MissingDependencyException) as caught:
        dlt.pipeline("missing", pipelines_dir=str(tmp_path), progress=name)
    assert caught.value.dependencies == [package]
    assert isinstance(caught.value, ImportError) and f'pip install "{package}"' in str(caught.value)


def test_an_unknown_name_is_a_value_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="log, tqdm, enlighten, alive_progress"):
        dlt.pipeline("unknown", pipelines_dir=str(tmp_path), progress="bogus")
