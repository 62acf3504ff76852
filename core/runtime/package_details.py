"""What a load package's entry in dlt's ``LoadInfo.asdict()`` needs, read while the package
is still on disk: its files' sizes, its folder, its schema's hash, when it was made, and the
tables its schema update touched (with their columns).

dlt's ``info.asdict()`` lists each package's jobs (file, size, format) and its schema update;
dlt's documented ``pipeline.run([info], table_name="_load_info")`` loads exactly that. The
package is removed once loaded, so these details are taken when the load begins and kept
in the :class:`~loadstone.runtime.load_info.LoadPackageInfo` (and in the trace).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, TypedDict

from loadstone.runtime.load_info_dict import JsonDict
from loadstone.schema.system_tables import (
    LOADS_TABLE_NAME,
    STATE_TABLE_NAME,
    VERSION_TABLE_NAME,
)

if TYPE_CHECKING:
    from loadstone.schema import Schema
    from loadstone.storage.load_package import LoadPackage

__all__ = ["PackageDetails", "package_details"]


class PackageDetails(TypedDict):
    """The keyword values of :class:`~loadstone.runtime.load_info.LoadPackageInfo` taken here."""

    file_sizes: dict[str, int]
    package_path: str
    schema_hash: str
    created_at: float | None
    schema_update: dict[str, JsonDict]
    roots: dict[str, str]


def package_details(
    package: LoadPackage, schema: Schema | None, *, first_run: bool = False
) -> PackageDetails:
    """The keyword values of ``LoadPackageInfo`` that dlt's ``asdict()`` shows.

    ``first_run``: the pipeline never loaded, so the schema update also holds the system
    tables (``_dlt_loads``, ``_dlt_version``, the pipeline state), as dlt's first package.
    """
    sizes: dict[str, int] = {}
    for table in package.normalized_tables().values():
        for file in table.files:
            with contextlib.suppress(OSError):  # a remote file: no size known here
                sizes[str(file)] = file.stat().st_size
    created = None
    with contextlib.suppress(OSError):
        created = package.root.stat().st_mtime
    return {
        "file_sizes": sizes,
        "package_path": str(package.root),
        "schema_hash": schema.version_hash if schema is not None else "",
        "created_at": created,
        "schema_update": _schema_update(package, schema, first_run) if schema else {},
        "roots": _roots(package, schema) if schema else {},
    }


def _schema_update(package: LoadPackage, schema: Schema, first_run: bool) -> dict[str, JsonDict]:
    """The tables the package's schema update touched, as dlt's ``schema_update`` holds
    them: a new table with all its columns, a table that only gained columns with those
    columns alone (dlt's partial table; ``asdict()`` lists them with their table)."""
    added: dict[str, list[str]] = dict(package.meta.get("new_columns") or {})
    new_tables = list(package.meta.get("new_tables", []))
    names = [*new_tables, *added]
    if first_run:
        names = [LOADS_TABLE_NAME, *names, STATE_TABLE_NAME, VERSION_TABLE_NAME]
        new_tables = names
    tables: dict[str, JsonDict] = {}
    for name in dict.fromkeys(names):
        table = schema.tables.get(name)
        if table is None:
            continue
        stored: dict[str, object] = dict(table.to_dict())
        keep = None if name in new_tables else set(added.get(name, ()))
        stored["columns"] = {
            column: spec.to_dict()
            for column, spec in table.columns.items()
            if keep is None or column in keep
        }
        if "write_disposition" not in stored:  # a nested table: its root's, as dlt lists it
            root = schema.tables.get(_root_of(schema, name))
            if root is not None and root.write_disposition:
                stored["write_disposition"] = root.write_disposition
        tables[name] = stored
    return tables


def _roots(package: LoadPackage, schema: Schema) -> dict[str, str]:
    """Each table the package wrote, with the root table (the resource) it belongs to."""
    return {name: _root_of(schema, name) for name in package.normalized_tables()}


def _root_of(schema: Schema, name: str) -> str:
    root = name
    while (table := schema.tables.get(root)) is not None and table.parent:
        root = table.parent
    return root
