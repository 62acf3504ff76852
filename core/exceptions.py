"""Every error a user can meet, in one module.

Each derives from :class:`LoadstoneError`, so ``except loadstone.LoadstoneError`` catches all of
them, and each is exported at the top level (``loadstone.PipelineStepFailed``). The messages
carry the context a user needs: the table, column, value, file or line involved. The code that
raises an error lives beside its step; only the classes live here, so users and plugins import
them from one place.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loadstone.plugin_kinds import GROUPS, LABELS

if TYPE_CHECKING:
    from loadstone.plugins.destinations.postgres.credentials import PostgresCredentials
    from loadstone.schema.collisions import Collision

#: the destination an error suggests when none is available
SUGGESTED_DESTINATION = "duckdb"


class LoadstoneError(Exception):
    """Base class of every loadstone error."""


class PackageNotFound(LoadstoneError):
    """``load-package`` was given a load id the pipeline does not have."""


class PipelineNotFound(LoadstoneError):
    """No local folder for the named pipeline."""


class PipelineNotActive(LoadstoneError):
    """``pipeline.deactivate()`` on a pipeline that is not the active one (dlt's name)."""


class InputError(LoadstoneError):
    """A path given to ``loadstone run`` is missing or holds no input files."""


class ConfigFileError(LoadstoneError):
    """A configuration file is not valid TOML; says which file and which line."""

    def __init__(self, path: Path, line: int | None, column: int | None, reason: str) -> None:
        self.path = path
        self.line = line
        self.column = column
        self.reason = reason
        where = f"{path}, line {line}" if line is not None else str(path)
        if column is not None:
            where += f", column {column}"
        super().__init__(f"invalid TOML in {where}: {reason}")


class ConfigValueError(LoadstoneError, ValueError):
    """A configured value that does not parse as its key needs; names the key and its source."""

    def __init__(self, key: str, value: Any, origin: str, expected: str) -> None:
        self.key = key
        self.value = value
        self.origin = origin
        self.expected = expected
        super().__init__(f"{key} must be {expected}, not {value!r} (from {origin})")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.key, self.value, self.origin, self.expected))


class NoActiveContext(LoadstoneError):
    """``current.*`` was called outside of a source function or a pipeline run."""


class ResourceNameNotAvailable(NoActiveContext):
    """``current.resource_name()`` / ``resource_state()`` outside a running resource (dlt's)."""


class SourceSectionNotAvailable(NoActiveContext):
    """``current.source_state()`` / ``state()`` while no pipeline extracts a source (dlt's)."""


class CurrentSourceNotAvailable(NoActiveContext):
    """``current.source()`` while no source is being extracted (dlt's)."""


class CurrentSourceSchemaNotAvailable(NoActiveContext):
    """``current.source_schema()`` outside a source body or its extraction (dlt's)."""


class PipelineStateNotAvailable(NoActiveContext):
    """``resource.state`` / ``source.state`` while no pipeline is active (dlt's)."""


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


class PackageDataError(LoadstoneError):
    """A package failed because of its own data or schema, not because of its surroundings.

    A value the destination cannot convert, a primary key the data lacks, a column that
    collides with another, a contract the data breaks: running the same package again fails
    the same way, so keeping it pending would fail every later run of the pipeline (issue 22).
    The pipeline sets such a package aside (``failed_packages/``, listed by ``info``) and
    says why; the next run goes on. Failures outside the data (disk, network, a server that
    is down) are not this class: their package stays pending and is retried.
    """


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


class DatasetError(LoadstoneError):
    """A query on the loaded data failed (unknown table, bad SQL)."""


class ExtractError(LoadstoneError):
    """Input could not be turned into extracted files (unknown kind, unreadable file ...)."""


class ResourceExtractionError(ExtractError):
    """The code of a resource raised while its items were read (the cause is chained)."""

    def __init__(self, resource_name: str, cause: BaseException) -> None:
        self.resource_name = resource_name
        self.cause = cause
        super().__init__(
            f"resource {resource_name!r} raised while extracting: {type(cause).__name__}: {cause}"
        )


class IncrementalCursorPathMissing(LoadstoneError):
    """An item has no value at the cursor path (``on_cursor_value_missing="raise"``)."""

    def __init__(self, resource_name: str, cursor_path: str, item: Any) -> None:
        self.resource_name = resource_name
        self.cursor_path = cursor_path
        self.item = item
        super().__init__(
            f"resource {resource_name!r}: cursor path {cursor_path!r} was not found in item "
            f"{_short(item)}; every item needs it, or pass on_cursor_value_missing="
            f"'include'|'exclude'"
        )


class IncrementalCursorPathHasValueNone(IncrementalCursorPathMissing):
    """The value at the cursor path is None (``on_cursor_value_missing="raise"``)."""


class ConfigFieldMissingException(LoadstoneError, KeyError):
    """A ``secrets.value``/``config.value`` argument was not passed and is not configured
    (a ``KeyError`` too, as dlt's: ``config["missing.key"]`` raises it)."""

    __str__ = Exception.__str__  # the message, not KeyError's quoted repr

    def __init__(self, function: str, missing: Mapping[str, list[str]]) -> None:
        self.function = function
        self.missing = dict(missing)
        tried = "; ".join(f"{arg}: {', '.join(keys)}" for arg, keys in missing.items())
        super().__init__(
            f"{function}: missing configuration for {', '.join(missing)}; looked up {tried} "
            f"(environment variables: keys upper-cased, '.' -> '__')"
        )


class ResourceError(LoadstoneError):
    """A resource or source is declared or used wrongly (name, hint, data)."""


class ValueErrorWithKnownValues(LoadstoneError, ValueError):
    """A setting that takes one of a known set of values got another (dlt's name)."""

    def __init__(self, key: str, value: Any, known: Sequence[str]) -> None:
        self.key = key
        self.value = value
        self.known = tuple(known)
        super().__init__(f"{key}={value!r} is not one of: {', '.join(known)}")


class InvalidIdentifierError(LoadstoneError, ValueError):
    """An identifier that cannot be normalized: ``None``, or empty after stripping white space.

    A ``ValueError`` too, so code written for dlt (which raises ``ValueError``) keeps working.
    """

    def __init__(self, identifier: object, convention: str | None = None) -> None:
        self.identifier = identifier
        self.convention = convention
        reason = "is None" if identifier is None else "is empty or only white space"
        where = f" (naming convention {convention})" if convention else ""
        super().__init__(f"identifier {identifier!r} {reason}{where}: nothing to normalize")


class InvalidMaxLengthError(LoadstoneError, ValueError):
    """A ``max_length`` a convention cannot honour (negative, shorter than the tag, too long)."""

    def __init__(self, max_length: object, reason: str, convention: str | None = None) -> None:
        self.max_length = max_length
        self.convention = convention
        where = f" for naming convention {convention}" if convention else ""
        super().__init__(f"max_length {max_length!r}{where}: {reason}")


class NormalizeError(LoadstoneError):
    """Normalizing a package failed; nothing of it was kept.

    The message is one line; ``details`` may hold a worker's traceback for a bug report.
    """

    details: str = ""


class UnboundColumnException(NormalizeError, PackageDataError):
    """Non-nullable columns of a table received no data in a package."""

    def __init__(self, schema_name: str, table_name: str, columns: list[str]) -> None:
        self.schema_name = schema_name
        self.table_name = table_name
        self.columns = columns
        listed = ", ".join(columns)
        super().__init__(
            f"in schema {schema_name!r}: columns {listed} of table {table_name!r} did not "
            f"receive any data in this load (they are non-nullable: a primary_key, merge_key or "
            f"column hint names a field the data does not have)"
        )


class NormalizeJobFailed(NormalizeError):
    """dlt's wrapper of a normalize job that failed on its data: ``PipelineStepFailed``'s
    ``exception`` for a contract violation, whose ``__cause__`` is the
    :class:`~loadstone.schema.contracts.DataValidationError`."""

    def __init__(self, load_id: str | None, cause: BaseException) -> None:
        self.load_id = load_id
        super().__init__(f"normalize job of package {load_id} failed: {cause}")
        self.__cause__ = cause


class CannotCoerceNullException(NormalizeError, PackageDataError):
    """A row holds no value for a column that cannot be null (a key): dlt's name."""

    def __init__(self, schema_name: str | None, table_name: str, column_name: str) -> None:
        self.schema_name = schema_name
        self.table_name = table_name
        self.column_name = column_name
        super().__init__(
            f"table {table_name!r}: a row has no value for column {column_name!r}, which "
            "cannot be null (a primary or merge key); give every row a value"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (CannotCoerceNullException, (self.schema_name, self.table_name, self.column_name))


class ArrowDataError(NormalizeError, PackageDataError):
    """Arrow data that cannot go into its table: values its column's type cannot hold, or two
    columns whose names normalize to one. Running the package again fails the same way."""


class BadRecordError(NormalizeError, PackageDataError):
    """A line of an extracted file is not a JSON document (``on_bad_record="fail"``)."""

    def __init__(self, file: str, line: int, error: str) -> None:
        self.file = file
        self.line = line
        self.error = error
        super().__init__(
            f"bad record in {file} line {line}: {error}. Fix the line and run again, or set "
            f"NORMALIZE__ON_BAD_RECORD=skip|quarantine to drop or quarantine such lines"
        )


class PipelineStepFailed(LoadstoneError):
    """A pipeline step failed; ``step``, ``load_id`` and ``exception`` say where and why.

    What dlt users catch around ``run``. The package stays pending and the advice says how to
    finish it without loading anything twice: ``loadstone pipeline P load`` (or the same
    command again, which does not extract an input a pending package already holds).
    :meth:`wrap` makes an instance that is *also* an instance of the cause's class, so
    ``except BadRecordError`` keeps working beside ``except PipelineStepFailed``.
    """

    def __init__(
        self,
        pipeline_name: str,
        step: str,
        load_id: str | None,
        cause: BaseException,
        step_info: Any = None,
    ):
        self._init(pipeline_name, step, load_id, cause, step_info)

    def _init(
        self,
        pipeline_name: str,
        step: str,
        load_id: str | None,
        cause: BaseException,
        step_info: Any,
    ) -> None:
        self.pipeline_name = pipeline_name
        self.step = step
        self.load_id = load_id
        self.cause = cause
        self.exception = cause
        self.step_info = step_info
        where = f" package {load_id}" if load_id else ""
        advice = (
            f". The package is kept: `loadstone pipeline {pipeline_name} load` finishes it once "
            f"the cause is gone (running the same command again does too, without extracting "
            f"its input twice; `drop-pending-packages` drops it)"
            if load_id and step != "extract"
            else ""
        )
        if isinstance(cause, DamagedCopyError):
            advice = ""  # its message says how to repair the package
        if isinstance(cause, PackageDataError | PackageIntegrityError) and load_id:
            # these packages were set aside (failed_packages/): nothing of them is pending
            advice = (
                f". Nothing of it was loaded; the package was set aside (`loadstone pipeline "
                f"{pipeline_name} info` lists it) and the next run goes on: run the input "
                "again once the data, hints or schema are fixed"
            )
        LoadstoneError.__init__(
            self,
            f"pipeline {pipeline_name!r} step {step}{where} failed: {one_line(cause)}{advice}",
        )

    @classmethod
    def wrap(
        cls, pipeline_name: str, step: str, load_id: str | None, cause: BaseException
    ) -> PipelineStepFailed:
        """A PipelineStepFailed that is also an instance of ``type(cause)``."""
        if isinstance(cause, PipelineStepFailed):
            return cause
        try:
            mixed = type(cls.__name__, (cls, type(cause)), {"__module__": cls.__module__})
            error: PipelineStepFailed = cls.__new__(mixed)
            error.__dict__.update(getattr(cause, "__dict__", {}))
        except TypeError:  # a builtin exception whose layout does not mix (OSError ...)
            error = cls.__new__(cls)
        error._init(pipeline_name, step, load_id, cause, None)
        if step == "normalize" and isinstance(
            cause, DataValidationError | CannotCoerceNullException
        ):
            # dlt reports the failed normalize job, caused by the contract violation
            error.exception = NormalizeJobFailed(load_id, cause)
        return error


class PipelineConfigError(LoadstoneError):
    """The pipeline's arguments cannot work together (name, dataset, destination)."""


class CannotRestorePipelineException(LoadstoneError):
    """``attach`` found no working folder with state for the pipeline."""

    def __init__(self, pipeline_name: str, pipelines_dir: Path) -> None:
        self.pipeline_name = pipeline_name
        self.pipelines_dir = pipelines_dir
        super().__init__(
            f"pipeline {pipeline_name!r} cannot be attached: {pipelines_dir / pipeline_name} "
            f"holds no pipeline state (run it first, or pass pipelines_dir=)"
        )


class UnknownPluginError(LoadstoneError, LookupError):
    """No plugin of this kind has this name; lists the names there are and how to add one."""

    def __init__(
        self,
        kind: str,
        name: str,
        available: Sequence[str],
        broken: Iterable[BaseException] = (),
    ) -> None:
        self.kind = kind
        self.name = name
        self.available = tuple(available)
        self.broken = tuple(broken)
        label = LABELS.get(kind, kind)
        names = ", ".join(self.available) if self.available else "(none installed)"
        message = (
            f"unknown {label} {name!r}. Available: {names}. "
            f"To add one, `pip install <package>` that exposes an entry point named {name!r} "
            f"in group {GROUPS.get(kind, kind)!r}, or name a plugin by its fully qualified "
            f"module name (for example 'my_package.my_{kind}')."
        )
        if self.broken:
            message += " Plugins that failed to load: " + "; ".join(map(str, self.broken))
        super().__init__(message)


class PluginImportError(LoadstoneError, ImportError):
    """A plugin module could not be imported; names the module and the import error."""

    def __init__(self, kind: str, module: str, cause: BaseException) -> None:
        self.kind = kind
        self.module = module
        self.cause = cause
        label = LABELS.get(kind, kind)
        super().__init__(
            f"{label} plugin module {module!r} could not be imported: "
            f"{type(cause).__name__}: {cause}"
        )


class PluginContractError(LoadstoneError, TypeError):
    """A plugin module was found but does not provide what its kind requires."""

    def __init__(self, kind: str, module: str, problem: str) -> None:
        self.kind = kind
        self.module = module
        self.problem = problem
        label = LABELS.get(kind, kind)
        super().__init__(f"{label} plugin {module!r} {problem}")


class IdentifierCollisionError(PackageDataError):
    """Identifiers that a case-insensitive destination would merge; nothing was loaded."""

    def __init__(self, collisions: Iterable[Collision], schema_name: str | None = None) -> None:
        self.collisions = list(collisions)
        self.schema_name = schema_name
        where = f"schema {schema_name!r}: " if schema_name else ""
        details = "; ".join(c.describe() for c in self.collisions)
        super().__init__(
            f"identifier collision: {where}the destination is case-insensitive but the naming "
            "convention keeps case: "
            f"{details}. Rename the source fields, or use a case-insensitive naming convention "
            "(e.g. snake_case or sql_ci_v1)."
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.collisions, self.schema_name))


class DataValidationError(PackageDataError):
    """Data would change a schema whose contract freezes that change (dlt's name; also
    importable as ``ContractViolation``).

    Carries the schema, table, column (``None`` for a new table), entity and mode, and the
    offending value, so a user sees exactly which record broke which rule; dlt's attribute
    names (``table_name``, ``column_name``, ``schema_entity``, ``contract_mode``,
    ``data_item``) read the same values.
    """

    def __init__(
        self,
        *,
        schema_name: str | None,
        table: str,
        column: str | None,
        entity: str,
        mode: str,
        value: Any = None,
    ) -> None:
        self.schema_name = schema_name
        self.table = table
        self.column = column
        self.entity = entity
        self.mode = mode
        self.value = value
        where = f"schema {schema_name!r}, " if schema_name else ""
        where += f"table {table!r}"
        if column is not None:
            where += f", column {column!r}"
        if entity == "tables":
            what = f"cannot create table {table!r}"
        elif entity == "columns":
            what = f"cannot add column {column!r}"
        else:
            what = f"cannot add variant column {column!r} for a value of another type"
        shown = repr(value)
        if len(shown) > 200:
            shown = shown[:200] + "..."
        super().__init__(
            f"{where}: contract on {entity} is {mode!r}: {what} (value {shown}). Change the "
            f"schema_contract or the data."
        )

    @property
    def table_name(self) -> str:
        return self.table

    @property
    def column_name(self) -> str | None:
        return self.column

    @property
    def schema_entity(self) -> str:
        return self.entity

    @property
    def contract_mode(self) -> str:
        return self.mode

    @property
    def data_item(self) -> Any:
        return self.value

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _rebuild_violation,
            (self.schema_name, self.table, self.column, self.entity, self.mode, self.value),
        )


class CoercionError(LoadstoneError, ValueError):
    """A value cannot be stored in a column of the given data type.

    The normalizer catches it to create a variant column; anything else reports it with the
    value and both types so a user sees why a row did not fit.
    """

    def __init__(self, to_type: str, from_type: str | None, value: Any, reason: str = "") -> None:
        self.to_type = to_type
        self.from_type = from_type
        self.value = value
        self.reason = reason
        shown = repr(value)
        if len(shown) > 200:
            shown = shown[:200] + "..."
        message = f"cannot coerce {from_type} value {shown} to {to_type}"
        if reason:
            message += f": {reason}"
        super().__init__(message)

    def __reduce__(self) -> tuple[Any, ...]:  # picklable across Spark workers
        return (type(self), (self.to_type, self.from_type, self.value, self.reason))


class UnsupportedValueError(LoadstoneError, TypeError):
    """A Python value of a type that has no data type (e.g. an arbitrary object)."""

    def __init__(self, value: Any) -> None:
        self.value = value
        super().__init__(
            f"value {value!r} of Python type {type(value).__name__} has no loadstone data type; "
            "convert it to str, int, float, bool, Decimal, bytes, date/time or dict/list first"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.value,))


class InvalidPrecisionError(LoadstoneError, ValueError):
    """A precision or scale hint that the data type does not accept."""


class UnknownDetectionError(LoadstoneError, ValueError):
    """A detection name that does not exist (typo in settings or add_type_detection)."""

    def __init__(self, name: str, available: Sequence[str] = ()) -> None:
        self.name = name
        self.available = tuple(available)
        super().__init__(f"unknown type detection {name!r}; available: {', '.join(available)}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.name, self.available))


class SchemaFileError(LoadstoneError):
    """A schema file that cannot be read: names the file and, when known, the line."""

    def __init__(self, path: str | os.PathLike[str], reason: str, line: int | None = None) -> None:
        self.path = str(path)
        self.reason = reason
        self.line = line
        where = self.path if line is None else f"{self.path}, line {line}"
        super().__init__(f"schema file {where}: {reason}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.path, self.reason, self.line))


class InvalidSchemaError(LoadstoneError, ValueError):
    """A schema document or element that does not follow the stored schema format."""

    def __init__(self, message: str, *, table: str | None = None, column: str | None = None):
        self.table = table
        self.column = column
        where = ""
        if table is not None:
            where = f"table {table!r}"
            if column is not None:
                where += f", column {column!r}"
            where += ": "
        self.message = message
        super().__init__(where + message)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_invalid_schema, (self.message, self.table, self.column))


class NamingChangeError(LoadstoneError):
    """A naming change would rename tables (or their columns) that already hold data."""

    def __init__(
        self, schema_name: str, old: str, new: str, tables: dict[str, dict[str, str]]
    ) -> None:
        self.schema_name = schema_name
        self.old = old
        self.new = new
        self.tables = tables
        listed = ", ".join(
            f"{name!r} ({', '.join(f'{a!r}->{b!r}' for a, b in changes.items())})"
            for name, changes in tables.items()
        )
        super().__init__(
            f"schema {schema_name!r}: changing the naming convention from {old!r} to {new!r} "
            f"would rename identifiers of tables that already hold data: {listed}. Keep the "
            "old convention, load into a new dataset, or set "
            "allow_identifier_change_on_table_with_data."
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.schema_name, self.old, self.new, self.tables))


class TableNotFoundError(LoadstoneError, KeyError):
    """A table name that is not in the schema."""

    def __init__(self, schema_name: str, table_name: str, known: Iterable[str]) -> None:
        self.schema_name = schema_name
        self.table_name = table_name
        self.known = list(known)
        names = ", ".join(sorted(self.known)) or "(none)"
        super().__init__(f"table {table_name!r} is not in schema {schema_name!r}; tables: {names}")

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.schema_name, self.table_name, self.known))


class FileReadError(LoadstoneError):
    """A file listed by the filesystem source cannot be read (deleted, denied, damaged).

    The message is one line naming the file's URL (never credentials) and the cause.
    """

    def __init__(self, file_url: str, cause: BaseException) -> None:
        self.file_url = file_url
        reason = "file not found" if isinstance(cause, FileNotFoundError) else str(cause)
        reason = (reason.splitlines() or [type(cause).__name__])[0]
        super().__init__(f"filesystem: cannot read {file_url}: {reason}")


class AuthError(LoadstoneError):
    """Credentials are missing, or the token endpoint refused them."""


class IgnoreResponseException(LoadstoneError):
    """Raised by a response hook: this answer has no records, and paging stops here."""


class JSONPathError(LoadstoneError, ValueError):
    """A path uses JSONPath syntax loadstone does not read (filters, ``..``)."""


class PaginatorError(LoadstoneError, ValueError):
    """A paginator is configured wrongly, or a response lacks what it needs (a total)."""


class RESTClientError(LoadstoneError):
    """A request failed for good (retries used up, or a final 4xx)."""


class SqlDatabaseError(LoadstoneError):
    """Reading a table failed (connection lost, table dropped, bad query), or a table or
    cursor column named by the caller does not exist. The message names the table."""


class ParentFieldMissing(LoadstoneError, KeyError):
    """A parent record lacks the field a child request needs."""

    def __str__(self) -> str:
        return str(self.args[0])


class SparkTargetError(LoadstoneError):
    """``spark.master`` / ``spark.remote`` names no place Spark can run."""


class FilesystemError(LoadstoneError):
    """A URL names a filesystem that cannot be opened (unknown protocol, missing package)."""


class StorageError(LoadstoneError):
    """A file of the pipeline's working folder cannot be written (disk full, permissions)."""


class CorruptFileError(LoadstoneError):
    """A file loadstone reads back is missing a part or is not what it should hold."""

    def __init__(self, path: Path, cause: str, repair: str) -> None:
        self.path = Path(path)
        super().__init__(f"{path} is damaged ({cause}); {repair}")


class LoadPackageError(LoadstoneError):
    """A package folder is missing, corrupt or in an unexpected state."""


class PackageIntegrityError(LoadPackageError):
    """An extracted file is not what ``package.json`` recorded when extract wrote it."""


class DamagedCopyError(LoadPackageError):
    """A line of a package's extracted copy differs from the same line of its intact source."""


class PackageStorageError(LoadstoneError):
    """``packages.storage_url`` names storage loadstone cannot use or reach."""


class PipelineLockedError(LoadstoneError):
    """Another process runs the pipeline and did not finish within the lock timeout."""


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

    def __init__(self, credentials: PostgresCredentials, reason: str) -> None:
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


#: the names these errors had before they took dlt's: kept for code that catches them
PipelineError = PipelineStepFailed
ContractViolation = DataValidationError
SchemaContractError = DataValidationError


# --- helpers of the messages above ------------------------------------------------------------


def os_error_text(error: OSError) -> str:
    """A one-line reason for an OSError; disk full said in plain words."""
    if error.errno == errno.ENOSPC:
        return "no space left on the device (disk full)"
    return error.strerror or str(error)


def one_line(error: BaseException) -> str:
    """The first line of an error's text; OS errors in plain words (disk full)."""
    if isinstance(error, OSError) and error.errno is not None:
        name = f"{error.filename}: " if error.filename else ""
        return f"{name}{os_error_text(error)}"
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def _short(item: Any) -> str:
    text = repr(item)
    return text if len(text) <= 200 else text[:200] + "..."


def _rebuild_invalid_schema(
    message: str, table: str | None, column: str | None
) -> InvalidSchemaError:
    return InvalidSchemaError(message, table=table, column=column)


def _rebuild_violation(
    schema_name: str | None, table: str, column: str | None, entity: str, mode: str, value: Any
) -> DataValidationError:
    return DataValidationError(
        schema_name=schema_name, table=table, column=column, entity=entity, mode=mode, value=value
    )


#: errors that live beside what they subclass: the REST client's are also ``requests``' own
#: errors (dlt code catches those), and importing ``requests`` here would cost every
#: ``import loadstone`` a tenth of a second. They are still found here, on first use.
_ELSEWHERE = {
    "RequestFailed": "loadstone.sources.helpers.rest_client.retries",
    "HTTPStatusError": "loadstone.sources.helpers.rest_client.retries",
}


def __getattr__(name: str) -> type[LoadstoneError]:
    if name not in _ELSEWHERE:
        raise AttributeError(f"module 'loadstone.exceptions' has no attribute {name!r}")
    import importlib

    error: type[LoadstoneError] = getattr(importlib.import_module(_ELSEWHERE[name]), name)
    return error
