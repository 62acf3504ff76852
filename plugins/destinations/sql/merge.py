"""Write dispositions of the SQL destinations: append, replace, merge (delete-insert, upsert,
scd2, insert-only).

One implementation for DuckDB and PostgreSQL: the statements are standard SQL, and what
differs per database (column types, the hidden insertion-order column, how a table is
emptied, how files get into a table) comes from the client's :class:`Dialect` and its
``insert_files``. All of it runs inside the package transaction the client opened, so each disposition may
take several statements and still look atomic from outside. A root table and its nested
tables are handled together: nested rows follow their root row through ``_dlt_root_id``
(or, when the normalizer did not propagate a root key, through the ``_dlt_parent_id`` chain).

Semantics (observed from dlt 1.x on DuckDB and PostgreSQL):

* ``replace``: the root and *all* its nested tables are emptied, then loaded. How, is the
  ``replace_strategy`` (dlt's ``destination.replace_strategy``): ``truncate-and-insert``
  (the default) empties the final tables and copies the files into them;
  ``insert-from-staging`` first copies the files into ``<dataset>_staging`` tables, then
  empties the final tables and inserts from staging; ``staging-optimized`` stages the same
  way, then drops each final table that received rows and moves its staging table into the
  dataset in its place (where the dialect can move a table; else as
  ``insert-from-staging``). All three run in the package's transaction, so readers see the
  old rows or the new ones, never none.
* ``delete-insert`` (default merge): data is staged in ``<dataset>_staging``; rows of the
  final root table whose primary key (or merge key) matches a staged row are deleted with
  their nested rows; staged root rows are de-duplicated by primary key keeping the first in
  load order (or by ``x-dedup-sort``), then inserted with the nested rows of the kept rows.
  Without primary and merge key it appends.
* ``upsert``: by primary key: matching root rows are updated, new ones inserted; nested rows
  of every staged root are replaced (delete + insert).
* ``insert-only``: by primary key: staged rows whose key is new are inserted (with their
  nested rows); rows already in the table are never changed.
* ``scd2``: ``_dlt_id`` is a hash of the row. Active rows (``_dlt_valid_to`` NULL) whose hash
  is absent from the load are retired (``_dlt_valid_to`` = load time); staged rows whose hash
  is not active are inserted with ``_dlt_valid_from`` = load time. With a merge key only rows
  whose merge key is in the load can be retired. Nested rows are inserted when new.
  The load time is the instant the load id encodes, shared by the whole package.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

import attrs

from loadstone.destinations.contract import load_id_timestamp
from loadstone.exceptions import LoadFailed, LoadRefused
from loadstone.plugins.destinations.sql.dialect import quote, timestamp_literal

if TYPE_CHECKING:
    from loadstone.destinations.contract import Destination
    from loadstone.plugins.destinations.sql.dialect import Dialect
    from loadstone.plugins.destinations.tables import TableModel
    from loadstone.schema import Column


class FileSource(Protocol):
    """The load files of one table (each destination reads them its own way)."""

    @property
    def files(self) -> tuple[Path, ...]: ...

    @property
    def is_empty(self) -> bool: ...


#: the files of one table as one loader reads them (its ``insert_files`` takes them)
SourceT = TypeVar("SourceT", bound=FileSource)
_SourceContra = TypeVar("_SourceContra", bound=FileSource, contravariant=True)


class SqlClient(Protocol[_SourceContra]):
    """What the dispositions need from a destination client, inside its open transaction."""

    destination: Destination
    dialect: Dialect
    dataset_name: str

    def qualified(self, table: str, staging: bool = False) -> str: ...

    def execute(self, sql: str, params: Sequence[object] | None = None) -> None: ...

    def table_exists(self, table: str) -> bool: ...

    def ensure_dataset(self, staging: bool = False) -> list[str]: ...

    def ensure_table(
        self, table: str, columns: Sequence[Column], staging: bool = False
    ) -> list[str]: ...

    def insert_files(
        self,
        table: str,
        target: str,
        columns: Sequence[tuple[str, str]],
        source: _SourceContra,
        ordered: bool,
    ) -> None:
        """Insert ``source``'s rows into ``target`` (qualified); ``columns`` are (name, SQL
        type). ``ordered``: rows must keep file order (staging tables, read by row order)."""


_RN = "__loadstone_rn"

#: dlt's replace strategies, the first the default
REPLACE_STRATEGIES = ("truncate-and-insert", "insert-from-staging", "staging-optimized")


def load_tables(
    client: SqlClient[SourceT],
    model: TableModel,
    sources: Mapping[str, SourceT],
    load_id: str,
    current: list[str | None],
    replace_strategy: str = REPLACE_STRATEGIES[0],
) -> None:
    """Load every table of the package, grouped by root table, in the open transaction."""
    for table in sources:
        if table not in model.tables:
            raise LoadFailed(load_id, table, "the table is not in the package's schema")
    roots: list[str] = []
    for table in sources:
        root = model.root(table)
        if root not in roots:
            roots.append(root)
    for root in roots:
        chain = [root, *model.nested_tables(root)]
        disposition = model.disposition(root)
        for replaced in _replaced_below(model, chain) if disposition != "replace" else []:
            # a nested table whose own hint replaces it (``nested_hints=``), below a root that
            # does not: it and its nested tables are replaced alone, as dlt 1.31 does
            below = [t for t in chain if t == replaced or _is_below(model, t, replaced)]
            chain = [t for t in chain if t not in below]
            _Loader(client, model, sources, load_id, current, below).replace(replace_strategy)
        loader = _Loader(client, model, sources, load_id, current, chain)
        if disposition == "replace":
            loader.replace(replace_strategy)
        elif disposition == "merge":
            loader.merge()
        else:
            loader.append()


def _is_below(model: TableModel, table: str, ancestor: str) -> bool:
    while (parent := model.parent(table)) is not None:
        if parent == ancestor:
            return True
        table = parent
    return False


def _replaced_below(model: TableModel, chain: Sequence[str]) -> list[str]:
    """The highest nested tables of ``chain`` that declare ``replace`` themselves."""
    marked = [t for t in chain[1:] if model.tables[t].write_disposition == "replace"]
    return [t for t in marked if not any(_is_below(model, t, m) for m in marked)]


class _Loader(Generic[SourceT]):
    """One root table's chain within one package."""

    def __init__(
        self,
        client: SqlClient[SourceT],
        model: TableModel,
        sources: Mapping[str, SourceT],
        load_id: str,
        current: list[str | None],
        chain: list[str],
    ) -> None:
        self.client = client
        self.model = model
        self.sources = sources
        self.load_id = load_id
        self.current = current
        self.chain = chain
        self.root = chain[0]
        self.staged: dict[str, str] = {}

    # --- helpers -----------------------------------------------------------------------

    def _has_data(self, table: str) -> bool:
        source = self.sources.get(table)
        return source is not None and not source.is_empty and bool(self.model.typed_columns(table))

    def _columns(self, table: str) -> list[tuple[str, str]]:
        column_type = self.client.dialect.column_type
        return [(c.name, column_type(c, table)) for c in self.model.typed_columns(table)]

    def _names(self, table: str) -> str:
        return ", ".join(quote(n) for n, _ in self._columns(table))

    def _final(self, table: str) -> str:
        return self.client.qualified(table)

    def _exec(self, table: str, sql: str, params: Sequence[object] | None = None) -> None:
        self.current[0] = table
        self.client.execute(sql, params)

    def _insert_files(self, table: str, target: str, ordered: bool) -> None:
        self.current[0] = table
        self.client.insert_files(table, target, self._columns(table), self.sources[table], ordered)

    def _existing_chain(self) -> list[str]:
        return [t for t in self.chain if self.client.table_exists(t)]

    # --- append / replace --------------------------------------------------------------

    def append(self) -> None:
        """Insert every table's files; rows need not keep file order in a final table (nor
        do dlt's, whose files load in parallel). Staging tables keep it (``_stage``)."""
        for table in self.chain:
            if self._has_data(table):
                self._insert_files(table, self._final(table), ordered=False)

    def replace(self, strategy: str = REPLACE_STRATEGIES[0]) -> None:
        """Empty the root and all its nested tables, then insert (see module docstring)."""
        if strategy == "truncate-and-insert":
            self._empty_final(self._existing_chain())
            self.append()
            return
        self._stage()
        move = self.client.dialect.move_table if strategy == "staging-optimized" else None
        moved = [t for t in self.chain if t in self.staged] if move is not None else []
        self._empty_final([t for t in self._existing_chain() if t not in moved])
        if move is not None:
            self._move_staged(moved, move)
        self._append_staged([t for t in self.chain if t not in moved])

    def _move_staged(self, tables: Sequence[str], move: str) -> None:
        """Drop each final table and move its staging table into the dataset in its place."""
        dataset = quote(self.client.dataset_name)
        for table in tables:
            self._exec(table, f"DROP TABLE {self._final(table)}")
            self._exec(table, move.format(table=self.staged[table], dataset=dataset))

    def _empty_final(self, tables: Sequence[str]) -> None:
        for table in reversed(tables):
            self._exec(table, self.client.dialect.empty(self._final(table)))

    # --- merge -------------------------------------------------------------------------

    def merge(self) -> None:
        strategy = self.model.strategy(self.root)
        supported = self.client.destination.capabilities.supported_merge_strategies
        if strategy not in supported:
            raise LoadFailed(
                self.load_id,
                self.root,
                f"merge strategy {strategy!r} is not supported here (supported: {', '.join(supported)})",
            )
        self._stage(keyed=False)
        if self.root not in self.staged:
            # only nested rows arrived (no root rows): nothing to match, keep them
            self._append_staged(self.chain[1:])
            return
        if strategy == "scd2":
            self._scd2()
        elif strategy == "upsert":
            self._upsert()
        elif strategy == "insert-only":
            self._insert_only()
        else:
            self._delete_insert()

    def _stage(self, keyed: bool = True) -> None:
        """Copy the package's files of this chain into ``<dataset>_staging`` tables.

        ``keyed=False`` (a merge) makes them without the UNIQUE constraints of columns hinted
        unique: a merge's staged rows may repeat a key, which it keeps once. A replace's
        staging tables have them, as the final tables (``staging-optimized`` moves them in).
        """
        self.client.ensure_dataset(staging=True)
        for table in self.chain:
            if not self._has_data(table):
                continue
            staging = self.client.qualified(table, staging=True)
            self._exec(table, f"DROP TABLE IF EXISTS {staging}")
            self.current[0] = table
            columns = self.model.typed_columns(table)
            if not keyed:
                columns = [attrs.evolve(c, unique=None) for c in columns]
            self.client.ensure_table(table, columns, staging=True)
            self._insert_files(table, staging, ordered=True)
            self.staged[table] = staging

    def _append_staged(self, tables: Sequence[str]) -> None:
        for table in tables:
            if table in self.staged:
                names = self._names(table)
                self._exec(
                    table,
                    f"INSERT INTO {self._final(table)} ({names}) SELECT {names} FROM {self.staged[table]}",
                )

    @staticmethod
    def _match(groups: Sequence[Sequence[str]], left: str = "d", right: str = "s") -> str:
        clauses = [
            "(" + " AND ".join(f"{left}.{quote(k)} = {right}.{quote(k)}" for k in keys) + ")"
            for keys in groups
            if keys
        ]
        return " OR ".join(clauses)

    def _dedup(self, staged: str, keys: Sequence[str]) -> str:
        """Staged rows, one per key: the first in load order unless ``x-dedup-sort`` says."""
        order = [f"{quote(c)} {d.upper()}" for c, d in self.model.dedup_sort(self.root)]
        order.append(self.client.dialect.row_order)
        partition = ", ".join(quote(k) for k in keys)
        return (
            f"SELECT {self._names(self.root)} FROM (SELECT *, row_number() OVER "
            f"(PARTITION BY {partition} ORDER BY {', '.join(order)}) AS {_RN} FROM {staged})"
            f" AS ranked WHERE {_RN} = 1"
        )

    def _row_key(self, table: str) -> str:
        key = self.model.row_key(table)
        if key is None:
            raise LoadFailed(self.load_id, table, "a merge needs a row key column (_dlt_id)")
        return key

    def _delete_nested(self, doomed_root_ids: str) -> None:
        """Delete nested rows of the root rows selected by ``doomed_root_ids``, deepest first."""
        nested = [t for t in self._existing_chain() if t != self.root]
        for table in sorted(nested, key=self.model.depth, reverse=True):
            self._exec(
                table,
                f"DELETE FROM {self._final(table)} WHERE {self._ids_below(table, doomed_root_ids, final=True)}",
            )

    def _ids_below(self, table: str, root_ids: str, final: bool) -> str:
        """A predicate on ``table`` selecting rows that belong to the roots in ``root_ids``.

        Uses the root key when the table has one, else walks the parent-key chain through
        the final tables (``final``) or the staged ones.
        """
        root_key = self.model.root_key(table)
        if root_key is not None:
            return f"{quote(root_key)} IN ({root_ids})"
        parent = self.model.parent(table)
        parent_key = self.model.parent_key(table)
        if parent is None or parent_key is None:
            raise LoadFailed(
                self.load_id, table, "nested table has neither root key nor parent key"
            )
        if parent == self.root:
            return f"{quote(parent_key)} IN ({root_ids})"
        source = self._final(parent) if final else self.staged.get(parent)
        if source is None:
            return "FALSE"
        parent_ids = (
            f"SELECT {quote(self._row_key(parent))} FROM {source} "
            f"WHERE {self._ids_below(parent, root_ids, final)}"
        )
        return f"{quote(parent_key)} IN ({parent_ids})"

    def _insert_nested(self, kept_root_ids: str | None, once: bool = False) -> None:
        """Insert staged nested rows (of the kept root rows when ``kept_root_ids`` is given;
        each row key once when ``once``, see :meth:`_staged_once`)."""
        for table in self.chain[1:]:
            if table not in self.staged:
                continue
            names = self._names(table)
            where = (
                f" WHERE {self._ids_below(table, kept_root_ids, final=False)}"
                if kept_root_ids is not None
                else ""
            )
            source = self._staged_once(table) if once else self.staged[table]
            self._exec(
                table,
                f"INSERT INTO {self._final(table)} ({names}) SELECT {names} FROM {source}{where}",
            )

    def _staged_once(self, table: str) -> str:
        """The staged rows of a nested table, one per row key (the first in load order).

        ``upsert``, ``insert-only`` and ``scd2`` derive a root's ``_dlt_id`` from its key or
        its content, and nested row keys from it: a root row staged twice in one package
        stages its nested rows twice with the same keys. The merge keeps the root once, so
        its nested rows go in once too (were doubled; a UNIQUE ``_dlt_id`` refused them).
        """
        key = quote(self._row_key(table))
        order = self.client.dialect.row_order
        return (
            f"(SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY {key} ORDER BY {order})"
            f" AS {_RN} FROM {self.staged[table]}) AS ranked WHERE {_RN} = 1) AS once"
        )

    # --- strategies --------------------------------------------------------------------

    def _delete_insert(self) -> None:
        root, staged = self.root, self.staged[self.root]
        pk, mk = self.model.primary_key(root), self.model.merge_key(root)
        if not pk and not mk:
            self._append_staged(self.chain)
            return
        final = self._final(root)
        match = self._match([pk, mk])
        exists = f"EXISTS (SELECT 1 FROM {staged} AS s WHERE {match})"
        if len(self.chain) > 1:
            doomed = f"SELECT d.{quote(self._row_key(root))} FROM {final} AS d WHERE {exists}"
            self._delete_nested(doomed)
        self._exec(root, f"DELETE FROM {final} AS d WHERE {exists}")
        names = self._names(root)
        kept = self._live(self._dedup(staged, pk) if pk else f"SELECT * FROM {staged}")
        self._exec(root, f"INSERT INTO {final} ({names}) SELECT {names} FROM ({kept}) AS k")
        filtered = pk or self.model.hard_delete(root)
        self._insert_nested(self._kept_ids(kept) if filtered else None)

    def _deleted(self, alias: str = "") -> str | None:
        """Predicate: the staged row asks to be deleted (``hard_delete`` column), or None."""
        hard = self.model.hard_delete(self.root)
        if hard is None:
            return None
        column = f"{alias}{quote(hard[0])}"
        return f"COALESCE({column}, FALSE)" if hard[1] else f"{column} IS NOT NULL"

    def _live(self, rows_sql: str) -> str:
        """``rows_sql`` without the rows marked for hard deletion."""
        deleted = self._deleted()
        return f"SELECT * FROM ({rows_sql}) AS l WHERE NOT ({deleted})" if deleted else rows_sql

    def _upsert(self) -> None:
        root, staged = self.root, self.staged[self.root]
        pk = self.model.primary_key(root)
        if not pk:
            raise LoadRefused(self.load_id, root, "the upsert strategy needs a primary_key")
        final = self._final(root)
        match = self._match([pk])
        kept = self._dedup(staged, pk)
        if len(self.chain) > 1:
            doomed = (
                f"SELECT d.{quote(self._row_key(root))} FROM {final} AS d "
                f"WHERE EXISTS (SELECT 1 FROM {staged} AS s WHERE {match})"
            )
            self._delete_nested(doomed)
        deleted = self._deleted("s.")
        if deleted:
            self._exec(
                root,
                f"DELETE FROM {final} AS d WHERE EXISTS "
                f"(SELECT 1 FROM ({kept}) AS s WHERE ({match}) AND {deleted})",
            )
            kept = self._live(kept)
        columns = [n for n, _ in self._columns(root)]
        updates = ", ".join(f"{quote(c)} = s.{quote(c)}" for c in columns if c not in pk)
        if updates:
            self._exec(root, f"UPDATE {final} AS d SET {updates} FROM ({kept}) AS s WHERE {match}")
        names = self._names(root)
        select = ", ".join(f"s.{quote(c)}" for c in columns)
        self._exec(
            root,
            f"INSERT INTO {final} ({names}) SELECT {select} FROM ({kept}) AS s "
            f"WHERE NOT EXISTS (SELECT 1 FROM {final} AS d WHERE {match})",
        )
        self._insert_nested(self._kept_ids(kept), once=True)

    def _insert_only(self) -> None:
        """Insert staged rows whose primary key is not in the table yet; existing rows stay."""
        root, staged = self.root, self.staged[self.root]
        pk = self.model.primary_key(root)
        if not pk:
            raise LoadRefused(self.load_id, root, "the insert-only strategy needs a primary_key")
        final = self._final(root)
        kept = (
            f"SELECT * FROM ({self._live(self._dedup(staged, pk))}) AS s "
            f"WHERE NOT EXISTS (SELECT 1 FROM {final} AS d WHERE {self._match([pk])})"
        )
        # the nested rows first: once the root rows are in, no staged key is new any more
        self._insert_nested(self._kept_ids(kept), once=True)
        names = self._names(root)
        self._exec(root, f"INSERT INTO {final} ({names}) SELECT {names} FROM ({kept}) AS k")

    def _kept_ids(self, kept: str) -> str:
        """The row keys of the kept root rows, which select their nested rows.

        Only a chain with nested tables needs them: a root alone (Arrow data, which dlt
        loads without ``_dlt_id``) merges by its keys without a row key.
        """
        if len(self.chain) == 1:
            return "SELECT NULL WHERE FALSE"
        return f"SELECT {quote(self._row_key(self.root))} FROM ({kept}) AS k"

    def _scd2(self) -> None:
        root, staged = self.root, self.staged[self.root]
        final = self._final(root)
        valid_from, valid_to = self.model.validity_columns(root)
        version = self.model.row_version(root)
        if version is None:
            raise LoadFailed(self.load_id, root, "scd2 needs a row version column (_dlt_id)")
        at = _instant(self.model.boundary_timestamp(root)) or load_id_timestamp(self.load_id)
        active_at = _instant(self.model.active_record_timestamp(root))
        qv, qto, qfrom = quote(version), quote(valid_to), quote(valid_from)
        active = (
            f"{qto} IS NULL" if active_at is None else f"{qto} = {timestamp_literal(active_at)}"
        )
        retire = (
            f"UPDATE {final} AS d SET {qto} = {timestamp_literal(at)} "
            f"WHERE d.{active} AND d.{qv} NOT IN (SELECT {qv} FROM {staged})"
        )
        merge_key = self.model.merge_key(root)
        if merge_key:
            retire += f" AND EXISTS (SELECT 1 FROM {staged} AS s WHERE {self._match([merge_key])})"
        self._exec(root, retire)
        columns = [n for n, _ in self._columns(root) if n not in (valid_from, valid_to)]
        names = ", ".join(quote(c) for c in columns)
        self._exec(
            root,
            f"INSERT INTO {final} ({names}, {qfrom}, {qto}) "
            f"SELECT {names}, {timestamp_literal(at)}, {timestamp_literal(active_at)} "
            f"FROM ({self._dedup(staged, [version])}) AS k "
            f"WHERE {qv} NOT IN (SELECT {qv} FROM {final} WHERE {active})",
        )
        for table in self.chain[1:]:
            if table not in self.staged:
                continue
            key = quote(self._row_key(table))
            names = self._names(table)
            self._exec(
                table,
                f"INSERT INTO {self._final(table)} ({names}) SELECT {names} FROM "
                f"{self._staged_once(table)} WHERE {key} NOT IN (SELECT {key} FROM {self._final(table)})",
            )


def _instant(value: object) -> _dt.datetime | None:
    """A timestamp hint (datetime, ISO text or Unix seconds) as an aware datetime, or None."""
    if value is None:
        return None
    if isinstance(value, _dt.datetime):
        at = value
    elif isinstance(value, _dt.date):
        at = _dt.datetime(value.year, value.month, value.day)
    elif isinstance(value, (int, float)):
        return _dt.datetime.fromtimestamp(value, tz=_dt.timezone.utc)
    else:
        at = _dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return at if at.tzinfo else at.replace(tzinfo=_dt.timezone.utc)
