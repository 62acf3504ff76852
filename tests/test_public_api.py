"""The public API table (``loadstone._EXPORTS``) is pinned: a change to it is deliberate.

``import loadstone as dlt`` ports dlt code, so a name that disappears or moves breaks users.
Adding a name means adding it here too, which makes the change visible in review.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import loadstone

PINNED: dict[str, tuple[str, str | None]] = {
    "pipeline": ("loadstone.pipelines.pipeline", "pipeline"),
    "Pipeline": ("loadstone.pipelines.pipeline", "Pipeline"),
    "LoadInfo": ("loadstone.pipelines.load_info", "LoadInfo"),
    "attach": ("loadstone.pipelines.pipeline", "attach"),
    "run": ("loadstone.pipelines.pipeline", "run"),
    "PipelineStepFailed": ("loadstone.pipelines.pipeline", "PipelineStepFailed"),
    "resource": ("loadstone.extract.sources", "resource"),
    "transformer": ("loadstone.extract.sources", "transformer"),
    "sources": ("loadstone.sources", None),
    "mark": ("loadstone.extract.mark", None),
    "secrets": ("loadstone.extract.injection", "secrets"),
    "source": ("loadstone.extract.sources", "source"),
    "current": ("loadstone.current", None),
    "Schema": ("loadstone.schema", "Schema"),
    "SchemaContract": ("loadstone.schema.contracts", "SchemaContract"),
    "naming_convention": ("loadstone.plugin_manager", "naming_convention"),
    "NamingConvention": ("loadstone.naming", "NamingConvention"),
    "hookimpl": ("loadstone.hookspecs", "hookimpl"),
    "destinations": ("loadstone.destinations", None),
    "Destination": ("loadstone.destinations.contract", "Destination"),
    "Capabilities": ("loadstone.destinations.contract", "Capabilities"),
    "DestinationNotSupported": ("loadstone.destinations.contract", "DestinationNotSupported"),
    "config": ("loadstone.config", None),
    "LoadstoneError": ("loadstone.errors", "LoadstoneError"),
    "UnknownPluginError": ("loadstone.plugin_manager", "UnknownPluginError"),
    "ConfigFileError": ("loadstone.config", "ConfigFileError"),
}


def test_the_export_table_is_the_pinned_one() -> None:
    assert loadstone._EXPORTS == PINNED


def test_every_export_resolves_to_the_object_it_names() -> None:
    for name, (module_name, attribute) in PINNED.items():
        module = importlib.import_module(module_name)
        expected = module if attribute is None else getattr(module, attribute)
        assert getattr(loadstone, name) is expected, name


def test_all_and_dir_list_exactly_the_exports() -> None:
    assert sorted(loadstone.__all__) == sorted(["__version__", *PINNED])
    assert dir(loadstone) == sorted(loadstone.__all__)


def test_type_checkers_see_every_export() -> None:
    """The lazy ``__getattr__`` hides names from mypy; the TYPE_CHECKING imports show them."""
    tree = ast.parse(Path(loadstone.__file__).read_text(encoding="utf-8"))
    guarded: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom | ast.Import):
                    guarded.update(alias.asname or alias.name for alias in statement.names)
    assert guarded == set(PINNED)
