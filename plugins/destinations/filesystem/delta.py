"""``table_format="delta"``: each table a Delta table at ``<bucket_url>/<dataset>/<table>``.

One commit per table per package, idempotent through Delta's own application transactions:
the commit carries ``(app_id="loadstone", version=<load id as an integer>)`` and a table whose
``transaction_version`` already reached it is skipped, so a package retried after a kill
never commits twice. The load id is also in the commit's metadata (``loadstone.load_id``).

Dispositions: append; replace (an overwrite commit); merge as upsert (``MERGE`` on the root's
primary key, on ``_dlt_id`` for nested tables, whose ids are derived from the root's key: as
in dlt, elements of a nested list that shrank stay); merge as ``delete-insert``: one
overwrite commit whose predicate selects the rows to go (``delete_insert.py`` decides them,
for nested tables through their root) and whose data are the rows that come. New columns are
added by the commit that brings them (``schema_mode="merge"`` / ``merge_schema=True``).

Appends and replaces of Parquet files whose columns the table already has in the same
types are committed as they are: the files are copied into the table folder (a byte copy,
server-side on an object store when source and table share it) and registered by an add
action, so their rows never pass through the loader. Anything else (new columns, other
types, merge) reads the rows into Arrow once and lets ``deltalake`` write them.
"""

from __future__ import annotations

import decimal
import json
import time
import uuid
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from loadstone.plugins.destinations.filesystem.arrow_data import (
    empty_table,
    format_schema,
    naive_columns,
    read_table,
)
from loadstone.storage.filesystem import FilesystemCredentials, put_file_atomic

if TYPE_CHECKING:
    from deltalake import DeltaTable

    from loadstone.plugins.destinations.filesystem.client_view import (
        ClientView as FilesystemClient,
    )
    from loadstone.plugins.destinations.filesystem.delete_insert import KeyMatch, Replacement
    from loadstone.plugins.destinations.filesystem.tables import TablePlan

APP_ID = "loadstone"


def load_version(load_id: str) -> int:
    """The load id (``1795487830.1308439``) as the integer version of a Delta app transaction;
    load ids grow with time, so later packages have higher versions."""
    return int(decimal.Decimal(load_id) * 10_000_000)


def storage_options(credentials: FilesystemCredentials) -> dict[str, str]:
    """dlt's credential keys as the ``object_store`` options ``deltalake`` takes."""
    options = {"AWS_S3_ALLOW_UNSAFE_RENAME": "true"}  # one writer per table: the pipeline
    mapping = {
        "aws_access_key_id": "AWS_ACCESS_KEY_ID",
        "aws_secret_access_key": "AWS_SECRET_ACCESS_KEY",
        "aws_session_token": "AWS_SESSION_TOKEN",
        "region_name": "AWS_REGION",
        "endpoint_url": "AWS_ENDPOINT_URL",
    }
    for key, value in credentials.as_dict().items():
        if key in mapping:
            options[mapping[key]] = value
    if str(options.get("AWS_ENDPOINT_URL", "")).startswith("http://"):
        options["AWS_ALLOW_HTTP"] = "true"
    return options


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class DeltaWriter:
    """Commits the tables of one package to Delta tables of one dataset."""

    def __init__(self, client: FilesystemClient) -> None:
        self.client = client
        self.options = storage_options(client.config.credentials)

    def open(self, table: str) -> DeltaTable | None:
        from deltalake import DeltaTable

        uri = self.client.table_url(table)
        if not DeltaTable.is_deltatable(uri, storage_options=self.options):
            return None
        return DeltaTable(uri, storage_options=self.options)

    def read(self, table: str, columns: Sequence[str] | None = None) -> pa.Table | None:
        """The table's rows (only ``columns`` it has, when given), None without a table."""
        delta = self.open(table)
        if delta is None:
            return None
        if columns is None:
            return delta.to_pyarrow_table()
        present = set(delta.schema().to_arrow().names)
        return delta.to_pyarrow_table(columns=[c for c in columns if c in present])

    def commit(
        self,
        plan: TablePlan,
        files: Sequence[Path],
        load_id: str,
        replacement: Replacement | None = None,
    ) -> None:
        """One commit of the package's rows of ``plan``'s table (``replacement``: a
        delete-insert's rows to remove and add, instead of ``files``)."""
        from deltalake import CommitProperties, Transaction

        existing = self.open(plan.name)
        version = load_version(load_id)
        if existing is not None and (existing.transaction_version(APP_ID) or 0) >= version:
            return  # this package's commit is already in the table
        properties = CommitProperties(
            custom_metadata={"loadstone.load_id": load_id},
            app_transactions=[Transaction(APP_ID, version)],
        )
        disposition = plan.write_disposition
        if replacement is not None:
            self._replace_rows(plan.name, existing, replacement, properties)
            return
        stored = None if existing is None else pa.schema(existing.schema().to_arrow())
        naive = naive_columns(plan.columns, stored)
        if disposition == "merge" and existing is not None and files:
            self._merge(existing, plan, read_table(files, "delta", naive), properties)
            return
        mode = "overwrite" if disposition == "replace" else "append"
        if files and self._commit_files(plan.name, existing, files, mode, properties, naive):
            return
        data = read_table(files, "delta", naive)
        if data is None:
            if disposition != "replace" or existing is None:
                return  # nothing to append; a replace of an absent table creates nothing
            data = empty_table(plan.columns, naive)
        self._write(plan.name, data, mode, properties)

    def _write(self, table: str, data: pa.Table, mode: str, properties: Any) -> None:
        from deltalake import write_deltalake

        write_deltalake(  # type: ignore[call-overload]  # mode is one of its literals
            self.client.table_url(table),
            data,
            mode=mode,
            schema_mode="merge",
            storage_options=self.options,
            commit_properties=properties,
        )

    def _merge(
        self, table: DeltaTable, plan: TablePlan, data: pa.Table | None, properties: Any
    ) -> None:
        keys = list(plan.primary_key) if plan.is_root else ["_dlt_id"]
        if data is None or data.num_rows == 0:
            return
        if not keys:  # a merge without a key appends, as in dlt
            self._write(plan.name, data, "append", properties)
            return
        predicate = " AND ".join(f"t.{_quote(k)} = s.{_quote(k)}" for k in keys)
        merger = table.merge(
            data,
            predicate,
            source_alias="s",
            target_alias="t",
            merge_schema=True,
            commit_properties=properties,
        )
        deleted = _deleted(plan.hard_delete) if plan.is_root else None
        kept = None if deleted is None else f"NOT coalesce({deleted}, false)"
        if deleted is not None:  # dlt's hard_delete: a matched row marked deleted goes
            merger = merger.when_matched_delete(predicate=deleted)
        if plan.merge_strategy != "insert-only":  # insert-only leaves the keys it has alone
            merger = merger.when_matched_update_all(predicate=kept)
        merger.when_not_matched_insert_all(predicate=kept).execute()

    def _replace_rows(
        self,
        table: str,
        existing: DeltaTable | None,
        replacement: Replacement,
        properties: Any,
    ) -> None:
        """Delete-insert in one commit: an overwrite of the rows the predicate selects."""
        from deltalake import write_deltalake

        rows = replacement.rows
        predicate = _predicate(replacement.remove)
        if existing is None:
            if rows is not None and rows.num_rows:
                self._write(table, rows, "append", properties)
            return
        if rows is None or rows.num_rows == 0:
            if predicate is not None:
                existing.delete(predicate, commit_properties=properties)
            return
        write_deltalake(
            self.client.table_url(table),
            rows,
            mode="overwrite",
            predicate=predicate,
            schema_mode="merge",
            storage_options=self.options,
            commit_properties=properties,
        )

    def _commit_files(
        self,
        table: str,
        existing: DeltaTable | None,
        files: Sequence[Path],
        mode: str,
        properties: Any,
        naive: Collection[str] = (),
    ) -> bool:
        """Commit ``files`` as they are when the table has (or, new, will have) their columns
        in their types; False when the rows must be rewritten instead."""
        schemas = [pq.read_schema(f) for f in files]
        if any(format_schema(s, "delta", naive) != _nullable(s) for s in schemas):
            return False  # a type Delta cannot hold as it is (wei, time), a naive timestamp
        if existing is None:
            target = _nullable(pa.unify_schemas(schemas, promote_options="default"))
        else:
            target = pa.schema(existing.schema().to_arrow())
            by_name = {f.name: f.type for f in target}
            if any(by_name.get(f.name) != f.type for s in schemas for f in s):
                return False  # a new column or another type: deltalake evolves the schema
        actions = [self._copy(table, source) for source in files]
        if existing is None:
            from deltalake import Schema
            from deltalake.transaction import create_table_with_add_actions

            create_table_with_add_actions(
                self.client.table_url(table),
                Schema.from_arrow(target),
                actions,
                mode="error",
                storage_options=self.options,
                commit_properties=properties,
            )
        else:
            existing.create_write_transaction(actions, mode, target, commit_properties=properties)
        return True

    def _copy(self, table: str, source: Path) -> Any:
        """A byte copy of ``source`` in the table's folder, as a Delta add action."""
        from deltalake.transaction import AddAction

        name = f"{uuid.uuid4().hex}-{Path(source).name}"
        put_file_atomic(self.client.fs, str(source), f"{self.client.dataset_path}/{table}/{name}")
        rows = pq.read_metadata(source).num_rows
        return AddAction(
            name,
            Path(source).stat().st_size,
            {},
            int(time.time() * 1000),
            True,
            json.dumps({"numRecords": rows}),
        )


def _deleted(hard_delete: tuple[str, bool] | None) -> str | None:
    """The merge condition of a package row marked deleted (a bool column true, any other
    column not null), or None without a ``hard_delete`` column."""
    if hard_delete is None:
        return None
    column, is_bool = hard_delete
    return f"s.{_quote(column)} = true" if is_bool else f"s.{_quote(column)} IS NOT NULL"


def _predicate(matches: Sequence[KeyMatch]) -> str | None:
    """Delta SQL selecting the rows whose keys are in any of ``matches`` (None: no row)."""
    clauses = []
    for match in matches:
        rows = match.values.to_pylist()
        if not rows:
            continue
        if len(match.columns) == 1:
            (column,) = match.columns
            values = ", ".join(_literal(r[column]) for r in rows)
            clauses.append(f"{_quote(column)} IN ({values})")
            continue
        for row in rows:
            pairs = " AND ".join(f"{_quote(c)} = {_literal(row[c])}" for c in match.columns)
            clauses.append(f"({pairs})")
    return " OR ".join(clauses) if clauses else None


def _literal(value: Any) -> str:
    """A SQL literal of a key value: numbers as they are, anything else as quoted text
    (Delta's engine coerces text to the column's date or timestamp type)."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float, decimal.Decimal)):
        return str(value)
    return "'" + str(value).replace("'", "''") + "'"


def _nullable(schema: pa.Schema) -> pa.Schema:
    return pa.schema([f.with_nullable(True) for f in schema])
