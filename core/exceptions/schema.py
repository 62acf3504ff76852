"""Errors of naming conventions, schemas, their files and contracts, and values that cannot
be typed."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from loadstone.exceptions.base import LoadstoneError, PackageDataError


class Describes(Protocol):
    """What the collision error reads of each collision
    (:class:`loadstone.schema.collisions.Collision`): exceptions import no other layer."""

    def describe(self) -> str: ...


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


class IdentifierCollisionError(PackageDataError):
    """Identifiers that a case-insensitive destination would merge; nothing was loaded."""

    def __init__(self, collisions: Iterable[Describes], schema_name: str | None = None) -> None:
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
        data_item: Any = None,
    ) -> None:
        self.schema_name = schema_name
        self._data_item = data_item
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
        """The row refused (dlt's), or the value when the row is not known."""
        return self.value if self._data_item is None else self._data_item

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _rebuild_violation,
            (
                self.schema_name,
                self.table,
                self.column,
                self.entity,
                self.mode,
                self.value,
                self._data_item,
            ),
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


class TablePropertiesConflictException(LoadstoneError):
    """Hints that would change a table property its stored table already holds, as dlt's
    (``nested_hints=`` with a key for a nested table the schema keeps linked: ``parent``)."""

    def __init__(
        self, schema_name: str, table_name: str, prop_name: str, val1: object, val2: object
    ) -> None:
        self.schema_name = schema_name
        self.table_name = table_name
        self.prop_name = prop_name
        self.val1 = val1
        self.val2 = val2
        super().__init__(
            f"in schema {schema_name!r}: table {table_name!r} has {prop_name} {val1!r}, the "
            f"hints give {val2!r}; a nested key cannot unlink a nested table that holds rows "
            "linked to their parents (drop the table, or give no key)"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        args = (self.schema_name, self.table_name, self.prop_name, self.val1, self.val2)
        return (type(self), args)


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


ContractViolation = DataValidationError


SchemaContractError = DataValidationError


def _rebuild_invalid_schema(
    message: str, table: str | None, column: str | None
) -> InvalidSchemaError:
    return InvalidSchemaError(message, table=table, column=column)


def _rebuild_violation(
    schema_name: str | None,
    table: str,
    column: str | None,
    entity: str,
    mode: str,
    value: Any,
    data_item: Any = None,
) -> DataValidationError:
    return DataValidationError(
        schema_name=schema_name,
        table=table,
        column=column,
        entity=entity,
        mode=mode,
        value=value,
        data_item=data_item,
    )
