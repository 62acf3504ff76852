"""The plugin manager: plugins by short name or module path, only the asked plugin's hook.

Plugin modules are real files written into ``tmp_path`` and put on ``sys.path``; "installed"
plugins are real distributions (a ``.dist-info`` folder with ``entry_points.txt``) on
``sys.path``, found through package metadata exactly as pip-installed ones are.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

import loadstone
from loadstone import plugin_manager
from loadstone.exceptions import (
    LoadstoneError,
    PluginContractError,
    PluginImportError,
    UnknownPluginError,
)
from loadstone.naming import NamingConvention as BaseNamingConvention
from loadstone.plugin_manager import PluginInfo

BUILTIN_NAMING = ("direct", "duck_case", "s3_tables", "snake_case", "sql_ci_v1", "sql_cs_v1")

HOOKED_NAMING = """
from loadstone.hookspecs import hookimpl
from loadstone.naming import NamingConvention as Base

class UpperNaming(Base):
    is_case_sensitive = True

    def normalize_identifier(self, identifier):
        return self.shorten_identifier(identifier.upper(), identifier, self.max_length)

@hookimpl
def loadstone_naming_convention():
    return UpperNaming
"""

DLT_STYLE_NAMING = """
from loadstone.naming import NamingConvention as Base

class NamingConvention(Base):
    is_case_sensitive = False

    def normalize_identifier(self, identifier):
        return identifier.strip().lower().replace(" ", "_")
"""

DESTINATIONS = """
import attrs
from loadstone.hookspecs import hookimpl

@attrs.frozen
class Destination:
    name: str
    client_class: object = None

@hookimpl
def loadstone_destinations():
    return [{destinations}]
"""


@pytest.fixture
def plugin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder on ``sys.path`` for plugin modules written by the test."""
    folder = tmp_path / "plugins_on_path"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    return folder


def write_module(folder: Path, source: str) -> str:
    """Write ``<unique package>.plugin`` (modules stay in ``sys.modules``); return its name."""
    package = folder / f"lsplug_{uuid.uuid4().hex[:10]}"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "plugin.py").write_text(textwrap.dedent(source), encoding="utf-8")
    return f"{package.name}.plugin"


def write_distribution(
    folder: Path, name: str, version: str, entry_points: dict[str, dict[str, str]]
) -> None:
    """A minimal installed distribution: the metadata pip writes, with entry points."""
    info = folder / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    lines = []
    for group, points in entry_points.items():
        lines.append(f"[{group}]")
        lines.extend(f"{key} = {value}" for key, value in points.items())
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")


# --- naming by short name and module path ----------------------------------------------------


def test_a_short_name_gives_the_builtin_naming_convention() -> None:
    convention = plugin_manager.naming_convention("snake_case")
    assert isinstance(convention, BaseNamingConvention)
    assert convention.normalize_identifier("DealFlow") == "deal_flow"


def test_max_length_reaches_the_instance() -> None:
    assert plugin_manager.naming_convention("snake_case", max_length=10).max_length == 10


def test_a_module_path_gives_the_same_class_as_the_short_name() -> None:
    by_path = plugin_manager.naming_convention_class("loadstone.plugins.naming.sql_cs_v1")
    assert by_path is plugin_manager.naming_convention_class("sql_cs_v1")


def test_every_builtin_naming_resolves_by_short_name() -> None:
    for name in BUILTIN_NAMING:
        assert issubclass(plugin_manager.naming_convention_class(name), BaseNamingConvention)


def test_no_name_uses_the_configured_naming(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCHEMA__NAMING", "sql_ci_v1")
    convention = plugin_manager.naming_convention()
    assert type(convention) is plugin_manager.naming_convention_class("sql_ci_v1")


def test_no_name_and_no_config_gives_snake_case() -> None:
    convention = plugin_manager.naming_convention()
    assert type(convention) is plugin_manager.naming_convention_class("snake_case")


def test_a_module_with_the_hook_is_a_naming_plugin(plugin_dir: Path) -> None:
    module = write_module(plugin_dir, HOOKED_NAMING)
    convention = plugin_manager.naming_convention(module)
    assert type(convention).__name__ == "UpperNaming"
    assert convention.normalize_identifier("Deal Flow") == "DEAL FLOW"


def test_a_dlt_style_module_without_hooks_is_a_naming_plugin(plugin_dir: Path) -> None:
    module = write_module(plugin_dir, DLT_STYLE_NAMING)
    convention = plugin_manager.naming_convention(module)
    assert type(convention).__module__ == module
    assert convention.normalize_identifier(" Deal Flow ") == "deal_flow"


def test_a_module_path_in_config_selects_the_plugin(
    plugin_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = write_module(plugin_dir, DLT_STYLE_NAMING)
    monkeypatch.setenv("SCHEMA__NAMING", module)
    assert type(plugin_manager.naming_convention()).__module__ == module


def test_a_module_in_a_package_is_named_by_its_dotted_path(plugin_dir: Path) -> None:
    package = f"lspkg_{uuid.uuid4().hex[:10]}"
    (plugin_dir / package).mkdir()
    (plugin_dir / package / "__init__.py").write_text("")
    (plugin_dir / package / "sql_cs_latin2.py").write_text(DLT_STYLE_NAMING)
    cls = plugin_manager.naming_convention_class(f"{package}.sql_cs_latin2")
    assert cls.__module__ == f"{package}.sql_cs_latin2"


def test_only_the_asked_plugins_hook_is_called(plugin_dir: Path) -> None:
    first = write_module(plugin_dir, HOOKED_NAMING)
    second = write_module(plugin_dir, HOOKED_NAMING)
    first_class = plugin_manager.naming_convention_class(first)
    second_class = plugin_manager.naming_convention_class(second)
    assert first_class.__module__ == first
    assert second_class.__module__ == second
    assert plugin_manager.naming_convention_class(first) is first_class


def test_a_class_is_accepted_directly(plugin_dir: Path) -> None:
    module = write_module(plugin_dir, DLT_STYLE_NAMING)
    cls = plugin_manager.naming_convention_class(module)
    assert plugin_manager.naming_convention_class(cls) is cls


def test_an_installed_third_party_naming_resolves_by_short_name(plugin_dir: Path) -> None:
    module = write_module(plugin_dir, HOOKED_NAMING)
    write_distribution(plugin_dir, "lsn-upper", "2.0.1", {"loadstone.naming": {"upper": module}})
    assert plugin_manager.naming_convention_class("upper").__module__ == module


# --- errors ----------------------------------------------------------------------------------


def test_an_unknown_short_name_lists_the_available_names() -> None:
    with pytest.raises(UnknownPluginError) as caught:
        plugin_manager.naming_convention("snake_kase")
    message = str(caught.value)
    assert "'snake_kase'" in message
    for name in BUILTIN_NAMING:
        assert name in message
    assert caught.value.available == BUILTIN_NAMING


def test_an_unknown_name_says_how_to_install_or_name_a_plugin() -> None:
    with pytest.raises(UnknownPluginError) as caught:
        plugin_manager.naming_convention("latin2")
    message = str(caught.value)
    assert "pip install" in message
    assert "'loadstone.naming'" in message
    assert "fully qualified module name" in message


def test_an_unknown_destination_is_dlts_unknown_destination_module() -> None:
    """Code written for dlt catches ``UnknownDestinationModule`` (a destination error and a
    lookup error); it is loadstone's ``UnknownDestination``, an ``UnknownPluginError``."""
    from loadstone.common.destination.exceptions import UnknownDestinationModule
    from loadstone.exceptions import DestinationError

    with pytest.raises(UnknownDestinationModule) as caught:
        loadstone.pipeline("unknown", destination="nonexistent_dest")
    assert isinstance(caught.value, UnknownPluginError)
    assert isinstance(caught.value, DestinationError) and isinstance(caught.value, LookupError)
    assert "'nonexistent_dest'" in str(caught.value) and "duckdb" in str(caught.value)


def test_unknown_plugin_error_is_a_loadstone_error_and_a_lookup_error() -> None:
    assert issubclass(UnknownPluginError, LoadstoneError)
    assert issubclass(UnknownPluginError, LookupError)


def test_a_missing_module_path_names_the_module_and_the_import_error() -> None:
    with pytest.raises(PluginImportError) as caught:
        plugin_manager.naming_convention("no_such_package_xyz.naming")
    message = str(caught.value)
    assert "'no_such_package_xyz.naming'" in message
    assert "No module named 'no_such_package_xyz'" in message


def test_a_module_that_fails_on_import_names_the_module_and_the_error(plugin_dir: Path) -> None:
    module = write_module(plugin_dir, "import not_installed_dependency_xyz\n")
    with pytest.raises(PluginImportError) as caught:
        plugin_manager.naming_convention_class(module)
    assert module in str(caught.value)
    assert "not_installed_dependency_xyz" in str(caught.value)


def test_a_module_with_a_syntax_error_names_the_module(plugin_dir: Path) -> None:
    module = write_module(plugin_dir, "def broken(:\n")
    with pytest.raises(PluginImportError) as caught:
        plugin_manager.naming_convention_class(module)
    assert module in str(caught.value)
    assert "SyntaxError" in str(caught.value)


def test_a_broken_entry_point_names_its_module(plugin_dir: Path) -> None:
    write_distribution(
        plugin_dir, "lsn-broken", "0.1", {"loadstone.naming": {"broken": "lsn_gone_module"}}
    )
    with pytest.raises(PluginImportError, match="lsn_gone_module"):
        plugin_manager.naming_convention_class("broken")


def test_a_module_without_hook_or_class_is_not_a_naming_plugin(plugin_dir: Path) -> None:
    module = write_module(plugin_dir, "X = 1\n")
    with pytest.raises(PluginContractError, match="loadstone_naming_convention"):
        plugin_manager.naming_convention_class(module)


def test_a_hook_function_without_the_marker_is_pointed_out(plugin_dir: Path) -> None:
    module = write_module(plugin_dir, "def loadstone_naming_convention():\n    return int\n")
    with pytest.raises(PluginContractError, match="hookimpl"):
        plugin_manager.naming_convention_class(module)


def test_a_hook_returning_something_else_than_a_class_is_refused(plugin_dir: Path) -> None:
    module = write_module(
        plugin_dir,
        "from loadstone.hookspecs import hookimpl\n"
        "@hookimpl\ndef loadstone_naming_convention():\n    return 'snake_case'\n",
    )
    with pytest.raises(PluginContractError, match="not a naming convention class"):
        plugin_manager.naming_convention_class(module)


def test_a_misspelled_hook_is_reported(plugin_dir: Path) -> None:
    module = write_module(
        plugin_dir,
        "from loadstone.hookspecs import hookimpl\n"
        "from loadstone.naming import NamingConvention\n"
        "@hookimpl\ndef loadstone_naming_conventions():\n    return NamingConvention\n",
    )
    with pytest.raises(PluginContractError, match="loadstone_naming_conventions"):
        plugin_manager.naming_convention_class(module)


# --- normalizers -----------------------------------------------------------------------------

NORMALIZER = """
from loadstone.hookspecs import hookimpl

class Normalizer:
    def normalize(self, package, schema, context):
        return "normalized"

@hookimpl
def loadstone_normalizer():
    return Normalizer()
"""


def test_a_normalizer_resolves_by_module_path(plugin_dir: Path) -> None:
    module = write_module(plugin_dir, NORMALIZER)
    assert plugin_manager.get_normalizer(module).normalize(None, None, None) == "normalized"


def test_a_normalizer_resolves_by_short_name(plugin_dir: Path) -> None:
    module = write_module(plugin_dir, NORMALIZER)
    write_distribution(plugin_dir, "lsn-norm", "1.0", {"loadstone.normalizers": {"fake": module}})
    assert plugin_manager.get_normalizer("fake").normalize(None, None, None) == "normalized"


def test_an_unknown_normalizer_lists_the_normalizers() -> None:
    with pytest.raises(UnknownPluginError, match="relational"):
        plugin_manager.get_normalizer("columnar")


def test_a_normalizer_plugin_must_implement_its_hook(plugin_dir: Path) -> None:
    module = write_module(plugin_dir, DLT_STYLE_NAMING)
    with pytest.raises(PluginContractError, match="loadstone_normalizer"):
        plugin_manager.get_normalizer(module)


# --- destinations ----------------------------------------------------------------------------


def destinations_module(folder: Path, *declared: str) -> str:
    return write_module(folder, DESTINATIONS.format(destinations=", ".join(declared)))


def test_a_destination_resolves_by_module_path(plugin_dir: Path) -> None:
    module = destinations_module(plugin_dir, "Destination('lake')")
    assert plugin_manager.get_destination(module).name == "lake"


def test_a_module_path_declaring_several_destinations_is_ambiguous(plugin_dir: Path) -> None:
    module = destinations_module(plugin_dir, "Destination('a')", "Destination('b')")
    with pytest.raises(PluginContractError, match="exactly one"):
        plugin_manager.get_destination(module)


def test_destinations_are_collected_across_plugins(plugin_dir: Path) -> None:
    many = destinations_module(plugin_dir, "Destination('lake_a')", "Destination('lake_b')")
    one = destinations_module(plugin_dir, "Destination('warehouse_x')")
    write_distribution(
        plugin_dir,
        "lsn-dest",
        "1.0",
        {"loadstone.destinations": {"lake_profiles": many, "warehouse_x": one}},
    )
    names = plugin_manager.destination_names()
    assert {"lake_a", "lake_b", "warehouse_x"} <= set(names)
    assert plugin_manager.get_destination("lake_b").name == "lake_b"


def test_the_plugin_named_like_the_destination_wins_a_duplicate(plugin_dir: Path) -> None:
    profiles = destinations_module(plugin_dir, "Destination('lakehouse', client_class=None)")
    loader = destinations_module(plugin_dir, "Destination('lakehouse', client_class=object)")
    write_distribution(
        plugin_dir,
        "lsn-dup",
        "1.0",
        {"loadstone.destinations": {"aaa_profiles": profiles, "lakehouse": loader}},
    )
    assert plugin_manager.get_destination("lakehouse").client_class is object


def test_a_destination_with_a_loader_beats_a_profile(plugin_dir: Path) -> None:
    loader = destinations_module(plugin_dir, "Destination('lake_z', client_class=object)")
    profiles = destinations_module(plugin_dir, "Destination('lake_z', client_class=None)")
    write_distribution(
        plugin_dir,
        "lsn-dup2",
        "1.0",
        {"loadstone.destinations": {"zz_loaders": loader, "aa_profiles": profiles}},
    )
    assert plugin_manager.get_destination("lake_z").client_class is object


def test_an_unknown_destination_lists_the_destination_names(plugin_dir: Path) -> None:
    module = destinations_module(plugin_dir, "Destination('lake_q')")
    write_distribution(plugin_dir, "lsn-q", "1.0", {"loadstone.destinations": {"lake_q": module}})
    with pytest.raises(UnknownPluginError) as caught:
        plugin_manager.get_destination("lake_r")
    assert "lake_q" in caught.value.available
    assert "loadstone.destinations" in str(caught.value)


# --- listing ---------------------------------------------------------------------------------


def test_list_plugins_shows_the_builtin_plugins_with_their_distribution() -> None:
    plugins = plugin_manager.list_plugins()
    assert (
        PluginInfo(
            kind="naming",
            name="snake_case",
            module="loadstone.plugins.naming.snake_case",
            distribution="loadstone",
            version=plugin_manager.list_plugins()[0].version,
        )
        in plugins
    )
    assert {p.name for p in plugins if p.kind == "naming"} >= set(BUILTIN_NAMING)
    assert {p.name for p in plugins if p.kind == "normalizers"} >= {"relational"}


def test_list_plugins_shows_a_third_party_distribution_and_version(plugin_dir: Path) -> None:
    write_distribution(plugin_dir, "lsn-listed", "3.1.4", {"loadstone.naming": {"listed": "x.y"}})
    assert (
        PluginInfo("naming", "listed", "x.y", "lsn-listed", "3.1.4")
        in plugin_manager.list_plugins()
    )


def test_listing_plugins_imports_no_plugin() -> None:
    code = (
        "import sys\n"
        "from loadstone import plugin_manager\n"
        "assert plugin_manager.list_plugins()\n"
        "print(sorted(m for m in sys.modules if m.startswith('loadstone.plugins.')))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_a_broken_destination_plugin_does_not_hide_the_others(plugin_dir: Path) -> None:
    module = destinations_module(plugin_dir, "Destination('lake_ok')")
    write_distribution(
        plugin_dir,
        "lsn-mixed",
        "1.0",
        {"loadstone.destinations": {"good_ones": module, "bad_one": "lsn_gone_destinations"}},
    )
    assert plugin_manager.get_destination("lake_ok").name == "lake_ok"
    with pytest.warns(RuntimeWarning, match="lsn_gone_destinations"):
        assert "lake_ok" in plugin_manager.destination_names()


def test_an_unknown_destination_names_the_plugins_that_failed(plugin_dir: Path) -> None:
    write_distribution(
        plugin_dir, "lsn-bad", "1.0", {"loadstone.destinations": {"bad": "lsn_gone_dest_2"}}
    )
    with pytest.raises(UnknownPluginError, match="lsn_gone_dest_2"):
        plugin_manager.get_destination("lake_nowhere")


def test_an_unknown_configured_naming_says_where_it_was_configured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SCHEMA__NAMING", "snake_kase")
    with pytest.raises(UnknownPluginError, match="environment variable SCHEMA__NAMING"):
        plugin_manager.naming_convention()


def test_a_hook_that_raises_names_the_plugin_and_the_error(plugin_dir: Path) -> None:
    module = write_module(
        plugin_dir,
        "from loadstone.hookspecs import hookimpl\n"
        "@hookimpl\ndef loadstone_naming_convention():\n    raise RuntimeError('no licence')\n",
    )
    with pytest.raises(PluginContractError, match=r"RuntimeError: no licence") as caught:
        plugin_manager.naming_convention_class(module)
    assert module in str(caught.value)
