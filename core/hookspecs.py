"""The plugin contract: one hook per plugin kind.

A plugin is a plain module (or any object) with functions marked ``@loadstone.hookimpl``.
It is found through an entry point in one of the groups ``loadstone.naming``,
``loadstone.normalizers``, ``loadstone.destinations``, or named by its fully qualified module
name. Each plugin module provides the one hook of its kind; the plugin manager calls the hook
of the plugin that was asked for, never of all plugins at once.

Built-in plugins use this same contract through the same entry points: the core never
imports a plugin by hand. ``docs/plugins.md`` walks through publishing one; ``loadstone
plugins`` lists what is installed and ``loadstone plugins check NAME`` checks a naming plugin.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import pluggy

if TYPE_CHECKING:
    from loadstone.naming import NamingConvention

PROJECT = "loadstone"


@runtime_checkable
class NormalizerPlugin(Protocol):
    """What the plugin manager checks of a normalizer: it has ``normalize``.

    The whole contract, with the types of the package, the schema and the result, is
    :class:`loadstone.normalizers.contract.Normalizer`. It is named here by protocol because
    the plugin manager sits below the schema (the schema finds its naming convention
    through it), so it cannot import what names the schema.
    """

    def normalize(self, package: Any, schema: Any, context: Any) -> Any: ...


class DestinationPlugin(Protocol):
    """What the plugin manager reads of a destination: its name and whether it loads.

    The whole contract is :class:`loadstone.destinations.contract.Destination` (named by
    protocol for the reason :class:`NormalizerPlugin` gives).
    """

    @property
    def name(self) -> str: ...

    @property
    def client_class(self) -> object: ...


hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def loadstone_naming_convention() -> type[NamingConvention]:
    """Return the naming convention class this plugin provides.

    The class subclasses :class:`loadstone.naming.NamingConvention` and is instantiated as
    ``cls(max_length=...)``. A module that has no hook but a class named
    ``NamingConvention`` (the layout dlt documents) is accepted as a naming plugin too.
    """


@hookspec
def loadstone_normalizer() -> NormalizerPlugin:
    """Return the normalizer this plugin provides (see ``loadstone.normalizers.contract``).

    The object has ``normalize(package, schema, context) -> NormalizeResult``: it reads the
    extracted files of a load package, writes one Parquet data set per table into the
    package, and returns the evolved schema with the row counts per table.
    """


@hookspec
def loadstone_destinations() -> list[DestinationPlugin]:
    """Return the destinations (``loadstone.destinations.contract.Destination``) this plugin provides.

    One plugin may provide several: a module of capability profiles describes many
    destinations that have no loader yet. Each is named by ``Destination.name``.
    """
