"""``merge`` (delete-insert) on Parquet tables: the chain's new contents computed by Spark.

Plain Parquet tables cannot delete rows, so a merge writes each table of the root's chain
anew: the existing rows whose key is not in the package (and their nested rows), plus the
package's rows (root rows de-duplicated by primary key, with the nested rows of the kept
ones). The results are staged and swapped in exactly like ``replace`` (``table_files.py``),
so a kill at any point is taken back by the rerun. The cost is a rewrite of the chain's
tables on every merge: fine for dimension-sized tables, not for large fact tables.

Semantics as the SQL destinations' ``delete-insert`` (``sql/merge.py``): rows of the table whose
primary key *or* merge key matches a package row are deleted with their nested rows; package
root rows are de-duplicated by primary key (``dedup_sort`` decides, else the first in file
order); without primary and merge key the merge appends.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from loadstone.exceptions import LoadFailed
from loadstone.plugins.destinations.spark.types import quote

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from loadstone.plugins.destinations.tables import TableModel

_ORDER = "__loadstone_order"
_RN = "__loadstone_rn"
_ID = "__loadstone_id"

Lookup = Callable[[str], "DataFrame | None"]


def is_keyed(model: TableModel, root: str) -> bool:
    """A merge without primary and merge key is an append (nothing to match)."""
    return bool(model.primary_key(root) or model.merge_key(root))


def merged_chain(
    model: TableModel,
    root: str,
    package: Mapping[str, DataFrame],
    existing: Mapping[str, DataFrame],
    load_id: str,
) -> dict[str, DataFrame]:
    """The new full contents of every table of ``root``'s chain that exists or gets rows."""
    chain = [root, *model.nested_tables(root)]
    pk, mk = model.primary_key(root), model.merge_key(root)
    staged_root = package.get(root)
    if staged_root is None:  # only nested rows arrived: nothing to match, keep them
        return {t: _union(existing.get(t), package.get(t)) for t in chain if t in package}
    # a root alone (Arrow data, loaded without _dlt_id as dlt does) merges by its keys only
    alone = len(chain) == 1 and model.row_key(root) is None
    row_key = "" if alone else _row_key(model, root, load_id)
    current = existing.get(root)
    out: dict[str, DataFrame] = {}
    doomed_ids = None
    if current is not None:
        pairs = [_same(k) for k in pk] if pk else []
        merged = [_same(k) for k in mk] if mk else []
        condition = _any([_all(pairs), _all(merged)])
        if alone:
            kept_current = current.alias("d").join(staged_root.alias("s"), condition, "left_anti")
        else:
            doomed = current.alias("d").join(staged_root.alias("s"), condition, "left_semi")
            doomed_ids = doomed.select(_col(row_key).alias(_ID))
            kept_current = _without(current, row_key, doomed_ids)
    kept_staged = _dedup(model, root, staged_root, pk) if pk else staged_root
    out[root] = _union(kept_current if current is not None else None, kept_staged)
    if alone:
        return out
    kept_ids = kept_staged.select(_col(row_key).alias(_ID))
    for table in chain[1:]:
        old = existing.get(table)
        if old is not None and doomed_ids is not None:
            nested_key = _row_key(model, table, load_id)
            gone = _belonging(model, table, old, doomed_ids, existing.get, load_id)
            old = _without(old, nested_key, gone.select(_col(nested_key).alias(_ID)))
        new = package.get(table)
        if new is not None and pk:
            new = _belonging(model, table, new, kept_ids, package.get, load_id)
        if old is not None or new is not None:
            out[table] = _union(old, new)
    return out


def _dedup(model: TableModel, root: str, rows: DataFrame, keys: list[str]) -> DataFrame:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    order = [_col(c).asc() if d == "asc" else _col(c).desc() for c, d in model.dedup_sort(root)]
    numbered = rows.withColumn(_ORDER, F.monotonically_increasing_id())
    window = Window.partitionBy(*[_col(k) for k in keys]).orderBy(*order, F.col(_ORDER))
    ranked = numbered.withColumn(_RN, F.row_number().over(window))
    return ranked.where(F.col(_RN) == 1).drop(_RN, _ORDER)


def _belonging(
    model: TableModel,
    table: str,
    rows: DataFrame,
    root_ids: DataFrame,
    lookup: Lookup,
    load_id: str,
) -> DataFrame:
    """The rows of ``table`` that belong to the root rows in ``root_ids`` (column ``_ID``)."""
    root_key = model.root_key(table)
    parent = model.parent(table)
    parent_key = model.parent_key(table)
    if root_key is not None:
        return rows.join(root_ids, _col(root_key) == _col(_ID), "left_semi")
    if parent is None or parent_key is None:
        raise LoadFailed(load_id, table, "nested table has neither root key nor parent key")
    if parent == model.root(table):
        return rows.join(root_ids, _col(parent_key) == _col(_ID), "left_semi")
    parents = lookup(parent)
    if parents is None:
        return rows.limit(0)
    owners = _belonging(model, parent, parents, root_ids, lookup, load_id)
    owner_ids = owners.select(_col(_row_key(model, parent, load_id)).alias(_ID))
    return rows.join(owner_ids, _col(parent_key) == _col(_ID), "left_semi")


def _col(name: str, alias: str | None = None) -> Column:
    """A column by name, quoted (names may hold dots), optionally of an aliased side."""
    from pyspark.sql import functions as F

    return F.col(f"{alias}.{quote(name)}" if alias else quote(name))


def _same(key: str) -> Column:
    """Existing row ``d`` and package row ``s`` agree on ``key``."""
    return _col(key, "d") == _col(key, "s")


def _without(rows: DataFrame, key: str, ids: DataFrame) -> DataFrame:
    """``rows`` whose ``key`` is not among ``ids`` (column ``_ID``)."""
    return rows.join(ids, _col(key) == _col(_ID), "left_anti")


def _row_key(model: TableModel, table: str, load_id: str) -> str:
    key = model.row_key(table)
    if key is None:
        raise LoadFailed(load_id, table, "a merge needs a row key column (_dlt_id)")
    return key


def _union(first: DataFrame | None, second: DataFrame | None) -> DataFrame:
    if first is None:
        assert second is not None
        return second
    if second is None:
        return first
    return first.unionByName(second, allowMissingColumns=True)


def _all(conditions: list[Column]) -> Column | None:
    if not conditions:
        return None
    result = conditions[0]
    for condition in conditions[1:]:
        result = result & condition
    return result


def _any(conditions: list[Column | None]) -> Column:
    present = [c for c in conditions if c is not None]
    result = present[0]
    for condition in present[1:]:
        result = result | condition
    return result
