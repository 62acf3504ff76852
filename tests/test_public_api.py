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
    "TCredentials": ("loadstone.config_specs", "CredentialsConfiguration"),
    "common": ("loadstone.common", None),
    "extract": ("loadstone.extract", None),
    "normalize": ("loadstone.normalize", None),
    "load": ("loadstone.load", None),
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
    "JSONPathError": ("loadstone.exceptions", "JSONPathError"),
    "LoadFailed": ("loadstone.exceptions", "LoadFailed"),
    "LoadPackageError": ("loadstone.exceptions", "LoadPackageError"),
    "LoadRefused": ("loadstone.exceptions", "LoadRefused"),
    "LoadstoneError": ("loadstone.exceptions", "LoadstoneError"),
    "SourceSectionNotAvailable": ("loadstone.exceptions", "SourceSectionNotAvailable"),
    "ResourceNameNotAvailable": ("loadstone.exceptions", "ResourceNameNotAvailable"),
    "CurrentSourceSchemaNotAvailable": ("loadstone.exceptions", "CurrentSourceSchemaNotAvailable"),
    "CurrentSourceNotAvailable": ("loadstone.exceptions", "CurrentSourceNotAvailable"),
    "MissingLoadFile": ("loadstone.exceptions", "MissingLoadFile"),
    "MissingDependencyException": ("loadstone.exceptions", "MissingDependencyException"),
    "InvalidTableName": ("loadstone.exceptions", "InvalidTableName"),
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
