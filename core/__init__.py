"""loadstone: load messy, nested JSON into clean relational tables, normalized on Spark.

This module is the table of contents of the public API. Names are imported on first use, so
``import loadstone`` stays cheap (no Spark, no DuckDB) and a CLI call that lists plugins does
not start a JVM. The API mirrors dlt's, so ``import loadstone as dlt`` runs dlt-style code.

Pipelines
    pipeline, run, attach, Pipeline, LoadInfo, PipelineStepFailed
Sources and resources
    resource, transformer, source, sources (``sources.incremental``), mark, current,
    secrets / config (``secrets.value`` arguments read from configuration)
Schema
    Schema, SchemaContract
Naming conventions and plugins
    naming_convention, NamingConvention, hookimpl
Destinations
    destinations (factories: ``loadstone.destinations.duckdb("file.duckdb")``), Destination,
    Capabilities, DestinationNotSupported
Configuration
    config (the resolver and its typed accessors)
Errors
    LoadstoneError (every error derives from it), UnknownPluginError, ConfigFileError
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: public name -> (module, attribute); attribute None means the module itself.
_EXPORTS: dict[str, tuple[str, str | None]] = {
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

__all__ = ["__version__", *_EXPORTS]

if TYPE_CHECKING:
    from loadstone import config, current, destinations, sources
    from loadstone.config import ConfigFileError
    from loadstone.destinations.contract import Capabilities, Destination, DestinationNotSupported
    from loadstone.errors import LoadstoneError
    from loadstone.extract import mark
    from loadstone.extract.injection import secrets
    from loadstone.extract.sources import resource, source, transformer
    from loadstone.hookspecs import hookimpl
    from loadstone.naming import NamingConvention
    from loadstone.pipelines.load_info import LoadInfo
    from loadstone.pipelines.pipeline import Pipeline, PipelineStepFailed, attach, pipeline, run
    from loadstone.plugin_manager import UnknownPluginError, naming_convention
    from loadstone.schema import Schema
    from loadstone.schema.contracts import SchemaContract


def __getattr__(name: str) -> Any:
    try:
        module_name, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'loadstone' has no attribute {name!r}") from None
    module = importlib.import_module(module_name)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
