"""``refresh=``: start sources or resources again, as dlt's ``drop_sources`` / ``drop_resources``
/ ``drop_data``.

* ``drop_sources``: every table of the source's schema is dropped (in the destination and the
  schema) and the source's state is reset; the run then loads into fresh tables.
* ``drop_resources``: the tables of the resources being run (with their nested tables) are
  dropped and those resources' state is reset; other tables stay.
* ``drop_data``: those tables are emptied (schema kept) and the resources' state is reset.

The plan is computed from the schema before extract; the pipeline applies it to the
destination, the schema and the state before the new package is extracted, so the run's
data lands in the emptied tables.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol, cast, runtime_checkable

import attrs

from loadstone.destinations.query_results import execute_query
from loadstone.exceptions import DatasetError, PipelineConfigError
from loadstone.schema.system_tables import VERSION_TABLE_NAME
from loadstone.storage.loaded_inputs import LoadedInputs
from loadstone.typing import TDataItem

if TYPE_CHECKING:
    from loadstone.destinations.contract import DestinationClient
    from loadstone.runtime.target import DestinationTarget
    from loadstone.runtime.working_folder import WorkingFolder
    from loadstone.schema import Schema, Table


class DroppingClient(Protocol):
    """What a refresh asks of a destination client: the SQL loaders' table checks."""

    def dataset_exists(self) -> bool: ...

    def table_exists(self, name: str) -> bool: ...

    def qualified(self, table: str) -> str: ...

    def query(self, sql: str, *params: object) -> object: ...


REFRESH_MODES = ("drop_sources", "drop_resources", "drop_data")


def check_refresh(refresh: str | None) -> str | None:
    if refresh is not None and refresh not in REFRESH_MODES:
        raise ValueError(
            f"refresh must be one of {', '.join(REFRESH_MODES)} or None, not {refresh!r}"
        )
    return refresh


@attrs.frozen
class RefreshPlan:
    """What a refresh removes: tables to drop, tables to empty, state to reset."""

    mode: str
    drop_tables: tuple[str, ...] = ()
    truncate_tables: tuple[str, ...] = ()
    #: None resets the whole source state; else the names of the resources whose state goes
    reset_resources: tuple[str, ...] | None = None
    #: the name of the schema whose tables the drop takes: its ``_dlt_version`` rows go too
    #: (every version of it, as dlt 1.31 deletes them), so a folder restored from the
    #: destination does not read back the tables and columns dropped
    dropped_schema: str | None = None


def plan_refresh(
    mode: str, schema: Schema, resource_names: Sequence[str], table_names: Iterable[str]
) -> RefreshPlan:
    """The plan for ``mode`` on ``schema``, given the resources run and their source tables."""
    dropped = schema.name
    if mode == "drop_sources":
        names = tuple(table.name for table in schema.data_tables(include_incomplete=True))
        return RefreshPlan(mode, drop_tables=names, reset_resources=None, dropped_schema=dropped)
    naming = schema.naming_convention()
    roots = []
    for name in table_names:
        normalized = naming.normalize_table_identifier(name)
        if schema.has_table(normalized):
            roots.append(normalized)
    tables: list[str] = []
    for root in roots:
        tables.append(root)
        tables.extend(table.name for table in schema.nested_tables(root))
    if mode == "drop_resources":
        return RefreshPlan(
            mode,
            drop_tables=tuple(tables),
            reset_resources=tuple(resource_names),
            dropped_schema=dropped if tables else None,
        )
    return RefreshPlan(mode, truncate_tables=tuple(tables), reset_resources=tuple(resource_names))


def resource_tables(schema: Schema, resource_name: str) -> list[Table]:
    """The root tables a resource filled (by the ``resource`` the schema records)."""
    return [
        t
        for t in schema.data_tables(include_incomplete=True)
        if t.parent is None and t.resource == resource_name
    ]


def reset_state(plan: RefreshPlan, source_state: dict[str, TDataItem]) -> None:
    """Reset the state the plan names: the resources' (their entries leave ``resources``),
    or for a whole source all of it but an emptied ``resources`` entry, as dlt 1.31 leaves
    it (``{'resources': {}}``; a source state without one becomes ``{}``)."""
    if plan.reset_resources is None:
        had_resources = "resources" in source_state
        source_state.clear()
        if had_resources:
            source_state["resources"] = {}
        return
    resources = source_state.get("resources") or {}
    for name in plan.reset_resources:
        resources.pop(name, None)


@runtime_checkable
class FileTablesClient(Protocol):
    """A destination whose tables are files (the filesystem): dropping or emptying a table
    removes its files, as dlt's refresh does there."""

    def remove_tables(self, names: Sequence[str]) -> None: ...


def apply_to_destination(destination: DestinationClient, plan: RefreshPlan) -> None:
    """Drop or empty the planned tables in the destination (those that exist)."""
    if isinstance(destination, FileTablesClient):
        destination.remove_tables([*plan.drop_tables, *plan.truncate_tables])
        return
    # every SQL loader's client has the table checks; the client contract does not name them
    client = cast(DroppingClient, destination)
    if not (plan.drop_tables or plan.truncate_tables) or not client.dataset_exists():
        return
    for name in plan.drop_tables:
        if client.table_exists(name):
            client.query(f"DROP TABLE {client.qualified(name)}")
    for name in plan.truncate_tables:
        if client.table_exists(name):
            client.query(f"DELETE FROM {client.qualified(name)}")
    if plan.drop_tables and plan.dropped_schema and client.table_exists(VERSION_TABLE_NAME):
        table = client.qualified(VERSION_TABLE_NAME)
        sql = f"DELETE FROM {table} WHERE schema_name = %s"
        # bookkeeping only: a catalog that cannot delete rows (Spark's Parquet tables) keeps
        # the row, and the refresh goes on
        with contextlib.suppress(DatasetError):
            execute_query(destination, sql, (plan.dropped_schema,))  # %s as each client takes it


def drop_resources(
    folder: WorkingFolder,
    target: DestinationTarget,
    schema: Schema,
    resources: Sequence[str] | None,
) -> list[str]:
    """Drop the tables of ``resources`` (all data tables when None) from the destination and
    ``schema``, and reset their state (the CLI's ``drop``); returns the dropped tables."""
    if resources is None:
        plan = plan_refresh("drop_sources", schema, [], [])
    else:
        known = {
            t.resource for t in schema.data_tables(include_incomplete=True) if t.parent is None
        }
        unknown = [r for r in resources if r not in known]
        if unknown:
            raise PipelineConfigError(
                f"schema {schema.name!r} has no resource(s) {', '.join(unknown)}; it has "
                f"{', '.join(sorted(k for k in known if k)) or 'none'}"
            )
        tables = [t.name for r in resources for t in resource_tables(schema, r)]
        plan = plan_refresh("drop_resources", schema, list(resources), tables)
    with target.client(schema) as client:
        apply_to_destination(client, plan)
        schema.drop_tables(plan.drop_tables)
        client.update_stored_schema(schema)
    LoadedInputs(folder.root).forget_tables((*plan.drop_tables, *plan.truncate_tables))
    source_state = (folder.state.get("sources") or {}).get(schema.name, {})
    reset_state(plan, source_state)
    folder.save_schema(schema)
    folder.save_state(target)
    return list(plan.drop_tables)
