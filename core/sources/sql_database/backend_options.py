"""``backend_kwargs`` of ``sql_database`` / ``sql_table`` for the ``pyarrow`` and ``pandas``
backends, as dlt 1.31 passes them on (observed from the outside, ``tests/fixtures/
sql_database/dlt_backend_kwargs.json``).

* ``pyarrow``: ``tz`` is the time zone of the timestamp columns that carry one (the instants
  are the same; ``"UTC"`` by default); any other key is ignored, as in dlt.
* ``pandas``: the keys are those of ``pandas.read_sql``'s conversion of rows into a frame
  (``coerce_float``, ``parse_dates``, ``dtype``, ``dtype_backend``, ``index_col``), with
  dlt's default ``dtype_backend="pyarrow"``; an unknown key fails the extract with pandas'
  own ``TypeError`` naming it.
* ``sqlalchemy`` ignores them (dlt does); ``connectorx`` passes them to ``read_sql``
  (:mod:`.connectorx_pages`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from loadstone.typing import TDataItem

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["arrow_with_options", "frame_with_options"]


def arrow_with_options(table: pa.Table, options: Mapping[str, object] | None) -> pa.Table:
    """``table`` with its zoned timestamps in the time zone ``options["tz"]`` (if given)."""
    import pyarrow as pa

    tz = (options or {}).get("tz")
    if not tz:
        return table
    fields = [
        field.with_type(pa.timestamp(field.type.unit, tz=str(tz)))
        if pa.types.is_timestamp(field.type) and field.type.tz is not None
        else field
        for field in table.schema
    ]
    return table.cast(pa.schema(fields, metadata=table.schema.metadata))


def frame_with_options(table: pa.Table, options: Mapping[str, object]) -> TDataItem:
    """The page as ``pandas.read_sql`` would make it of the same rows, with ``options``."""
    from pandas.io.sql import (  # type: ignore[import-untyped,unused-ignore]  # no stubs
        _wrap_result,  # read_sql's own rows -> frame step, the one its arguments configure
    )

    rows = list(zip(*(column.to_pylist() for column in table.columns), strict=True))
    return _wrap_result(rows, table.column_names, **{"dtype_backend": "pyarrow", **options})
