"""loadstone: load messy, nested JSON into clean relational tables, normalized on Spark.

This module is the table of contents of the public API. Names are imported on first use, so
``import loadstone`` stays cheap (no Spark, no DuckDB) and a CLI call that lists plugins does
not start a JVM. The API mirrors dlt's, so ``import loadstone as dlt`` runs dlt-style code.

Pipelines
    pipeline, run, attach, Pipeline, LoadInfo, PipelineStepFailed
Sources and resources
    resource, transformer, source, defer, sources (``sources.incremental``), mark, current,
    secrets / config (``secrets.value`` arguments read from configuration)
Schema
    Schema, SchemaContract
Naming conventions and plugins
    naming_convention, NamingConvention, hookimpl
Destinations
    destinations (factories: ``loadstone.destinations.duckdb("file.duckdb")``), Destination,
    Capabilities, DestinationNotSupported, destination (a sink function as a destination)
Configuration
    config (the resolver and its typed accessors; ``config["a.b"]`` reads, sets and tests
    a key as dlt's), TSecretValue, TSecretStrValue
Reading loaded data
    Dataset, Relation (``pipeline.dataset()``), dataset (a dataset without a pipeline)
Version
    version (``version.__version__``)
dlt's import paths (``docs/migrating.md``, "Import paths")
    common (``loadstone.common.pendulum``, ``.typing``, ``.schema`` ...), extract, normalize,
    load, TCredentials (``loadstone.config_specs.CredentialsConfiguration``)
Errors
    every public error class (``loadstone.exceptions``), each derived from LoadstoneError
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from loadstone import current as _current
from loadstone.version import __version__

#: public name -> (module, attribute); attribute None means the module itself.
_EXPORTS: dict[str, tuple[str, str | None]] = {
    "pipeline": ("loadstone.pipelines.pipeline", "pipeline"),
    "Pipeline": ("loadstone.pipelines.pipeline", "Pipeline"),
    "LoadInfo": ("loadstone.runtime.load_info", "LoadInfo"),
    "attach": ("loadstone.pipelines.pipeline", "attach"),
    "run": ("loadstone.pipelines.pipeline", "run"),
    "resource": ("loadstone.extract.decorators", "resource"),
    "transformer": ("loadstone.extract.decorators", "transformer"),
    "sources": ("loadstone.sources", None),
    "mark": ("loadstone.extract.mark", None),
    "secrets": ("loadstone.extract.injection", "secrets"),
    "source": ("loadstone.extract.decorators", "source"),
    "defer": ("loadstone.extract.deferred", "defer"),
    "current": ("loadstone.current", None),
    "Schema": ("loadstone.schema", "Schema"),
    "SchemaContract": ("loadstone.schema.contracts", "SchemaContract"),
    "naming_convention": ("loadstone.plugin_manager", "naming_convention"),
    "NamingConvention": ("loadstone.naming", "NamingConvention"),
    "hookimpl": ("loadstone.hookspecs", "hookimpl"),
    "destinations": ("loadstone.destinations", None),
    "destination": ("loadstone.destinations.custom", "destination"),
    "Destination": ("loadstone.destinations.contract", "Destination"),
    "Capabilities": ("loadstone.destinations.contract", "Capabilities"),
    "config": ("loadstone.config", None),
    "TSecretValue": ("loadstone.config", "TSecretValue"),
    "TSecretStrValue": ("loadstone.config", "TSecretStrValue"),
    "Dataset": ("loadstone.destinations.dataset", "Dataset"),
    "Relation": ("loadstone.destinations.dataset", "Relation"),
    "dataset": ("loadstone.dataset_access", "dataset"),
    "version": ("loadstone.version", None),
    # dlt's import paths (docs/migrating.md, "Import paths")
    "TCredentials": ("loadstone.config_specs", "CredentialsConfiguration"),
    "common": ("loadstone.common", None),
    "extract": ("loadstone.extract", None),
    "normalize": ("loadstone.normalize", None),
    "load": ("loadstone.load", None),
    # every public error (loadstone.exceptions)
    "ArgumentsOverloadException": ("loadstone.exceptions", "ArgumentsOverloadException"),
    "ArrowDataError": ("loadstone.exceptions", "ArrowDataError"),
    "AuthError": ("loadstone.exceptions", "AuthError"),
    "BadRecordError": ("loadstone.exceptions", "BadRecordError"),
    "CannotCoerceNullException": ("loadstone.exceptions", "CannotCoerceNullException"),
    "CannotRestorePipelineException": ("loadstone.exceptions", "CannotRestorePipelineException"),
    "CoercionError": ("loadstone.exceptions", "CoercionError"),
    "ConfigFieldMissingException": ("loadstone.exceptions", "ConfigFieldMissingException"),
    "ConfigFileError": ("loadstone.exceptions", "ConfigFileError"),
    "ConfigValueCannotBeCoercedException": (
        "loadstone.exceptions",
        "ConfigValueCannotBeCoercedException",
    ),
    "ConfigValueError": ("loadstone.exceptions", "ConfigValueError"),
    "ContractViolation": ("loadstone.exceptions", "ContractViolation"),
    "CorruptFileError": ("loadstone.exceptions", "CorruptFileError"),
    "DamagedCopyError": ("loadstone.exceptions", "DamagedCopyError"),
    "DataValidationError": ("loadstone.exceptions", "DataValidationError"),
    "DatabaseTerminalError": ("loadstone.exceptions", "DatabaseTerminalError"),
    "DatabaseTransientError": ("loadstone.exceptions", "DatabaseTransientError"),
    "DatabaseUndefinedRelation": ("loadstone.exceptions", "DatabaseUndefinedRelation"),
    "DatasetError": ("loadstone.exceptions", "DatasetError"),
    "SqlClientNotAvailable": ("loadstone.exceptions", "SqlClientNotAvailable"),
    "DestinationError": ("loadstone.exceptions", "DestinationError"),
    "DestinationNotSupported": ("loadstone.exceptions", "DestinationNotSupported"),
    "LoaderFileFormatNotSupported": ("loadstone.exceptions", "LoaderFileFormatNotSupported"),
    "UnknownDestination": ("loadstone.exceptions", "UnknownDestination"),
    "TableNotInDataset": ("loadstone.exceptions", "TableNotInDataset"),
    "TableAttributeNotInDataset": ("loadstone.exceptions", "TableAttributeNotInDataset"),
    "DestinationSchemaMismatch": ("loadstone.exceptions", "DestinationSchemaMismatch"),
    "DuckDBConnectionError": ("loadstone.exceptions", "DuckDBConnectionError"),
    "ExtractError": ("loadstone.exceptions", "ExtractError"),
    "FileReadError": ("loadstone.exceptions", "FileReadError"),
    "FilesystemConfigError": ("loadstone.exceptions", "FilesystemConfigError"),
    "FilesystemError": ("loadstone.exceptions", "FilesystemError"),
    "HTTPStatusError": ("loadstone.exceptions", "HTTPStatusError"),
    "IdentifierCollisionError": ("loadstone.exceptions", "IdentifierCollisionError"),
    "IgnoreResponseException": ("loadstone.exceptions", "IgnoreResponseException"),
    "InMemoryCatalog": ("loadstone.exceptions", "InMemoryCatalog"),
    "DestinationLoadingViaStagingNotSupported": (
        "loadstone.exceptions",
        "DestinationLoadingViaStagingNotSupported",
    ),
    "DestinationNoStagingMode": ("loadstone.exceptions", "DestinationNoStagingMode"),
    "ExternalSchedulerNotAvailable": ("loadstone.exceptions", "ExternalSchedulerNotAvailable"),
    "JoinSchedulerError": ("loadstone.exceptions", "JoinSchedulerError"),
    "InconsistentTableTemplate": ("loadstone.exceptions", "InconsistentTableTemplate"),
    "CreatePipeException": ("loadstone.exceptions", "CreatePipeException"),
    "InvalidResourceData": ("loadstone.exceptions", "InvalidResourceData"),
    "ParametrizedResourceUnbound": ("loadstone.exceptions", "ParametrizedResourceUnbound"),
    "ResourceNameMissing": ("loadstone.exceptions", "ResourceNameMissing"),
    "DataItemRequiredForDynamicTableHints": (
        "loadstone.exceptions",
        "DataItemRequiredForDynamicTableHints",
    ),
    "ResourcesNotFoundError": ("loadstone.exceptions", "ResourcesNotFoundError"),
    "SourceExhausted": ("loadstone.exceptions", "SourceExhausted"),
    "ResourceNotCallable": ("loadstone.exceptions", "ResourceNotCallable"),
    "IncrementalCursorInvalidCoercion": (
        "loadstone.exceptions",
        "IncrementalCursorInvalidCoercion",
    ),
    "IncrementalCursorPathHasValueNone": (
        "loadstone.exceptions",
        "IncrementalCursorPathHasValueNone",
    ),
    "IncrementalCursorPathMissing": ("loadstone.exceptions", "IncrementalCursorPathMissing"),
    "InputError": ("loadstone.exceptions", "InputError"),
    "InvalidConnectionString": ("loadstone.exceptions", "InvalidConnectionString"),
    "InvalidIdentifierError": ("loadstone.exceptions", "InvalidIdentifierError"),
    "InvalidMaxLengthError": ("loadstone.exceptions", "InvalidMaxLengthError"),
    "InvalidPrecisionError": ("loadstone.exceptions", "InvalidPrecisionError"),
    "InvalidRowGroupSize": ("loadstone.exceptions", "InvalidRowGroupSize"),
    "InvalidSchemaError": ("loadstone.exceptions", "InvalidSchemaError"),
    "InvalidTableName": ("loadstone.exceptions", "InvalidTableName"),
    "JSONPathError": ("loadstone.exceptions", "JSONPathError"),
    "LoadFailed": ("loadstone.exceptions", "LoadFailed"),
    "LoadPackageError": ("loadstone.exceptions", "LoadPackageError"),
    "LoadRefused": ("loadstone.exceptions", "LoadRefused"),
    "LoadstoneError": ("loadstone.exceptions", "LoadstoneError"),
    "SourceSectionNotAvailable": ("loadstone.exceptions", "SourceSectionNotAvailable"),
    "ResourceNameNotAvailable": ("loadstone.exceptions", "ResourceNameNotAvailable"),
    "CurrentSourceSchemaNotAvailable": ("loadstone.exceptions", "CurrentSourceSchemaNotAvailable"),
    "CurrentSourceNotAvailable": ("loadstone.exceptions", "CurrentSourceNotAvailable"),
    "MissingDependencyException": ("loadstone.exceptions", "MissingDependencyException"),
    "MissingLoadFile": ("loadstone.exceptions", "MissingLoadFile"),
    "NamingChangeError": ("loadstone.exceptions", "NamingChangeError"),
    "NoActiveContext": ("loadstone.exceptions", "NoActiveContext"),
    "NormalizeError": ("loadstone.exceptions", "NormalizeError"),
    "NormalizeJobFailed": ("loadstone.exceptions", "NormalizeJobFailed"),
    "PackageDataError": ("loadstone.exceptions", "PackageDataError"),
    "PackageIntegrityError": ("loadstone.exceptions", "PackageIntegrityError"),
    "PackageNotFound": ("loadstone.exceptions", "PackageNotFound"),
    "PackageStorageError": ("loadstone.exceptions", "PackageStorageError"),
    "PaginatorError": ("loadstone.exceptions", "PaginatorError"),
    "ParentFieldMissing": ("loadstone.exceptions", "ParentFieldMissing"),
    "PipelineConfigError": ("loadstone.exceptions", "PipelineConfigError"),
    "PipelineError": ("loadstone.exceptions", "PipelineError"),
    "PipelineLockedError": ("loadstone.exceptions", "PipelineLockedError"),
    "PipelineNotActive": ("loadstone.exceptions", "PipelineNotActive"),
    "PipelineNotFound": ("loadstone.exceptions", "PipelineNotFound"),
    "PipelineStateNotAvailable": ("loadstone.exceptions", "PipelineStateNotAvailable"),
    "PipelineStepFailed": ("loadstone.exceptions", "PipelineStepFailed"),
    "PluginContractError": ("loadstone.exceptions", "PluginContractError"),
    "PluginImportError": ("loadstone.exceptions", "PluginImportError"),
    "PostgresConnectionError": ("loadstone.exceptions", "PostgresConnectionError"),
    "PostgresCredentialsMissing": ("loadstone.exceptions", "PostgresCredentialsMissing"),
    "RESTClientError": ("loadstone.exceptions", "RESTClientError"),
    "RequestFailed": ("loadstone.exceptions", "RequestFailed"),
    "ResourceError": ("loadstone.exceptions", "ResourceError"),
    "ResourceExtractionError": ("loadstone.exceptions", "ResourceExtractionError"),
    "SchemaContractError": ("loadstone.exceptions", "SchemaContractError"),
    "SchemaFileError": ("loadstone.exceptions", "SchemaFileError"),
    "SparkTargetError": ("loadstone.exceptions", "SparkTargetError"),
    "SqlDatabaseError": ("loadstone.exceptions", "SqlDatabaseError"),
    "StorageError": ("loadstone.exceptions", "StorageError"),
    "TableNotFoundError": ("loadstone.exceptions", "TableNotFoundError"),
    "TablePropertiesConflictException": (
        "loadstone.exceptions",
        "TablePropertiesConflictException",
    ),
    "UnboundColumnException": ("loadstone.exceptions", "UnboundColumnException"),
    "UnknownDetectionError": ("loadstone.exceptions", "UnknownDetectionError"),
    "UnknownPluginError": ("loadstone.exceptions", "UnknownPluginError"),
    "UnsupportedType": ("loadstone.exceptions", "UnsupportedType"),
    "UnsupportedValueError": ("loadstone.exceptions", "UnsupportedValueError"),
    "UnsupportedWriteDisposition": ("loadstone.exceptions", "UnsupportedWriteDisposition"),
    "ValueDoesNotFit": ("loadstone.exceptions", "ValueDoesNotFit"),
    "ValueErrorWithKnownValues": ("loadstone.exceptions", "ValueErrorWithKnownValues"),
}

__all__ = ["__version__", *_EXPORTS]

if TYPE_CHECKING:
    from loadstone import (
        common,
        config,
        current,
        destinations,
        extract,
        load,
        normalize,
        sources,
        version,
    )
    from loadstone.config import TSecretStrValue, TSecretValue
    from loadstone.config_specs import CredentialsConfiguration as TCredentials
    from loadstone.dataset_access import dataset
    from loadstone.destinations.contract import Capabilities, Destination
    from loadstone.destinations.custom import destination
    from loadstone.destinations.dataset import Dataset, Relation
    from loadstone.exceptions import (
        ArgumentsOverloadException,
        ArrowDataError,
        AuthError,
        BadRecordError,
        CannotCoerceNullException,
        CannotRestorePipelineException,
        CoercionError,
        ConfigFieldMissingException,
        ConfigFileError,
        ConfigValueCannotBeCoercedException,
        ConfigValueError,
        ContractViolation,
        CorruptFileError,
        CreatePipeException,
        CurrentSourceNotAvailable,
        CurrentSourceSchemaNotAvailable,
        DamagedCopyError,
        DatabaseTerminalError,
        DatabaseTransientError,
        DatabaseUndefinedRelation,
        DataItemRequiredForDynamicTableHints,
        DatasetError,
        DataValidationError,
        DestinationError,
        DestinationLoadingViaStagingNotSupported,
        DestinationNoStagingMode,
        DestinationNotSupported,
        DestinationSchemaMismatch,
        DuckDBConnectionError,
        ExternalSchedulerNotAvailable,
        ExtractError,
        FileReadError,
        FilesystemConfigError,
        FilesystemError,
        HTTPStatusError,
        IdentifierCollisionError,
        IgnoreResponseException,
        InconsistentTableTemplate,
        IncrementalCursorInvalidCoercion,
        IncrementalCursorPathHasValueNone,
        IncrementalCursorPathMissing,
        InMemoryCatalog,
        InputError,
        InvalidConnectionString,
        InvalidIdentifierError,
        InvalidMaxLengthError,
        InvalidPrecisionError,
        InvalidResourceData,
        InvalidRowGroupSize,
        InvalidSchemaError,
        InvalidTableName,
        JoinSchedulerError,
        JSONPathError,
        LoaderFileFormatNotSupported,
        LoadFailed,
        LoadPackageError,
        LoadRefused,
        LoadstoneError,
        MissingDependencyException,
        MissingLoadFile,
        NamingChangeError,
        NoActiveContext,
        NormalizeError,
        NormalizeJobFailed,
        PackageDataError,
        PackageIntegrityError,
        PackageNotFound,
        PackageStorageError,
        PaginatorError,
        ParametrizedResourceUnbound,
        ParentFieldMissing,
        PipelineConfigError,
        PipelineError,
        PipelineLockedError,
        PipelineNotActive,
        PipelineNotFound,
        PipelineStateNotAvailable,
        PipelineStepFailed,
        PluginContractError,
        PluginImportError,
        PostgresConnectionError,
        PostgresCredentialsMissing,
        RequestFailed,
        ResourceError,
        ResourceExtractionError,
        ResourceNameMissing,
        ResourceNameNotAvailable,
        ResourceNotCallable,
        ResourcesNotFoundError,
        RESTClientError,
        SchemaContractError,
        SchemaFileError,
        SourceExhausted,
        SourceSectionNotAvailable,
        SparkTargetError,
        SqlClientNotAvailable,
        SqlDatabaseError,
        StorageError,
        TableAttributeNotInDataset,
        TableNotFoundError,
        TableNotInDataset,
        TablePropertiesConflictException,
        UnboundColumnException,
        UnknownDestination,
        UnknownDetectionError,
        UnknownPluginError,
        UnsupportedType,
        UnsupportedValueError,
        UnsupportedWriteDisposition,
        ValueDoesNotFit,
        ValueErrorWithKnownValues,
    )
    from loadstone.extract import mark
    from loadstone.extract.decorators import resource, source, transformer
    from loadstone.extract.deferred import defer
    from loadstone.extract.injection import secrets
    from loadstone.hookspecs import hookimpl
    from loadstone.naming import NamingConvention
    from loadstone.pipelines.pipeline import Pipeline, attach, pipeline, run
    from loadstone.plugin_manager import naming_convention
    from loadstone.runtime.load_info import LoadInfo
    from loadstone.schema import Schema
    from loadstone.schema.contracts import SchemaContract


def _default_pipeline() -> _current.RunningPipeline:
    """dlt's default pipeline, made by ``loadstone.current.pipeline()`` when none was made.

    Registered here, where every ``import loadstone...`` passes first: ``current`` lies
    below the pipeline and never imports it, and the pipeline module is imported only when
    a default pipeline is made.
    """
    from loadstone.pipelines.pipeline import pipeline

    return pipeline()


_current.make_default_pipeline_with(_default_pipeline)

# ``loadstone.pipeline`` is the function (the lazy table's), and also a package for dlt's
# ``from dlt.pipeline.exceptions import ...``: the package is imported now, and the attribute
# its import sets is taken back, so a later ``import loadstone.pipeline.exceptions`` (which
# finds the package imported) leaves the function in place.
importlib.import_module("loadstone.pipeline")
del globals()["pipeline"]


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
