"""Destination factories, dlt style: ``loadstone.destinations.duckdb("shop.duckdb")``.

Every destination a plugin declares gets a factory of the same name here, found through the
plugin manager on first use (the core imports no plugin by hand), so a third-party
destination is as reachable as ``duckdb``. A factory returns a configured
:class:`~loadstone.destinations.contract.Destination`; a profile-only destination (``snowflake``) is
returned too, and fails with ``DestinationNotSupported`` only when asked to load.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import attrs

from loadstone.destinations.contract import Destination


def factory(name: str) -> Callable[..., Destination]:
    """The factory of the destination ``name`` (raises ``UnknownPluginError`` if unknown)."""
    from loadstone.plugin_manager import get_destination

    # the plugin manager checks a destination as far as its name (named by protocol)
    base = cast(Destination, get_destination(name))

    def make(
        credentials: object = None,
        *,
        naming_convention: str | None = None,
        destination_name: str | None = None,
        **config: object,
    ) -> Destination:
        """A configured ``{name}`` destination.

        ``credentials``: for DuckDB a database path (``"shop.duckdb"``, ``"duckdb:///x.db"``,
        ``":memory:"``) or an open ``duckdb`` connection. ``naming_convention`` overrides the
        schema's convention for this destination; ``destination_name`` renames it.
        """
        configured = base.configured(
            naming_convention=naming_convention, credentials=credentials, **config
        )
        if destination_name:
            configured = attrs.evolve(configured, name=destination_name)
        return configured

    make.__name__ = make.__qualname__ = name
    make.__doc__ = (make.__doc__ or "").replace("{name}", name)
    return make


def duckdb(
    credentials: object = None,
    *,
    naming_convention: str | None = None,
    destination_name: str | None = None,
    **config: object,
) -> Destination:
    """The DuckDB destination: ``duckdb("shop.duckdb", naming_convention="sql_cs_v1")``.

    Without credentials the database is ``<pipeline_name>.duckdb`` in the working directory
    (or ``[destination.duckdb] credentials`` / ``DESTINATION__DUCKDB__CREDENTIALS``).
    """
    return factory("duckdb")(
        credentials,
        naming_convention=naming_convention,
        destination_name=destination_name,
        **config,
    )


def postgres(
    credentials: object = None,
    *,
    naming_convention: str | None = None,
    destination_name: str | None = None,
    **config: object,
) -> Destination:
    """The PostgreSQL destination: ``postgres("postgresql://user:pw@host:5432/db")``.

    ``credentials``: a connection string or a mapping of dlt's fields (``database``,
    ``username``, ``password``, ``host``, ``port``, ...); without it they come from
    ``[destination.postgres.credentials]`` or ``DESTINATION__POSTGRES__CREDENTIALS``.
    """
    return factory("postgres")(
        credentials,
        naming_convention=naming_convention,
        destination_name=destination_name,
        **config,
    )


def destination(
    destination_callable: Callable[..., object] | None = None,
    destination_name: str | None = None,
    environment: str | None = None,
    loader_file_format: str | None = None,
    batch_size: int = 10,
    naming_convention: str = "direct",
    spec: type | None = None,
    **kwargs: Any,
) -> Destination:
    """dlt's ``dlt.destinations.destination(func, destination_name=..., batch_size=...)``: the
    factory form of :func:`loadstone.destination` (a sink function as a destination).

    ``environment`` is accepted for dlt's signature; configuration is read under
    ``destination.<destination_name>``.
    """
    from loadstone.destinations.custom import sink_destination

    if destination_callable is None:
        raise TypeError("destinations.destination() needs the sink function (destination_callable)")
    return sink_destination(
        destination_callable,
        name=destination_name,
        batch_size=batch_size,
        loader_file_format=loader_file_format,
        naming_convention=naming_convention,
        spec=spec,
        **kwargs,
    )


def __getattr__(name: str) -> Callable[..., Destination]:
    if name.startswith("_"):
        raise AttributeError(name)
    from loadstone.exceptions import UnknownPluginError

    try:
        return factory(name)
    except UnknownPluginError as error:
        raise AttributeError(
            f"module 'loadstone.destinations' has no destination {name!r}: {error}"
        ) from None
