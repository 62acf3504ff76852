"""Checks on a normalized package before it may be loaded.

A column the schema marks non-nullable (a primary key, or a column hinted
``nullable: false``) must receive a value in every row a package writes to its table. When
a package's rows do not have the column at all -- typically ``primary_key="id"`` on data
without ``id`` -- dlt stops in normalize rather than load rows a merge cannot match; so does
loadstone. The package stays pending, the schema is not changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from loadstone.exceptions import UnboundColumnException
from loadstone.schema.hints import disposition_of, parse_write_disposition

if TYPE_CHECKING:
    from loadstone.naming import NamingConvention
    from loadstone.schema import Schema
    from loadstone.storage.package_storage import RemoteData

#: hints from code per source table, as the package stores them (read, never changed)
TableHints = Mapping[str, Mapping[str, object]]


def file_columns(files: Iterable[Path], remote: RemoteData | None = None) -> set[str]:
    """Column names present in any of the Parquet files (read from their footers only).

    ``remote`` (``package_storage.RemoteData``): the files are objects of that storage.
    """
    import pyarrow.parquet as pq

    names: set[str] = set()
    for path in files:
        if remote is None:
            names.update(pq.read_schema(path).names)
        else:
            with remote.open_read(path) as handle:
                names.update(pq.read_schema(handle).names)
    return names


def _names(value: object) -> list[str]:
    """A key hint's column names: one name or a sequence of them."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, Iterable):
        return [str(name) for name in value]
    return []


def _not_null_columns(columns: object) -> list[str]:
    """Columns a ``columns`` hint declares ``nullable: false``."""
    if not isinstance(columns, Mapping):
        return []
    return [
        str(name)
        for name, column in columns.items()
        if isinstance(column, Mapping) and column.get("nullable") is False
    ]


def _row_version_column(table_hints: Mapping[str, object]) -> list[str]:
    """An scd2 merge's ``row_version_column_name``: the data gives that column (dlt's)."""
    _, extra = parse_write_disposition(table_hints.get("write_disposition"))
    column = table_hints.get("x-row-version-column-name") or extra.get("x-row-version-column-name")
    return [str(column)] if column and disposition_of(table_hints)[1] == "scd2" else []


def required_columns(
    schema: Schema, hints: TableHints, naming: NamingConvention
) -> dict[str, set[str]]:
    """Per table, the non-nullable columns: from the schema and from the package's key hints
    (a key column that never received data is not in the schema yet, but is required)."""
    required: dict[str, set[str]] = {}
    for table in schema.data_tables(include_incomplete=True):
        required[table.name] = {
            column.name
            for column in table.columns.values()
            if column.nullable is False and not column.name.startswith("_dlt")
        }
    roots: dict[str, str] = {}
    for t in schema.data_tables(include_incomplete=True):
        if t.parent is None and t.resource:
            # the first: a nested table a key unlinked (nested_hints=) names the resource too
            roots.setdefault(t.resource, t.name)
    for source_name, table_hints in hints.items():
        table_name = roots.get(source_name)
        if table_name is None:
            continue
        keys = [*_names(table_hints.get("primary_key")), *_names(table_hints.get("merge_key"))]
        keys += _not_null_columns(table_hints.get("columns"))
        keys += _row_version_column(table_hints)
        required.setdefault(table_name, set()).update(naming.normalize_path(k) for k in keys)
    return required


def check_bound_columns(
    schema: Schema,
    hints: TableHints,
    naming: NamingConvention,
    written: Mapping[str, Iterable[Path]],
    remote: RemoteData | None = None,
) -> None:
    """Raise :class:`UnboundColumnException` for the first table missing required columns.

    ``remote``: the package's files are on an object store (``LoadPackage.remote``).
    """
    required = required_columns(schema, hints, naming)
    for table_name, files in written.items():
        files = list(files)
        needed = required.get(table_name)
        if not files or not needed:
            continue
        present = file_columns(files, remote)
        missing = sorted(name for name in needed if name not in present)
        if missing:
            raise UnboundColumnException(schema.name, table_name, missing)
