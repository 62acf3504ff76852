"""Every error a user can meet, in one place: ``from loadstone.exceptions import ...``.

Each derives from :class:`LoadstoneError`, so ``except loadstone.LoadstoneError`` catches all of
them, and each is exported at the top level (``loadstone.PipelineStepFailed``). The messages
carry the context a user needs: the table, column, value, file or line involved. The code that
raises an error lives beside its step; the classes live in this package, one module per step
(``base``, ``configuration``, ``pipeline``, ``extract``, ``schema``, ``normalize``,
``destinations``, ``storage``, ``sources``), and users and plugins import them from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loadstone.exceptions.base import (
    LoadstoneError,
    PackageDataError,
)
from loadstone.exceptions.configuration import (
    ConfigFieldMissingException,
    ConfigFileError,
    ConfigValueError,
    CurrentSourceNotAvailable,
    CurrentSourceSchemaNotAvailable,
    InvalidConnectionString,
    MissingDependencyException,
    NoActiveContext,
    PluginContractError,
    PluginImportError,
    ResourceNameNotAvailable,
    SourceSectionNotAvailable,
    SparkTargetError,
    UnknownPluginError,
)
from loadstone.exceptions.destinations import (
    SUGGESTED_DESTINATION,
    DatabaseTerminalError,
    DatabaseTransientError,
    DatabaseUndefinedRelation,
    DatasetError,
    DestinationError,
    DestinationLoadingViaStagingNotSupported,
    DestinationNoStagingMode,
    DestinationNotSupported,
    DestinationSchemaMismatch,
    DuckDBConnectionError,
    FilesystemConfigError,
    InMemoryCatalog,
    InvalidRowGroupSize,
    LoaderFileFormatNotSupported,
    LoadFailed,
    LoadRefused,
    MissingLoadFile,
    PostgresConnectionError,
    PostgresCredentialsMissing,
    SqlClientNotAvailable,
    TableAttributeNotInDataset,
    TableNotInDataset,
    UnknownDestination,
    UnsupportedType,
    UnsupportedWriteDisposition,
)
from loadstone.exceptions.extract import (
    CreatePipeException,
    DataItemRequiredForDynamicTableHints,
    ExternalSchedulerNotAvailable,
    ExtractError,
    InconsistentTableTemplate,
    IncrementalCursorPathHasValueNone,
    IncrementalCursorPathMissing,
    InvalidTableName,
    JoinSchedulerError,
    ResourceError,
    ResourceExtractionError,
    ResourcesNotFoundError,
    ValueErrorWithKnownValues,
)
from loadstone.exceptions.normalize import (
    ArrowDataError,
    BadRecordError,
    CannotCoerceNullException,
    NormalizeError,
    NormalizeJobFailed,
    UnboundColumnException,
    ValueDoesNotFit,
)
from loadstone.exceptions.pipeline import (
    CannotRestorePipelineException,
    InputError,
    PackageNotFound,
    PipelineConfigError,
    PipelineError,
    PipelineNotActive,
    PipelineNotFound,
    PipelineStateNotAvailable,
    PipelineStepFailed,
)
from loadstone.exceptions.schema import (
    CoercionError,
    ContractViolation,
    DataValidationError,
    IdentifierCollisionError,
    InvalidIdentifierError,
    InvalidMaxLengthError,
    InvalidPrecisionError,
    InvalidSchemaError,
    NamingChangeError,
    SchemaContractError,
    SchemaFileError,
    TableNotFoundError,
    TablePropertiesConflictException,
    UnknownDetectionError,
    UnsupportedValueError,
)
from loadstone.exceptions.sources import (
    AuthError,
    FileReadError,
    IgnoreResponseException,
    JSONPathError,
    PaginatorError,
    ParentFieldMissing,
    RESTClientError,
    SqlDatabaseError,
)
from loadstone.exceptions.storage import (
    CorruptFileError,
    DamagedCopyError,
    FilesystemError,
    LoadPackageError,
    PackageIntegrityError,
    PackageStorageError,
    PipelineLockedError,
    StorageError,
)

if TYPE_CHECKING:
    from loadstone.exceptions.rest_client import HTTPStatusError, RequestFailed

__all__ = [
    "SUGGESTED_DESTINATION",
    "ArrowDataError",
    "AuthError",
    "BadRecordError",
    "CannotCoerceNullException",
    "CannotRestorePipelineException",
    "CoercionError",
    "ConfigFieldMissingException",
    "ConfigFileError",
    "ConfigValueError",
    "ContractViolation",
    "CorruptFileError",
    "CreatePipeException",
    "CurrentSourceNotAvailable",
    "CurrentSourceSchemaNotAvailable",
    "DamagedCopyError",
    "DataItemRequiredForDynamicTableHints",
    "DataValidationError",
    "DatabaseTerminalError",
    "DatabaseTransientError",
    "DatabaseUndefinedRelation",
    "DatasetError",
    "DestinationError",
    "DestinationLoadingViaStagingNotSupported",
    "DestinationNoStagingMode",
    "DestinationNotSupported",
    "DestinationSchemaMismatch",
    "DuckDBConnectionError",
    "ExternalSchedulerNotAvailable",
    "ExtractError",
    "FileReadError",
    "FilesystemConfigError",
    "FilesystemError",
    "HTTPStatusError",
    "IdentifierCollisionError",
    "IgnoreResponseException",
    "InMemoryCatalog",
    "InconsistentTableTemplate",
    "IncrementalCursorPathHasValueNone",
    "IncrementalCursorPathMissing",
    "InputError",
    "InvalidConnectionString",
    "InvalidIdentifierError",
    "InvalidMaxLengthError",
    "InvalidPrecisionError",
    "InvalidRowGroupSize",
    "InvalidSchemaError",
    "InvalidTableName",
    "JSONPathError",
    "JoinSchedulerError",
    "LoadFailed",
    "LoadPackageError",
    "LoadRefused",
    "LoaderFileFormatNotSupported",
    "LoadstoneError",
    "MissingDependencyException",
    "MissingLoadFile",
    "NamingChangeError",
    "NoActiveContext",
    "NormalizeError",
    "NormalizeJobFailed",
    "PackageDataError",
    "PackageIntegrityError",
    "PackageNotFound",
    "PackageStorageError",
    "PaginatorError",
    "ParentFieldMissing",
    "PipelineConfigError",
    "PipelineError",
    "PipelineLockedError",
    "PipelineNotActive",
    "PipelineNotFound",
    "PipelineStateNotAvailable",
    "PipelineStepFailed",
    "PluginContractError",
    "PluginImportError",
    "PostgresConnectionError",
    "PostgresCredentialsMissing",
    "RESTClientError",
    "RequestFailed",
    "ResourceError",
    "ResourceExtractionError",
    "ResourceNameNotAvailable",
    "ResourcesNotFoundError",
    "SchemaContractError",
    "SchemaFileError",
    "SourceSectionNotAvailable",
    "SparkTargetError",
    "SqlClientNotAvailable",
    "SqlDatabaseError",
    "StorageError",
    "TableAttributeNotInDataset",
    "TableNotFoundError",
    "TableNotInDataset",
    "TablePropertiesConflictException",
    "UnboundColumnException",
    "UnknownDestination",
    "UnknownDetectionError",
    "UnknownPluginError",
    "UnsupportedType",
    "UnsupportedValueError",
    "UnsupportedWriteDisposition",
    "ValueDoesNotFit",
    "ValueErrorWithKnownValues",
]

#: errors in a module of their own: the REST client's are also ``requests``' own errors (dlt
#: code catches those), and importing ``requests`` here would cost every ``import loadstone``
#: a tenth of a second. They are still found here, on first use.
_ELSEWHERE = {
    "RequestFailed": "loadstone.exceptions.rest_client",
    "HTTPStatusError": "loadstone.exceptions.rest_client",
}


def __getattr__(name: str) -> type[LoadstoneError]:
    if name not in _ELSEWHERE:
        raise AttributeError(f"module 'loadstone.exceptions' has no attribute {name!r}")
    import importlib

    error: type[LoadstoneError] = getattr(importlib.import_module(_ELSEWHERE[name]), name)
    return error
