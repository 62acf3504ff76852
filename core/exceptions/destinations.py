"""Errors of destinations and their loaders, and of reading loaded data back."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from loadstone.exceptions.base import LoadstoneError, PackageDataError
from loadstone.exceptions.configuration import UnknownPluginError


class HasUrl(Protocol):
    """Credentials that can say where they point (the postgres plugin's
    ``PostgresCredentials``): named by protocol, as the core imports no plugin."""

    def url(self) -> str: ...


#: the destination an error suggests when none is available
SUGGESTED_DESTINATION = "duckdb"


class DestinationError(LoadstoneError):
    """Base class of errors raised by destinations and their loaders."""


class DestinationNotSupported(DestinationError):
    """The destination has a capability profile but no loader.

    Raised by :meth:`Destination.require_loader` (and ``client()``) so the pipeline stops
    before extracting or normalizing anything.
    """

    def __init__(self, name: str, available: Sequence[str] = ()) -> None:
        self.name = name
        self.available = list(available) or [SUGGESTED_DESTINATION]
        super().__init__(
            f"destination {name!r} has a capability profile but no loader yet; "
            f"available loaders: {', '.join(self.available)}"
        )


class UnknownDestination(UnknownPluginError, DestinationError):
    """No destination has this name (dlt 1.31's ``UnknownDestinationModule``, a lookup
    error); the message lists the destinations there are and how to add one."""

    def __init__(
        self, name: str, available: Sequence[str], broken: Iterable[BaseException] = ()
    ) -> None:
        super().__init__("destinations", name, available, broken)


class DestinationLoadingViaStagingNotSupported(DestinationError):
    """``staging=`` names a staging destination, but the destination does not load through
    one (dlt 1.31's error and message; raised before anything is extracted)."""

    def __init__(self, destination: str) -> None:
        self.destination = destination
        super().__init__(f"`destination={destination}` does not support loading via staging.")


class DestinationNoStagingMode(DestinationError):
    """``staging=`` names a destination that cannot hold staged files (dlt 1.31's error:
    only the filesystem destination can)."""

    def __init__(self, destination: str) -> None:
        self.destination = destination
        super().__init__(f"`destination={destination}` cannot be used as a staging")


class LoaderFileFormatNotSupported(DestinationError, ValueError):
    """``loader_file_format=`` names a format the destination does not load (dlt 1.31's
    ``DestinationIncompatibleLoaderFileFormatException``); raised before anything is
    extracted, so no package waits with files the destination cannot take."""

    def __init__(self, destination: str, file_format: str, supported: Sequence[str]) -> None:
        self.destination, self.file_format = destination, file_format
        self.supported = list(supported)
        super().__init__(
            f"destination {destination!r} does not load loader_file_format {file_format!r}: "
            f"it loads {', '.join(self.supported)}; nothing was extracted"
        )


class DestinationSchemaMismatch(DestinationError, PackageDataError):
    """A table already in the destination has a column whose type differs from the schema's."""

    def __init__(self, table: str, column: str, existing_type: str, expected_type: str) -> None:
        self.table = table
        self.column = column
        self.existing_type = existing_type
        self.expected_type = expected_type
        super().__init__(
            f"table {table!r} already exists with column {column!r} of type {existing_type}, "
            f"but the schema needs {expected_type}; change the column in the destination or "
            f"rename the incoming column"
        )


class LoadFailed(DestinationError):
    """Loading a package failed; the destination was rolled back (nothing of it is visible)."""

    def __init__(
        self, load_id: str, table: str | None, reason: str, files: Sequence[str] = ()
    ) -> None:
        self.load_id = load_id
        self.table = table
        self.reason = reason
        self.files = list(files)
        where = f" table {table!r}" if table else ""
        shown = f" (files: {', '.join(self.files[:3])}{' ...' if len(self.files) > 3 else ''})"
        super().__init__(
            f"load of package {load_id}{where} failed and was rolled back: {reason}"
            + (shown if self.files else "")
        )


class LoadRefused(LoadFailed, PackageDataError):
    """The destination refused the package's data or schema (a value it cannot convert, a
    constraint the rows break, a key a merge needs): loading it again fails the same way, so
    the pipeline sets the package aside instead of keeping it pending. Loaders raise this
    where they can tell; any other :class:`LoadFailed` is retried."""


class UnsupportedType(DestinationError, PackageDataError):
    """A column's data type (or its precision) cannot be represented in the destination."""

    def __init__(self, table: str, column: str, data_type: str, reason: str) -> None:
        self.table = table
        self.column = column
        self.data_type = data_type
        super().__init__(f"table {table!r} column {column!r} ({data_type}): {reason}")


class MissingLoadFile(DestinationError):
    """A file or folder named in a load request does not exist."""


class DatasetError(DestinationError):
    """A query on the loaded data failed (unknown table, bad SQL): dlt's
    ``DatabaseException``, a destination error."""


class DatabaseTerminalError(DatasetError):
    """The query cannot succeed as written (an unknown column, a value that does not
    convert): dlt's ``DatabaseTerminalException``."""


class DatabaseUndefinedRelation(DatasetError):
    """A table or view the query names does not exist (dlt's error of that name; not a
    ``DatabaseTerminalException`` there either)."""


class DatabaseTransientError(DatasetError):
    """The query may succeed when run again (a syntax error as dlt counts it, a lost
    connection): dlt's ``DatabaseTransientException``."""


class NotATableRelation(DatasetError, ValueError):
    """``from_loads()`` / ``with_load_id_col()`` on a relation that is not a whole table: a
    ``ValueError`` as in dlt 1.31, so code catching dlt's error catches this one."""


class TableNotInDataset(DatasetError, KeyError):
    """``dataset["name"]`` of a table the dataset lacks: a ``KeyError`` as in dlt 1.31, so a
    lookup that catches it (or ``in``-style probing code) works unchanged."""

    def __str__(self) -> str:  # KeyError's str() would quote the message
        return str(self.args[0]) if self.args else ""


class TableAttributeNotInDataset(TableNotInDataset, AttributeError):
    """``dataset.name`` of a table the dataset lacks: also an ``AttributeError`` as in dlt
    1.31, so ``getattr(dataset, name, default)`` and ``hasattr`` work."""


class SqlClientNotAvailable(DatasetError):
    """The destination keeps no data to query (a custom destination: a sink function), as
    dlt's error of that name: ``pipeline.dataset()`` is made, reading it raises this."""

    def __init__(self, dataset_name: str, destination_name: str) -> None:
        self.dataset_name = dataset_name
        self.destination_name = destination_name
        super().__init__(
            f"SQL Client not available for dataset `{dataset_name}` in destination "
            f"`{destination_name}`"
        )


class DuckDBConnectionError(DestinationError):
    """The database file cannot be opened (most often: another process holds its lock).

    The advice never says "retry": retrying a whole run would extract its input again. The
    pipeline adds how to finish the kept package.
    """

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        super().__init__(
            f"cannot open DuckDB database {path}: {reason} (another process, e.g. a running "
            f"pipeline or a DuckDB shell, has it open; waited "
            f"destination.duckdb.lock_timeout seconds)"
        )


class InvalidRowGroupSize(DestinationError):
    """The configured row group size is not one DuckDB accepts; says where it was set."""

    def __init__(self, key: str, value: Any, origin: str, advice: str) -> None:
        self.value = value
        self.origin = origin
        super().__init__(f"{key} = {value!r} ({origin}) is not a row group size: {advice}")


class FilesystemConfigError(DestinationError):
    """A filesystem setting is missing or has a value the destination does not know."""


class PostgresConnectionError(DestinationError):
    """The server cannot be reached or refused the credentials."""

    def __init__(self, credentials: HasUrl, reason: str) -> None:
        super().__init__(f"cannot connect to PostgreSQL at {credentials.url()}: {reason}")


class PostgresCredentialsMissing(DestinationError):
    """No credentials (or no database/host) were given for the postgres destination."""

    def __init__(self, name: str, missing: str) -> None:
        super().__init__(
            f"destination {name!r}: no {missing} in the credentials; give "
            f"credentials='postgresql://user:password@host:5432/database', or set "
            f"DESTINATION__{name.upper()}__CREDENTIALS, or [destination.{name}.credentials] "
            f"database/username/password/host/port in .loadstone/secrets.toml"
        )


class UnsupportedWriteDisposition(DestinationError):
    """A table asks for a write disposition the Spark destination does not do."""

    def __init__(
        self, table: str, disposition: str, strategy: str | None, detail: str = ""
    ) -> None:
        self.table = table
        self.disposition = disposition
        shown = f"{disposition} (strategy {strategy!r})" if strategy else disposition
        super().__init__(
            f"destination 'spark' cannot load table {table!r} with write disposition {shown}"
            f"{detail}; it supports append, replace and merge with strategy 'delete-insert'"
        )


class InMemoryCatalog(DestinationError):
    """The session's catalog forgets its tables when the session ends."""
