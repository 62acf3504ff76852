"""A pip-installed naming package becomes selectable by configuration, with no code change.

The test builds a real third-party distribution (its own ``pyproject.toml``, the setuptools
backend, an entry point in group ``loadstone.naming``), installs it with pip into a folder,
and then, in a fresh Python process that has that folder on ``PYTHONPATH``, selects the
convention by short name, by module path and through ``SCHEMA__NAMING``, and sees it in
``loadstone plugins``. Nothing in loadstone knows the package.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from loadstone import plugin_manager
from loadstone.exceptions import UnknownPluginError

PYPROJECT = """
[build-system]
requires = ["setuptools>=70.1"]
build-backend = "setuptools.build_meta"

[project]
name = "lsn-latin2"
version = "1.0.0"
description = "A case-sensitive SQL naming convention that keeps Latin-2 letters."
requires-python = ">=3.10"
dependencies = ["loadstone"]

[project.entry-points."loadstone.naming"]
latin2 = "lsn_latin2.sql_cs_latin2"

[tool.setuptools]
packages = ["lsn_latin2"]
"""

CONVENTION = '''
"""sql_cs_latin2: like sql_cs_v1, but Polish and other Latin-2 letters are kept."""

from __future__ import annotations

import re

from loadstone import hookimpl
from loadstone.naming import NamingConvention as BaseNamingConvention

LATIN2_LETTERS = "ąćęłńóśźżĄĆĘŁŃÓŚŹŻáäčďéěíĺľňôŕřšťúůýžÁÄČĎÉĚÍĹĽŇÔŔŘŠŤÚŮÝŽ"
_NOT_ALLOWED = re.compile(f"[^A-Za-z0-9_{LATIN2_LETTERS}]+")
_UNDERSCORE_RUN = re.compile("__+")


class NamingConvention(BaseNamingConvention):
    @property
    def is_case_sensitive(self) -> bool:
        return True

    def normalize_identifier(self, identifier: str) -> str:
        identifier = super().normalize_identifier(identifier)
        text = _NOT_ALLOWED.sub("_", identifier)
        if text[:1].isdigit():
            text = "_" + text
        if text != "_":
            text = text.rstrip("_")
        # "__" separates the parts of a path: never leave one inside an identifier
        text = _UNDERSCORE_RUN.sub("_", text)
        return self.shorten_identifier(text, identifier, self.max_length)


@hookimpl
def loadstone_naming_convention() -> type[NamingConvention]:
    return NamingConvention
'''

#: runs in the fresh process; prints what it saw as JSON
PROBE = """
import contextlib, io, json, os
from loadstone import config, plugin_manager
from loadstone.cli import main

by_name = plugin_manager.naming_convention("latin2")
by_path = plugin_manager.naming_convention("lsn_latin2.sql_cs_latin2", max_length=12)
configured_name = config.resolve_naming("github")
configured = plugin_manager.naming_convention()
listing = io.StringIO()
with contextlib.redirect_stdout(listing):
    status = main(["plugins", "list", "--kind", "naming"])
print(json.dumps({
    "by_name_class": type(by_name).__module__ + "." + type(by_name).__qualname__,
    "same_class": type(by_name) is type(by_path) is type(configured),
    "identifier": by_name.normalize_identifier("Zażółć gęślą Jaźń!"),
    "short": by_path.normalize_identifier("Łódź Wrocław Kraków Gdańsk"),
    "configured_name": configured_name,
    "plugins_status": status,
    "plugins_rows": [line.split() for line in listing.getvalue().splitlines()],
}))
"""


@pytest.fixture(scope="module")
def installed_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The third-party package, built and pip-installed into its own folder."""
    root = tmp_path_factory.mktemp("third_party")
    source = root / "lsn-latin2"
    (source / "lsn_latin2").mkdir(parents=True)
    (source / "pyproject.toml").write_text(textwrap.dedent(PYPROJECT), encoding="utf-8")
    (source / "lsn_latin2" / "__init__.py").write_text("", encoding="utf-8")
    (source / "lsn_latin2" / "sql_cs_latin2.py").write_text(CONVENTION, encoding="utf-8")
    site = root / "site"
    command = [
        sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
        "--no-build-isolation", "--disable-pip-version-check", "--target", str(site), str(source),
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    assert result.returncode == 0, f"pip install failed:\n{result.stdout}\n{result.stderr}"
    return site


def run_probe(site: Path, **env: str) -> dict[str, object]:
    environment = {**os.environ, "PYTHONPATH": str(site), **env}
    result = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=environment, check=False
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_the_convention_is_unknown_before_installation() -> None:
    with pytest.raises(UnknownPluginError):
        plugin_manager.naming_convention("latin2")


def test_an_installed_convention_is_selectable_by_config_with_no_code_change(
    installed_site: Path,
) -> None:
    seen = run_probe(installed_site, SCHEMA__NAMING="latin2")
    assert seen["by_name_class"] == "lsn_latin2.sql_cs_latin2.NamingConvention"
    assert seen["same_class"] is True
    assert seen["identifier"] == "Zażółć_gęślą_Jaźń"
    assert len(str(seen["short"])) == 12
    assert seen["configured_name"] == "latin2"


def test_loadstone_plugins_lists_the_installed_distribution(installed_site: Path) -> None:
    seen = run_probe(installed_site, SCHEMA__NAMING="latin2")
    assert seen["plugins_status"] == 0
    assert ["naming", "latin2", "lsn_latin2.sql_cs_latin2", "lsn-latin2", "1.0.0"] in seen[
        "plugins_rows"
    ]


def test_a_module_path_in_config_selects_the_installed_convention(installed_site: Path) -> None:
    seen = run_probe(installed_site, SCHEMA__NAMING="lsn_latin2.sql_cs_latin2")
    assert seen["configured_name"] == "lsn_latin2.sql_cs_latin2"
    assert seen["same_class"] is True


def test_the_conformance_check_passes_on_the_installed_convention(installed_site: Path) -> None:
    environment = {**os.environ, "PYTHONPATH": str(installed_site)}
    result = subprocess.run(
        [sys.executable, "-m", "loadstone.cli", "plugins", "check", "latin2"],
        capture_output=True,
        text=True,
        env=environment,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
