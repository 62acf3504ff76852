"""dlt's ``dlt.sources.helpers.transform``: small steps to pass to ``add_filter``/``add_map``.

``take_first(n)`` / ``skip_first(n)`` keep or drop a resource's first ``n`` items,
``pivot(paths, prefix)`` turns lists of rows (lists) into lists of dicts with the keys
``<prefix>0``, ``<prefix>1`` ..., and ``add_row_hash_to_table(name)`` adds a column with a hash
of each row of an Arrow table or pandas frame (for ``scd2`` merges of Arrow data, as dlt's
docs show it). What each returns was recorded from dlt 1.31
(``tests/fixtures/sources/transform_helpers.json``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from loadstone.sources.helpers.rest_client.jsonpath import find_values
from loadstone.typing import TDataItem

#: the JSON path of the whole item
_ROOT = "$"


def take_first(max_items: int) -> Callable[[TDataItem], bool]:
    """A filter that keeps the first ``max_items`` items it is called with."""
    count = 0

    def keep(_: TDataItem) -> bool:
        nonlocal count
        count += 1
        return count <= max_items

    return keep


def skip_first(max_items: int) -> Callable[[TDataItem], bool]:
    """A filter that drops the first ``max_items`` items it is called with."""
    count = 0

    def keep(_: TDataItem) -> bool:
        nonlocal count
        count += 1
        return count > max_items

    return keep


def pivot(
    paths: str | Sequence[str] = _ROOT, prefix: str = "col"
) -> Callable[[TDataItem], TDataItem]:
    """A map that replaces each list of rows found at ``paths`` (JSON paths) by a list of
    dicts, ``[[1, 2]]`` -> ``[{"col0": 1, "col1": 2}]``, in the item itself; at ``$`` the
    item is the one row of a new list. A value that is not a list of sequences fails."""
    chosen = [paths] if isinstance(paths, str) else list(paths)

    def pivot_item(item: TDataItem) -> TDataItem:
        for path in chosen:
            if path == _ROOT:
                item = _pivoted([item], path, prefix)
                continue
            for value in find_values(path, item):
                if not _is_sequence(value):
                    raise ValueError(
                        "Pivot transformer is only applicable to sequences fields, however, "
                        f"the value of `{path}` is not a sequence."
                    )
                value[:] = _pivoted(value, path, prefix)
        return item

    return pivot_item


def _pivoted(rows: Sequence[TDataItem], path: str, prefix: str) -> list[dict[str, TDataItem]]:
    if not all(_is_sequence(row) for row in rows):
        raise ValueError(
            "Pivot transformer is only applicable to sequences, however, the value of "
            f"`{path}` includes a non-sequence element."
        )
    return [{f"{prefix}{index}": value for index, value in enumerate(row)} for row in rows]


def _is_sequence(value: object) -> bool:
    return isinstance(value, Sequence)


def add_row_hash_to_table(row_hash_column_name: str) -> Callable[[TDataItem], TDataItem]:
    """A map that adds the column ``row_hash_column_name`` to an Arrow table (or record batch)
    or a pandas frame: each row's hash as pandas computes it (``hash_pandas_object`` without
    the index, as a signed 64-bit integer), dlt's values. A frame gets the column in place."""

    def add(table: TDataItem) -> TDataItem:
        import pandas as pd  # type: ignore[import-untyped,unused-ignore]  # pandas ships no stubs
        import pyarrow as pa

        if isinstance(table, pd.DataFrame):
            table[row_hash_column_name] = _row_hashes(table)
            return table
        if isinstance(table, (pa.Table, pa.RecordBatch)):
            hashes = pa.array(_row_hashes(table.to_pandas()), type=pa.int64())
            return table.append_column(row_hash_column_name, hashes)
        raise TypeError(f"Unexpected type for hashing {type(table)}")

    return add


def _row_hashes(frame: TDataItem) -> TDataItem:
    import numpy as np
    import pandas as pd  # type: ignore[import-untyped,unused-ignore]  # pandas ships no stubs

    return pd.util.hash_pandas_object(frame, index=False).to_numpy().astype(np.int64)
