"""A cursor value as the Python type of its column, so the driver binds it as that type.

The last value of an incremental cursor comes back from the pipeline state, where a value
read from a file may be text (``"2024-01-01 00:14:00+00:00"``, ``"19.500"``) or dlt's
marked form (``"\\uf0272024-01-01T00:14:00+00:00"``), and ``initial_value`` / ``end_value``
are whatever the user wrote. Bound as text, PostgreSQL refuses the comparison
(``operator does not exist: timestamp with time zone >= character varying``) and MySQL
compares as strings. So before a value is bound it becomes the column's Python type
(``datetime``, ``date``, ``Decimal``, ``int``, ``UUID``...): the query stays a parameterized
statement and the server compares values of the column's own type.
"""

from __future__ import annotations

import datetime as _dt
import uuid
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING

from loadstone.exceptions import SqlDatabaseError
from loadstone.extract.incremental import state_value
from loadstone.typing import TDataItem

if TYPE_CHECKING:
    import sqlalchemy as sa


def _as_datetime(value: TDataItem) -> _dt.datetime:
    if isinstance(value, _dt.datetime):
        return value
    if isinstance(value, _dt.date):
        return _dt.datetime.combine(value, _dt.time())
    return _dt.datetime.fromisoformat(str(value))


def _as_date(value: TDataItem) -> _dt.date:
    if isinstance(value, _dt.datetime):
        return value.date()
    if isinstance(value, _dt.date):
        return value
    return _dt.date.fromisoformat(str(value))


def _as_decimal(value: TDataItem) -> Decimal:
    return value if isinstance(value, Decimal) else Decimal(str(value))


def _as_int(value: TDataItem) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    exact = Decimal(str(value))
    if exact != exact.to_integral_value():
        raise ValueError(f"{value!r} is not a whole number")
    return int(exact)


def _as_uuid(value: TDataItem) -> uuid.UUID:
    return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))


def _as_time(value: TDataItem) -> _dt.time:
    return value if isinstance(value, _dt.time) else _dt.time.fromisoformat(str(value))


#: the column's Python type -> how a cursor value becomes one
_CONVERTERS: dict[type, Callable[[TDataItem], TDataItem]] = {
    _dt.datetime: _as_datetime,
    _dt.date: _as_date,
    _dt.time: _as_time,
    Decimal: _as_decimal,
    int: _as_int,
    uuid.UUID: _as_uuid,
}


def _python_type(column: sa.ColumnElement[object]) -> type | None:
    try:
        found: type = column.type.python_type
    except NotImplementedError:  # a type SQLAlchemy does not map (the value is bound as is)
        return None
    return found


def typed_cursor_value(column: sa.ColumnElement[object], value: TDataItem) -> TDataItem:
    """``value`` (from state or the user) as the Python type of ``column``.

    A float column keeps floats; a ``Numeric(asdecimal=False)`` column says ``float``; a
    text column gets text. A value that does not convert raises :class:`SqlDatabaseError`
    naming the column and value (never a query that compares as text).
    """
    value = state_value(value)
    wanted = _python_type(column)
    if wanted is None or value is None:
        return value
    if wanted is str:
        return value if isinstance(value, str) else str(value)
    if wanted is float and isinstance(value, (int, float, Decimal, str)):
        return float(value)
    convert = _CONVERTERS.get(wanted)
    if convert is None:
        return value
    try:
        return convert(value)
    except (ValueError, TypeError, InvalidOperation) as error:
        raise SqlDatabaseError(
            f"sql_database: the cursor value {value!r} is not a {wanted.__name__} for column "
            f"{column.name!r}: {error}"
        ) from None
