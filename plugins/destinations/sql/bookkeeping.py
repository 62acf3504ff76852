"""The system tables' rows, written and read the same way on every SQL destination.

``_dlt_version`` (one row per schema version), ``_dlt_pipeline_state`` (one row per load
that carries state) and ``_dlt_loads`` (one row per package, written last) hold what a
pipeline needs to resume: whether a package is in, the newest schema, the newest state of a
*completed* load. The statements use ``?`` placeholders; a client whose driver uses another
style translates them (PostgreSQL: ``sql.numbered_placeholders``).
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, cast

from loadstone.destinations.contract import (
    SYSTEM_TABLES,
    LoadRequest,
    Row,
    SchemaVersionRow,
    StateDict,
    decode_state,
    encode_state,
    new_row_id,
)
from loadstone.plugins.destinations.sql.dialect import quote

if TYPE_CHECKING:
    from loadstone.schema.stored import TStoredSchema


class SystemTableClient(Protocol):
    """What the bookkeeping needs from a client: run SQL, names through the naming."""

    def execute(self, sql: str, params: Sequence[object] | None = None) -> None: ...

    def first(self, sql: str, params: Sequence[object] | None = None) -> Row | None: ...

    def qualified(self, table: str, staging: bool = False) -> str: ...

    def ident(self, name: str) -> str: ...

    def system_table(self, name: str) -> str: ...

    def table_exists(self, table: str) -> bool: ...


def now() -> _dt.datetime:
    return _dt.datetime.now(tz=_dt.timezone.utc)


def _columns(client: SystemTableClient, table: str) -> str:
    return ", ".join(quote(client.ident(c.name)) for c in SYSTEM_TABLES[table])


def record_version(client: SystemTableClient, version: SchemaVersionRow) -> bool:
    """Insert a ``_dlt_version`` row unless this schema version is there; True if inserted."""
    table = client.qualified(client.system_table("_dlt_version"))
    c = client.ident
    found = client.first(
        f"SELECT 1 FROM {table} WHERE {quote(c('version_hash'))} = ? "
        f"AND {quote(c('schema_name'))} = ?",
        [version.version_hash, version.schema_name],
    )
    if found:
        return False
    client.execute(
        f"INSERT INTO {table} ({_columns(client, '_dlt_version')}) VALUES (?, ?, ?, ?, ?, ?)",
        version_values(version),
    )
    return True


def version_values(version: SchemaVersionRow) -> list[object]:
    """A ``_dlt_version`` row's values, in the table's column order, inserted now (the SQL
    destinations and the Spark destination's row file share this one order)."""
    return [
        version.version,
        version.engine_version,
        now(),
        version.schema_name,
        version.version_hash,
        version.schema_json,
    ]


def insert_state(client: SystemTableClient, request: LoadRequest) -> None:
    """The package's ``_dlt_pipeline_state`` row (dlt's compressed state text)."""
    row = request.pipeline_state
    assert row is not None
    table = client.qualified(client.system_table("_dlt_pipeline_state"))
    client.execute(
        f"INSERT INTO {table} ({_columns(client, '_dlt_pipeline_state')}) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            row.version,
            row.engine_version,
            row.pipeline_name,
            encode_state(row.state),
            row.created_at or now(),
            row.version_hash,
            request.load_id,
            new_row_id(),
        ],
    )


def insert_load(client: SystemTableClient, load_id: str, version: SchemaVersionRow) -> None:
    """The package's ``_dlt_loads`` row: written last, it marks the package as loaded."""
    table = client.qualified(client.system_table("_dlt_loads"))
    client.execute(
        f"INSERT INTO {table} ({_columns(client, '_dlt_loads')}) VALUES (?, ?, 0, ?, ?)",
        [load_id, version.schema_name, now(), version.version_hash],
    )


def is_package_loaded(client: SystemTableClient, load_id: str) -> bool:
    loads = client.system_table("_dlt_loads")
    if not client.table_exists(loads):
        return False
    row = client.first(
        f"SELECT 1 FROM {client.qualified(loads)} WHERE {quote(client.ident('load_id'))} = ?",
        [load_id],
    )
    return row is not None


def stored_schema(client: SystemTableClient, schema_name: str) -> TStoredSchema | None:
    """The newest schema stored in ``_dlt_version`` under that name, or None."""
    version = client.system_table("_dlt_version")
    if not client.table_exists(version):
        return None
    c = client.ident
    row = client.first(
        f"SELECT {quote(c('schema'))} FROM {client.qualified(version)} "
        f"WHERE {quote(c('schema_name'))} = ? "
        f"ORDER BY {quote(c('inserted_at'))} DESC, {quote(c('version'))} DESC LIMIT 1",
        [schema_name],
    )
    return cast("TStoredSchema", json.loads(row[0])) if row else None


def stored_state(client: SystemTableClient, pipeline_name: str) -> StateDict | None:
    """Newest state of a *completed* load (its load id is in ``_dlt_loads``)."""
    state = client.system_table("_dlt_pipeline_state")
    loads = client.system_table("_dlt_loads")
    if not (client.table_exists(state) and client.table_exists(loads)):
        return None
    c = client.ident
    row = client.first(
        f"SELECT s.{quote(c('state'))} FROM {client.qualified(state)} AS s "
        f"JOIN {client.qualified(loads)} AS l ON l.{quote(c('load_id'))} = s.{quote(c('_dlt_load_id'))} "
        f"WHERE s.{quote(c('pipeline_name'))} = ? "
        f"ORDER BY s.{quote(c('created_at'))} DESC, l.{quote(c('load_id'))} DESC LIMIT 1",
        [pipeline_name],
    )
    return decode_state(str(row[0])) if row else None
