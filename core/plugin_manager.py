"""Finds plugins by name, loads them on demand, and calls the hook of the one asked for.

A plugin is a module. It is named either by the short name of its entry point in one of the
groups ``loadstone.naming``, ``loadstone.normalizers``, ``loadstone.destinations`` (what
``pip install some-package`` adds), or by its fully qualified module name (any name with a
dot), imported on demand. Built-in plugins come through the very same entry points, so a
third-party plugin is selected exactly like a built-in one: by configuration, with no code
change.

Nothing is imported until it is asked for: listing plugins reads package metadata only, and
asking for the ``snake_case`` naming imports that one module, not every plugin. The module
is registered with a pluggy ``PluginManager`` (project ``loadstone``, specs from
:mod:`loadstone.hookspecs`) and only *its* hook is called, so two plugins of the same kind
never answer for each other.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import sys
import warnings
from collections.abc import Iterable
from importlib.metadata import EntryPoint
from types import ModuleType
from typing import TYPE_CHECKING, Final, cast

import attrs
import pluggy

from loadstone import config, hookspecs
from loadstone.exceptions import (
    LoadstoneError,
    PluginContractError,
    PluginImportError,
    UnknownDestination,
    UnknownPluginError,
)
from loadstone.hookspecs import DestinationPlugin, NormalizerPlugin
from loadstone.plugin_kinds import GROUPS, HOOKS

if TYPE_CHECKING:
    from loadstone.naming import NamingConvention


@attrs.frozen
class PluginInfo:
    """One installed plugin, as its entry point declares it (nothing is imported)."""

    kind: str
    name: str
    module: str
    distribution: str | None
    version: str | None


# --- entry points ----------------------------------------------------------------------------

#: (sys.path snapshot) -> kind -> entry points sorted by name
_entry_point_cache: dict[tuple[str, ...], dict[str, list[EntryPoint]]] = {}


def _entry_points(kind: str) -> list[EntryPoint]:
    """The entry points of one kind, by name; scanned once per ``sys.path`` state.

    The standard library's ``importlib.metadata`` reads them (Python 3.10+ has all we use):
    importing the ``importlib_metadata`` backport installs a second metadata finder, whose
    adapter parses every later ``version()`` call's metadata with ``email.policy`` (DuckDB
    asks for its own version on import). One scan serves every group: a scan reads every
    installed distribution's ``entry_points.txt``. Both together: ~13 ms off every run.
    """
    key = tuple(sys.path)
    by_kind = _entry_point_cache.get(key)
    if by_kind is None:
        _entry_point_cache.clear()
        installed = importlib.metadata.entry_points()
        by_kind = {}
        for each_kind, group in GROUPS.items():
            seen: dict[str, EntryPoint] = {}
            for entry_point in installed.select(group=group):
                seen.setdefault(entry_point.name, entry_point)
            by_kind[each_kind] = sorted(seen.values(), key=lambda ep: ep.name)
        _entry_point_cache[key] = by_kind
    return by_kind[kind]


def _entry_point(kind: str, name: str) -> EntryPoint | None:
    for entry_point in _entry_points(kind):
        if entry_point.name == name:
            return entry_point
    return None


def plugin_names(kind: str) -> list[str]:
    """Short names of the installed plugins of one kind (entry-point names)."""
    return [entry_point.name for entry_point in _entry_points(kind)]


def clear_cache() -> None:
    """Forget scanned entry points (needed only after installing into a live ``sys.path``)."""
    _entry_point_cache.clear()
    importlib.invalidate_caches()


def list_plugins() -> list[PluginInfo]:
    """Every installed plugin of every kind, from package metadata (no plugin is imported)."""
    infos = []
    for kind in GROUPS:
        for entry_point in _entry_points(kind):
            dist = entry_point.dist
            infos.append(
                PluginInfo(
                    kind=kind,
                    name=entry_point.name,
                    module=entry_point.value,
                    distribution=dist.name if dist is not None else None,
                    version=dist.version if dist is not None else None,
                )
            )
    return infos


# --- loading and calling ---------------------------------------------------------------------

_manager: pluggy.PluginManager | None = None
#: what `_call_own_hook` returns for a plugin that does not implement the hook
_NO_HOOK: Final = object()


def _plugin_manager() -> pluggy.PluginManager:
    global _manager
    if _manager is None:
        _manager = pluggy.PluginManager(hookspecs.PROJECT)
        _manager.add_hookspecs(hookspecs)
    return _manager


def _import_module_path(kind: str, module_name: str) -> ModuleType:
    try:
        return importlib.import_module(module_name)
    except Exception as error:
        raise PluginImportError(kind, module_name, error) from error


def _is_top_level_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def load_plugin(kind: str, name: str) -> object:
    """Return the plugin object (a module) named ``name``: module path or entry-point name."""
    if kind not in GROUPS:
        raise ValueError(f"unknown plugin kind {kind!r}; one of {', '.join(GROUPS)}")
    if "." in name:
        return _import_module_path(kind, name)
    entry_point = _entry_point(kind, name)
    if entry_point is None and kind != "destinations" and _is_top_level_module(name):
        # dlt's custom naming convention beside the script: ``naming = "my_naming"``
        return _import_module_path(kind, name)
    if entry_point is None:
        if kind == "destinations":
            raise UnknownDestination(name, plugin_names(kind))
        raise UnknownPluginError(kind, name, plugin_names(kind))
    try:
        return entry_point.load()
    except Exception as error:
        raise PluginImportError(kind, entry_point.value, error) from error


def _plugin_label(plugin: object) -> str:
    return getattr(plugin, "__name__", None) or repr(plugin)


def _register(kind: str, plugin: object) -> pluggy.PluginManager:
    """Register ``plugin`` once; a hook it implements but the specs lack is an error."""
    manager = _plugin_manager()
    if manager.is_registered(plugin):
        return manager
    try:
        manager.register(plugin, name=f"{_plugin_label(plugin)}@{id(plugin)}")
        manager.check_pending()
    except pluggy.PluginValidationError as error:
        if manager.is_registered(plugin):
            manager.unregister(plugin)
        raise PluginContractError(kind, _plugin_label(plugin), f"is not valid: {error}") from error
    return manager


def _implements(manager: pluggy.PluginManager, plugin: object, hook_name: str) -> bool:
    caller = getattr(manager.hook, hook_name)
    return any(impl.plugin is plugin for impl in caller.get_hookimpls())


def _call_own_hook(kind: str, plugin: object) -> object:
    """Call ``plugin``'s hook of ``kind`` (and no other plugin's); ``_NO_HOOK`` if it has none."""
    manager = _register(kind, plugin)
    hook_name = HOOKS[kind]
    if not _implements(manager, plugin, hook_name):
        return _NO_HOOK
    others = [other for other in manager.get_plugins() if other is not plugin]
    try:
        results = manager.subset_hook_caller(hook_name, remove_plugins=others)()
    except LoadstoneError:
        raise
    except Exception as error:
        raise PluginContractError(
            kind, _plugin_label(plugin), f"failed in `{hook_name}`: {type(error).__name__}: {error}"
        ) from error
    return results[0] if results else None


def _missing_hook(kind: str, plugin: object, alternative: str = "") -> PluginContractError:
    hook_name = HOOKS[kind]
    problem = f"does not implement the hook `{hook_name}`"
    if callable(getattr(plugin, hook_name, None)):
        problem += " (the function is there: mark it with `@loadstone.hookimpl`)"
    return PluginContractError(kind, _plugin_label(plugin), problem + alternative)


# --- naming ----------------------------------------------------------------------------------


def _naming_class_of(plugin: object) -> type[NamingConvention]:
    provided = _call_own_hook("naming", plugin)
    label = _plugin_label(plugin)
    if provided is _NO_HOOK:
        provided = getattr(plugin, "NamingConvention", None)
        if provided is None:
            raise _missing_hook(
                "naming", plugin, " and has no class `NamingConvention` (the dlt layout)"
            )
    return _checked_naming_class(provided, label)


def _checked_naming_class(provided: object, label: str) -> type[NamingConvention]:
    """Accept a class that behaves as a naming convention (duck-typed, like dlt's modules)."""
    if not isinstance(provided, type) or not callable(
        getattr(provided, "normalize_identifier", None)
    ):
        raise PluginContractError(
            "naming",
            label,
            f"provides {provided!r}, which is not a naming convention class "
            "(a subclass of loadstone.naming.NamingConvention)",
        )
    return provided


def naming_convention_class(name: str | ModuleType | type) -> type[NamingConvention]:
    """The naming convention class named ``name`` (short name or module path).

    A module object or a class is accepted too (tests, and code that already holds one).
    """
    if isinstance(name, type):
        return _checked_naming_class(name, f"{name.__module__}.{name.__qualname__}")
    plugin = name if isinstance(name, ModuleType) else load_plugin("naming", name)
    return _naming_class_of(plugin)


def naming_convention(
    name: str | ModuleType | type | None = None, max_length: int | None = None
) -> NamingConvention:
    """An instance of the naming convention ``name``, or of the configured one when None.

    ``None`` resolves the name with :func:`loadstone.config.resolve_naming` (env
    ``SCHEMA__NAMING``, ``[schema] naming`` in config.toml, else ``snake_case``).
    """
    if name is not None:
        return naming_convention_class(name)(max_length=max_length)
    found = config.locate_naming()
    try:
        convention_class = naming_convention_class(found.value)
    except (UnknownPluginError, PluginImportError, PluginContractError) as error:
        error.args = (f"{error.args[0]} (the name comes from {found.origin})",)
        raise
    return convention_class(max_length=max_length)


# --- normalizers -----------------------------------------------------------------------------


def get_normalizer(name: str) -> NormalizerPlugin:
    """The normalizer named ``name`` (short name or module path)."""
    plugin = load_plugin("normalizers", name)
    normalizer = _call_own_hook("normalizers", plugin)
    if normalizer is _NO_HOOK:
        raise _missing_hook("normalizers", plugin)
    if not isinstance(normalizer, NormalizerPlugin):
        raise PluginContractError(
            "normalizers",
            _plugin_label(plugin),
            f"returned {normalizer!r}, which has no `normalize(package, schema, context)`",
        )
    return normalizer


# --- destinations ----------------------------------------------------------------------------


def _destinations_of(plugin: object) -> list[DestinationPlugin]:
    provided = _call_own_hook("destinations", plugin)
    if provided is _NO_HOOK:
        raise _missing_hook("destinations", plugin)
    if provided is None or isinstance(provided, str | bytes):
        provided = [provided]
    # anything else is taken as the list of destinations (list() says when it is not one)
    destinations = list(cast("Iterable[object]", provided))
    for destination in destinations:
        if not isinstance(getattr(destination, "name", None), str):
            raise PluginContractError(
                "destinations",
                _plugin_label(plugin),
                f"returned {destination!r}, which is not a Destination (it has no `.name`)",
            )
    # checked as far as a plugin's object is (duck-typed, like dlt's destinations)
    return cast("list[DestinationPlugin]", destinations)


def _has_loader(destination: DestinationPlugin) -> bool:
    return destination.client_class is not None


def _all_destinations() -> tuple[dict[str, DestinationPlugin], dict[str, LoadstoneError]]:
    """Every destination of every plugin, by name, with duplicates settled; and the failures.

    When several plugins declare the same name, the plugin whose entry-point name *is* that
    name wins (``duckdb`` comes from the ``duckdb`` plugin, not from the capability
    ``profiles``); then a destination with a loader beats a profile without one; then the
    first plugin in entry-point name order. A plugin that fails to load does not hide the
    destinations of the others: its error is returned beside them (entry-point name -> error).
    """
    chosen: dict[str, tuple[tuple[bool, bool], DestinationPlugin]] = {}
    failures: dict[str, LoadstoneError] = {}
    for entry_point in _entry_points("destinations"):
        try:
            declared = _destinations_of(load_plugin("destinations", entry_point.name))
        except (PluginImportError, PluginContractError) as error:
            failures[entry_point.name] = error
            continue
        for destination in declared:
            rank = (entry_point.name == destination.name, _has_loader(destination))
            current = chosen.get(destination.name)
            if current is None or rank > current[0]:
                chosen[destination.name] = (rank, destination)
    return {name: chosen[name][1] for name in sorted(chosen)}, failures


def destination_names() -> list[str]:
    """Names of every destination the installed destination plugins declare.

    A destination plugin that fails to load is left out with a warning that says why.
    """
    destinations, failures = _all_destinations()
    for error in failures.values():
        warnings.warn(f"destination plugin left out: {error}", RuntimeWarning, stacklevel=2)
    return list(destinations)


def get_destination(name: str) -> DestinationPlugin:
    """The destination named ``name``, or the one destination of the module path ``name``.

    The plugin whose entry-point name is ``name`` is asked first, so asking for ``duckdb``
    imports only that plugin; otherwise every destination plugin is consulted.
    """
    if "." in name:
        plugin = load_plugin("destinations", name)
        destinations = _destinations_of(plugin)
        if len(destinations) != 1:
            raise PluginContractError(
                "destinations",
                name,
                "declares "
                f"{len(destinations)} destinations ({_names(destinations)}); a module named as "
                "a destination must declare exactly one",
            )
        return destinations[0]
    if _entry_point("destinations", name) is not None:
        for destination in _destinations_of(load_plugin("destinations", name)):
            if destination.name == name:
                return destination
    by_name, failures = _all_destinations()
    if name in by_name:
        return by_name[name]
    raise UnknownDestination(name, list(by_name), failures.values())


def _names(objects: Iterable[object]) -> str:
    return ", ".join(str(getattr(each, "name", each)) for each in objects) or "none"
