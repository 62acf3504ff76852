"""Where a pipeline's steps send data: one destination, one dataset, one pipeline name.

Every step that talks to the destination (extract for ``refresh=``, normalize for the naming
convention and capabilities, load, the sync after a lost folder) needs the same three facts
and the same rules on top of them: which naming convention a schema gets, how a client is
opened, where the data lives. They are spelled once here, so that a step is given a
:class:`DestinationTarget` instead of the whole pipeline.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, cast
from urllib.parse import urlsplit, urlunsplit

import attrs

from loadstone import config
from loadstone.destinations.contract import Capabilities, Destination, DestinationClient
from loadstone.schema import Schema

if TYPE_CHECKING:
    from loadstone.naming import NamingConvention

__all__ = [
    "DEFAULT_DESTINATION",
    "DestinationTarget",
    "new_schema",
    "normalized_dataset_name",
    "resolve_destination",
    "without_password",
]

DEFAULT_DESTINATION = "duckdb"


def resolve_destination(destination: object) -> Destination:
    """A destination given by name (a plugin's) or as an object; None is the default."""
    from loadstone.exceptions import PipelineConfigError

    if destination is None:
        destination = DEFAULT_DESTINATION
    if isinstance(destination, str):
        return _named_destination(destination)
    if isinstance(destination, Destination):
        return destination
    raise PipelineConfigError(
        f"destination must be a name (e.g. 'duckdb') or a destination object, got {destination!r}"
    )


def _named_destination(name: str) -> Destination:
    """A plugin's destination by name, or dlt's named destination: ``destination="my_pg"``
    with ``[destination.my_pg] destination_type = "postgres"`` is a postgres destination
    named ``my_pg`` (its credentials and settings under ``[destination.my_pg]``)."""
    from loadstone.exceptions import UnknownDestination
    from loadstone.plugin_manager import get_destination

    try:
        # the plugin manager checks a destination as far as its name (named by protocol)
        return cast(Destination, get_destination(name))
    except UnknownDestination:
        kind = config.get_str(f"destination.{name}.destination_type", "")
        if not kind or kind == name:
            raise
    return attrs.evolve(cast(Destination, get_destination(kind)), name=name)


def normalized_dataset_name(
    destination: Destination, name: str, naming: Callable[[], NamingConvention]
) -> str:
    """A dataset name through the naming convention, unless configuration switches that off
    (``destination[.<name>].enable_dataset_name_normalization``, as dlt)."""
    keys = [
        f"destination.{destination.name}.enable_dataset_name_normalization",
        "destination.enable_dataset_name_normalization",
    ]
    if not config.get_bool(keys, True):
        return name
    return naming().normalize_table_identifier(name)


def new_schema(name: str, naming: str | None) -> Schema:
    """A new, empty schema (with the default convention when ``naming`` is None)."""
    return Schema(name) if naming is None else Schema(name, naming=naming)


def _schema_naming_name(schema: Schema) -> str | None:
    """The naming convention a schema fixes: any it names once it has data tables, else a
    non-default one (``Schema(naming=...)`` in code). None leaves the choice to config and
    the destination's preference.
    """
    name = schema.naming_name
    if schema.data_tables(include_incomplete=True) or name != "snake_case":
        return name
    return None


def _naming_configured(source_name: str | None) -> bool:
    """True when configuration (env or config.toml) names a convention for this source."""
    candidates: list[tuple[str, ...]] = [("schema", "naming")]
    if source_name:
        candidates.insert(0, ("sources", source_name, "schema", "naming"))
    return config.resolve(*candidates, default=None) is not None


def without_password(location: str) -> str:
    """A connection string as dlt shows it: ``postgresql://user:***@host:5432/db``."""
    parts = urlsplit(location)
    if "://" not in location or parts.password is None:
        return location
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{parts.username}:***@{host}"))


@attrs.frozen
class DestinationTarget:
    """A destination and the dataset a pipeline loads into.

    ``dataset`` is asked for the dataset's name in the destination each time it is needed: the
    pipeline names it lazily (it depends on the default schema's naming convention, which an
    extract may set). ``given_dataset`` is the name as the user gave it, which dlt keeps in
    the state and shows as ``pipeline.dataset_name``; by default the same.
    """

    destination: Destination
    pipeline_name: str
    dataset: Callable[[], str]
    given_dataset: Callable[[], str] | None = None

    @property
    def dataset_name(self) -> str:
        return self.dataset()

    @property
    def given_dataset_name(self) -> str:
        return self.given_dataset() if self.given_dataset is not None else self.dataset()

    @property
    def capabilities(self) -> Capabilities:
        return self.destination.capabilities

    def client(self, schema: Schema | None) -> DestinationClient:
        """A client on the dataset (a context manager)."""
        naming = self.naming_for(schema) if schema is not None else None
        return self.destination.client(
            schema, self.dataset_name, pipeline_name=self.pipeline_name, naming=naming
        )

    # -- naming ---------------------------------------------------------------------------
    def naming_name(self, source_name: str | None, schema: Schema | None) -> str:
        """Code (the destination factory) first, then configuration, then the schema's own
        convention (a schema keeps the one it was created with), then the destination's."""
        explicit = self.destination.naming_convention
        if explicit is None and schema is not None and not _naming_configured(source_name):
            explicit = _schema_naming_name(schema)
        return config.resolve_naming(
            source_name,
            explicit=explicit,
            destination_preferred=self.capabilities.preferred_naming,
        )

    def naming_for(self, schema: Schema) -> NamingConvention:
        """The schema's naming convention sized to the destination's identifier limits."""
        from loadstone.plugin_manager import naming_convention

        name = self.naming_name(schema.name, schema)
        return naming_convention(name, max_length=self.capabilities.max_identifier_length)

    def new_schema(self, name: str, source_name: str | None) -> Schema:
        """An empty schema named ``name`` with the convention resolved for ``source_name``."""
        return new_schema(name, self.naming_name(source_name, None))

    # -- where the data lives -------------------------------------------------------------
    def location(self) -> str | None:
        """The destination's location as dlt's load info shows it (no password): where the
        loader says it keeps the data (a DuckDB file), else the credentials given as text."""
        stored = self.destination.stored_at(self.pipeline_name)
        if stored is not None:
            return stored.location
        shown = self.destination.shown_location()
        if shown is not None:
            return shown
        credentials = self.destination.config.get("credentials")
        if isinstance(credentials, (str, Path)):
            return without_password(str(credentials))
        return None

    def reachable(self) -> bool:
        """False where nothing can be stored yet (a DuckDB file that does not exist: asking
        it would create it)."""
        stored = self.destination.stored_at(self.pipeline_name)
        return stored is None or stored.exists
