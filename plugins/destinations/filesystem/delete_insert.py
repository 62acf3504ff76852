"""``merge`` with the ``delete-insert`` strategy on Delta and Iceberg tables, worked out in Arrow.

The rule is the SQL destinations' (``sql/merge.py``): rows of the root table whose primary
key *or* merge key matches a package row are deleted together with their nested rows (a list
that shrank keeps none of its old elements); the package's root rows are de-duplicated by
primary key (``dedup_sort`` decides, else the first in file order) and inserted with the
nested rows of the kept ones. Without primary and merge key the merge appends.

A table format commits one table at a time, so each table of the root's chain gets a
:class:`Replacement`: the rows to remove (by the values of one or more key columns) and the
rows to add, in one commit. What is removed from a nested table is decided by the root table
as it was before the package, so the loader commits the nested tables first (deepest first)
and the root last: a retry after a kill finds the root unchanged and removes the same rows
again (tables already committed are skipped by their load id).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import attrs
import pyarrow as pa
import pyarrow.compute as pc

from loadstone.exceptions import LoadFailed
from loadstone.plugins.destinations.tables import TableModel

_POS = "__loadstone_pos"
_RANK = "__loadstone_rank"

#: reads columns of a table as it is now (None: the table does not exist yet)
Reader = Callable[[str, Sequence[str]], "pa.Table | None"]


@attrs.frozen
class KeyMatch:
    """Rows whose ``columns`` hold one of the value combinations in ``values``."""

    columns: tuple[str, ...]
    values: pa.Table  # distinct combinations, one column per key column, no nulls


@attrs.frozen
class Replacement:
    """One table's commit: remove rows matching any of ``remove``, then add ``rows``.

    ``remove`` always covers the added rows too (a format may check that new rows fall
    under the predicate of the rows they replace, as Delta's overwrite does).
    """

    remove: tuple[KeyMatch, ...]
    rows: pa.Table | None


def is_delete_insert(model: TableModel, root: str) -> bool:
    """A keyed ``delete-insert`` merge (without keys a merge is an append)."""
    return (
        model.disposition(root) == "merge"
        and model.strategy(root) == "delete-insert"
        and bool(model.primary_key(root) or model.merge_key(root))
    )


def chain_order(model: TableModel, root: str) -> list[str]:
    """The chain's tables in commit order: nested tables deepest first, the root last."""
    nested = sorted(model.nested_tables(root), key=model.depth, reverse=True)
    return [*nested, root]


def replacements(
    model: TableModel,
    root: str,
    package: Mapping[str, pa.Table],
    read: Reader,
    load_id: str,
) -> dict[str, Replacement]:
    """The commit of every table of ``root``'s chain (see module docstring).

    ``package`` holds the package's rows per table; without root rows nothing is matched
    (empty result) and the tables load their rows as an ordinary merge would.
    """
    incoming = package.get(root)
    if incoming is None:
        return {}
    pk, mk = model.primary_key(root), model.merge_key(root)
    kept = _dedup(incoming, pk, model.dedup_sort(root)) if pk else incoming
    alive = _alive(kept, model.hard_delete(root))
    row_key = model.row_key(root)
    if row_key is None or row_key not in kept.column_names:
        # a root alone (Arrow data, loaded without _dlt_id as dlt does): match by its keys
        groups = [tuple(k) for k in (pk, mk) if k]
        return {root: Replacement(tuple(_match(g, kept) for g in groups), alive)}
    current = read(root, sorted({*pk, *mk, row_key}))
    doomed = _doomed_ids(current, kept, [pk, mk], row_key)
    kept_ids = _distinct(alive.column(row_key))
    out = {root: Replacement((_ids(row_key, doomed, kept_ids),), alive)}
    for table in model.nested_tables(root):
        out[table] = _nested(model, table, package, doomed, kept_ids, read, load_id)
    return out


def _nested(
    model: TableModel,
    table: str,
    package: Mapping[str, pa.Table],
    doomed_roots: pa.Array,
    kept_roots: pa.Array,
    read: Reader,
    load_id: str,
) -> Replacement:
    """A nested table: rows of doomed roots go, rows of kept package roots come."""
    rows = package.get(table)
    root_key = model.root_key(table)
    if root_key is not None:
        if rows is not None:
            rows = rows.filter(_within(rows.column(root_key), kept_roots))
        return Replacement((_ids(root_key, doomed_roots, kept_roots),), rows)
    # no root key (the normalizer did not propagate one): walk the parent chain by row keys
    row_key = _row_key(model, table, load_id)
    doomed = _ids_below(model, table, doomed_roots, read, load_id)
    if rows is not None:
        owned = _ids_below(model, table, kept_roots, lambda t, _c: package.get(t), load_id)
        rows = rows.filter(_within(rows.column(row_key), owned))
        return Replacement((_ids(row_key, doomed, rows.column(row_key)),), rows)
    return Replacement((_ids(row_key, doomed),), None)


def _ids_below(
    model: TableModel,
    table: str,
    root_ids: pa.Array,
    read: Reader,
    load_id: str,
) -> pa.Array:
    """Row keys of ``table`` rows that belong to the roots ``root_ids``, through parent keys."""
    row_key, parent = _row_key(model, table, load_id), model.parent(table)
    parent_key = model.parent_key(table)
    if parent is None or parent_key is None:
        raise LoadFailed(load_id, table, "nested table has neither root key nor parent key")
    rows = read(table, [row_key, parent_key])
    if rows is None:
        return pa.array([], pa.string())
    owners = root_ids
    if parent != model.root(table):
        owners = _ids_below(model, parent, root_ids, read, load_id)
    return _distinct(rows.filter(_within(rows.column(parent_key), owners)).column(row_key))


def _doomed_ids(
    current: pa.Table | None, kept: pa.Table, groups: list[list[str]], row_key: str
) -> pa.Array:
    """Row keys of the current root rows that share a primary or merge key with the package."""
    if current is None or current.num_rows == 0:
        return pa.array([], pa.string())
    found: list[pa.Array | pa.ChunkedArray] = []
    for keys in (g for g in groups if g and set(g) <= set(current.column_names)):
        wanted = _match(tuple(keys), kept).values
        wanted = wanted.cast(pa.schema([current.schema.field(k) for k in keys]))
        found.append(current.join(wanted, keys, join_type="left semi").column(row_key))
    return _distinct(*found)


def _alive(rows: pa.Table, hard_delete: tuple[str, bool] | None) -> pa.Table:
    """The rows not marked deleted by the ``hard_delete`` column (a bool true, another type
    not null): their keys still remove the stored rows, as on the SQL destinations, but
    they are not inserted."""
    if hard_delete is None or hard_delete[0] not in rows.column_names:
        return rows
    column = rows.column(hard_delete[0])
    if hard_delete[1]:
        return rows.filter(pc.invert(pc.fill_null(column, False)))
    return rows.filter(pc.is_null(column))


def _dedup(rows: pa.Table, keys: list[str], sort: list[tuple[str, str]]) -> pa.Table:
    """One row per key: the first by ``sort`` (dlt's ``dedup_sort``), then by file order."""
    numbered = rows.append_column(_POS, pa.array(range(rows.num_rows), pa.int64()))
    order = [(c, "ascending" if d == "asc" else "descending") for c, d in sort]
    ordered = numbered.sort_by([*order, (_POS, "ascending")])
    ranked = ordered.append_column(_RANK, pa.array(range(ordered.num_rows), pa.int64()))
    first = ranked.group_by(keys, use_threads=False).aggregate([(_RANK, "min")])
    return ordered.take(first.column(f"{_RANK}_min")).sort_by(_POS).drop_columns([_POS])


def _match(keys: tuple[str, ...], rows: pa.Table) -> KeyMatch:
    """The distinct non-null key combinations of ``rows``."""
    values = rows.select(list(keys))
    for key in keys:
        values = values.filter(pc.is_valid(values.column(key)))
    return KeyMatch(keys, values.group_by(list(keys), use_threads=False).aggregate([]))


def _distinct(*parts: pa.Array | pa.ChunkedArray) -> pa.Array:
    """The distinct non-null values of ``parts`` as text (row keys are text)."""
    chunks = [c for p in parts for c in (p.chunks if isinstance(p, pa.ChunkedArray) else [p])]
    merged = pa.chunked_array([c.cast(pa.string()) for c in chunks], pa.string())
    return pc.drop_null(pc.unique(merged))


def _within(column: pa.ChunkedArray, values: pa.Array) -> pa.ChunkedArray:
    """Which values of ``column`` are among ``values`` (text of either width)."""
    return pc.is_in(column, value_set=values.cast(column.type))


def _ids(column: str, *parts: pa.Array | pa.ChunkedArray) -> KeyMatch:
    return KeyMatch((column,), pa.table({column: _distinct(*parts)}))


def _row_key(model: TableModel, table: str, load_id: str) -> str:
    key = model.row_key(table)
    if key is None:
        raise LoadFailed(load_id, table, "a merge needs a row key column (_dlt_id)")
    return key
