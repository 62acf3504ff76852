"""Values a driver returns as Python objects that dlt loads as text, and values no column holds.

dlt reads PostgreSQL through psycopg2, which returns ``inet`` / ``cidr`` as text; loadstone
reads it through psycopg 3, which returns ``ipaddress`` objects. Such a value becomes its text
here, so the column is ``text`` with the value PostgreSQL prints (``192.168.0.1``,
``10.0.0.0/8``); a MySQL ``SET`` (PyMySQL gives a Python set, which dlt's sqlalchemy backend
fails on) is the JSON list of its members. An ``interval`` (a ``timedelta``) has no data type
to load as, and its printed text (``1 day, 2:03:04``) is no value: the read is refused naming
the column and what to do instead, as dlt 1.31 fails on it. A column is tested by its first
value that is not null (a database column holds one type), so the other columns cost one
``isinstance`` per chunk.
"""

from __future__ import annotations

import datetime as _dt
import ipaddress
from collections.abc import Sequence

import orjson

from loadstone.exceptions import SqlDatabaseError

#: the Python types written as their text
TEXT_TYPES: tuple[type, ...] = (
    ipaddress.IPv4Address,
    ipaddress.IPv6Address,
    ipaddress.IPv4Network,
    ipaddress.IPv6Network,
    ipaddress.IPv4Interface,
    ipaddress.IPv6Interface,
    set,
    frozenset,
)


def as_text(value: object) -> str:
    """The text of one value: a MySQL ``SET`` (a Python set) as the JSON list of its members
    in order (``["a","c"]``, what dlt's pyarrow backend writes, sorted), others as ``str``."""
    if isinstance(value, (set, frozenset)):
        return orjson.dumps(sorted(value)).decode("utf-8")
    return str(value)


def text_columns(rows: Sequence[Sequence[object]], names: Sequence[str], table: str) -> list[int]:
    """The positions of the columns whose values are written as text (see the module); a
    column of durations raises :class:`SqlDatabaseError` naming ``table`` and the column."""
    found: list[int] = []
    for index, name in enumerate(names):
        first = next((row[index] for row in rows if row[index] is not None), None)
        if isinstance(first, TEXT_TYPES):
            found.append(index)
        elif isinstance(first, _dt.timedelta):
            raise SqlDatabaseError(
                f"sql_database: table {table!r}, column {name!r}: an interval has no data type "
                "to load as: select it as a number in a query_adapter_callback (e.g. "
                f"extract(epoch from {name})), or leave the column out with a "
                "table_adapter_callback"
            )
    return found


def as_text_rows(
    rows: Sequence[Sequence[object]], positions: Sequence[int]
) -> list[Sequence[object]]:
    """``rows`` with the values at ``positions`` as text (the rows as they are without any)."""
    if not positions:
        return list(rows)
    out: list[Sequence[object]] = []
    for row in rows:
        values = list(row)
        for index in positions:
            if values[index] is not None:
                values[index] = as_text(values[index])
        out.append(values)
    return out
