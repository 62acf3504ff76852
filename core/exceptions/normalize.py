"""Errors of the normalize step."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loadstone.exceptions.base import LoadstoneError, PackageDataError

if TYPE_CHECKING:
    pass


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
    """A row holds no value (or a null) for a column that cannot be null (a key, or a
    column declared ``nullable: false``): dlt's name."""

    def __init__(self, schema_name: str | None, table_name: str, column_name: str) -> None:
        self.schema_name = schema_name
        self.table_name = table_name
        self.column_name = column_name
        super().__init__(
            f"table {table_name!r}: a row has no value for column {column_name!r}, which "
            "cannot be null (a key, or declared nullable: false); give every row a value"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (CannotCoerceNullException, (self.schema_name, self.table_name, self.column_name))


class ArrowDataError(NormalizeError, PackageDataError):
    """Arrow data that cannot go into its table: values its column's type cannot hold, or two
    columns whose names normalize to one. Running the package again fails the same way."""


class ValueDoesNotFit(NormalizeError, PackageDataError):
    """A value its column's type cannot hold exactly: a decimal with more digits after the
    point than the column's scale keeps, or more before it than its precision allows.

    Never rounded or cut to fit (a silent change of the user's number); the package is set
    aside with nothing of it loaded, and the sources' state it carried is taken back, so
    the next run reads those rows again.
    """

    def __init__(
        self, table: str, column: str, value: str, column_type: str, reason: str, where: str = ""
    ) -> None:
        self.table = table
        self.column = column
        self.value = value
        self.column_type = column_type
        self.reason = reason
        self.where = where
        shown = value if len(value) <= 200 else value[:200] + "..."
        at = f" ({where})" if where else ""
        super().__init__(
            f"table {table!r} column {column!r}: value {shown} does not fit {column_type} "
            f"({reason}){at}; declare a wider precision or scale for the column"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        args = (self.table, self.column, self.value, self.column_type, self.reason, self.where)
        return (ValueDoesNotFit, args)


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
