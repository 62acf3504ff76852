"""Values a driver returns as Python objects that dlt loads as text.

dlt reads PostgreSQL through psycopg2, which returns ``inet`` / ``cidr`` as text; loadstone
reads it through psycopg 3, which returns ``ipaddress`` objects (and an ``interval`` as a
``timedelta``, which dlt cannot load at all). Such a value becomes its text here, so the
column is ``text`` with the value PostgreSQL prints (``192.168.0.1``, ``10.0.0.0/8``) and an
interval reads ``1 day, 2:03:04``; a MySQL ``SET`` (PyMySQL gives a Python set, which dlt's
sqlalchemy backend fails on) is the JSON list of its members. A column is tested by its first value that is not null (a
database column holds one type), so the other columns cost one ``isinstance`` per chunk.
"""

from __future__ import annotations

import datetime as _dt
import ipaddress
from collections.abc import Sequence

import orjson

#: the Python types written as their text
TEXT_TYPES: tuple[type, ...] = (
    ipaddress.IPv4Address,
    ipaddress.IPv6Address,
    ipaddress.IPv4Network,
    ipaddress.IPv6Network,
    ipaddress.IPv4Interface,
    ipaddress.IPv6Interface,
    _dt.timedelta,
    set,
    frozenset,
)


def as_text(value: object) -> str:
    """The text of one value: a MySQL ``SET`` (a Python set) as the JSON list of its members
    in order (``["a","c"]``, what dlt's pyarrow backend writes, sorted), others as ``str``."""
    if isinstance(value, (set, frozenset)):
        return orjson.dumps(sorted(value)).decode("utf-8")
    return str(value)


def text_columns(rows: Sequence[Sequence[object]], width: int) -> list[int]:
    """The positions of the columns whose values are written as text (see the module)."""
    found: list[int] = []
    for index in range(width):
        first = next((row[index] for row in rows if row[index] is not None), None)
        if isinstance(first, TEXT_TYPES):
            found.append(index)
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
