"""``loadstone plugins``: the installed plugins as a table, and the naming conformance check."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from loadstone.cli import main

BROKEN_NAMING = """
from loadstone.naming import NamingConvention as Base

class NamingConvention(Base):
    '''Claims to be case-insensitive, keeps upper case and ignores max_length.'''

    is_case_sensitive = False

    def normalize_identifier(self, identifier):
        return identifier + "_X" * 50
"""


def write_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str) -> str:
    folder = tmp_path / "on_path"
    package = folder / f"lscli_{uuid.uuid4().hex[:10]}"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "naming.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(folder))
    return f"{package.name}.naming"


def write_distribution(folder: Path, name: str, version: str, group: str, entry: str) -> None:
    info = folder / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[{group}]\n{entry}\n")


def lines_of(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


# --- listing ---------------------------------------------------------------------------------


def test_plugins_prints_a_table_with_a_header(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plugins"]) == 0
    header = lines_of(capsys.readouterr().out)[0]
    assert header.split() == ["KIND", "NAME", "MODULE", "DISTRIBUTION", "VERSION"]


def test_plugins_lists_the_builtin_plugins(capsys: pytest.CaptureFixture[str]) -> None:
    main(["plugins"])
    rows = [line.split() for line in lines_of(capsys.readouterr().out)[1:]]
    assert ["naming", "snake_case", "loadstone.plugins.naming.snake_case", "loadstone"] in [
        row[:4] for row in rows
    ]
    assert {row[0] for row in rows} >= {"naming", "normalizers", "destinations"}


def test_plugins_columns_are_aligned(capsys: pytest.CaptureFixture[str]) -> None:
    main(["plugins"])
    lines = lines_of(capsys.readouterr().out)
    module_column = lines[0].index("MODULE")
    for line in lines[1:]:
        assert line[module_column - 2 : module_column] == "  "
        assert line[module_column] != " "


def test_plugins_list_kind_shows_one_kind(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plugins", "list", "--kind", "normalizers"]) == 0
    rows = lines_of(capsys.readouterr().out)[1:]
    assert rows
    assert all(row.split()[0] == "normalizers" for row in rows)


def test_plugins_lists_a_third_party_distribution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_distribution(tmp_path, "lsn-latin9", "0.4.2", "loadstone.naming", "latin9 = lsn_latin9")
    monkeypatch.syspath_prepend(str(tmp_path))
    main(["plugins"])
    rows = [line.split() for line in lines_of(capsys.readouterr().out)]
    assert ["naming", "latin9", "lsn_latin9", "lsn-latin9", "0.4.2"] in rows


def test_the_console_script_lists_plugins() -> None:
    script = Path(sys.executable).with_name("loadstone")
    result = subprocess.run([str(script), "plugins"], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert "snake_case" in result.stdout


def test_python_dash_m_loadstone_cli_runs_the_same_command() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "loadstone.cli", "plugins", "list", "--kind", "naming"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "sql_cs_v1" in result.stdout


# --- check -----------------------------------------------------------------------------------


def test_check_of_a_builtin_convention_passes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plugins", "check", "snake_case"]) == 0
    assert capsys.readouterr().out.strip()


def test_check_accepts_a_module_path_and_max_length(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["plugins", "check", "loadstone.plugins.naming.sql_cs_v1", "--max-length", "20"]) == 0
    )


def test_check_of_a_nonconforming_convention_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    module = write_plugin(tmp_path, monkeypatch, BROKEN_NAMING)
    assert main(["plugins", "check", module, "--max-length", "10"]) == 1
    assert capsys.readouterr().out.strip()


def test_check_of_an_unknown_name_fails_with_a_message_and_no_traceback(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["plugins", "check", "snake_kase"]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("error: unknown naming convention 'snake_kase'")
    assert "snake_case" in captured.err
    assert "Traceback" not in captured.err


def test_check_of_a_module_that_cannot_be_imported_names_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["plugins", "check", "no_such_pkg_q.naming"]) == 2
    assert "'no_such_pkg_q.naming'" in capsys.readouterr().err


# --- the command itself ----------------------------------------------------------------------


def test_no_command_prints_help_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "plugins" in capsys.readouterr().err


def test_version_is_printed(capsys: pytest.CaptureFixture[str]) -> None:
    from loadstone import __version__

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"loadstone {__version__}"
