"""``loadstone.sources.rest_api``: dlt's declarative REST API source.

A config dict names the client (``base_url``, ``headers``, ``auth``, ``paginator``), defaults
for every resource and the resources (endpoints, parents, incremental cursors, hints);
``rest_api_source(config)`` makes a source of them, ``rest_api_resources(config)`` the list
of resources for a ``@loadstone.source`` of one's own (the way to read secrets from
configuration: ``def github(token=loadstone.secrets.value)``). See docs/sources/rest_api.md.
"""

from __future__ import annotations

from loadstone.extract.decorators import source
from loadstone.extract.resource import Resource
from loadstone.extract.source import Source
from loadstone.sources.rest_api.credentials import Scope
from loadstone.sources.rest_api.resources import build_resources
from loadstone.sources.rest_api.typing import (
    AuthConfig,
    ClientConfig,
    Endpoint,
    EndpointResource,
    EndpointResourceBase,
    IncrementalConfig,
    IncrementalParamConfig,
    ProcessingSteps,
    ResolveParamConfig,
    RESTAPIConfig,
)
from loadstone.typing import TSchemaContract


def rest_api_resources(config: RESTAPIConfig) -> list[Resource]:
    """The resources of ``config``, parents before their children as dlt orders them
    (children are transformers of parents)."""
    return build_resources(config)


def rest_api_source(
    config: RESTAPIConfig,
    name: str | None = None,
    section: str | None = None,
    max_table_nesting: int | None = None,
    root_key: bool | None = None,
    schema_contract: TSchemaContract | None = None,
    parallelized: bool = False,
    spec: object = None,
) -> Source:
    """A source named ``name`` (default ``rest_api``) of the config's resources;
    ``parallelized`` reads every resource on extract's thread pool (as dlt's); ``spec`` is
    accepted and has nothing to default (the config dict holds every setting)."""
    resources = build_resources(config, Scope(section or "rest_api", name or "rest_api"))

    def rest_api() -> list[Resource]:
        return resources

    factory = source(
        name=name or "rest_api",
        section=section,
        max_table_nesting=max_table_nesting,
        root_key=root_key,
        schema_contract=schema_contract,
        parallelized=parallelized,
    )(rest_api)
    made: Source = factory()
    return made


__all__ = [
    "AuthConfig",
    "ClientConfig",
    "Endpoint",
    "EndpointResource",
    "EndpointResourceBase",
    "IncrementalConfig",
    "IncrementalParamConfig",
    "ProcessingSteps",
    "RESTAPIConfig",
    "ResolveParamConfig",
    "rest_api_resources",
    "rest_api_source",
]
