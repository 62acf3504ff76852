"""Reflected SQLAlchemy columns -> dlt column hints, as dlt 1.31 reflects them.

What dlt makes of a column depends on ``reflection_level`` (observed on PostgreSQL and
SQLite, recorded in tests/fixtures/sources/sql_database.json):

* ``minimal``: name, nullability and the primary key only; types come from the data.
* ``full`` (default): also the data type; ``decimal`` keeps precision and scale;
  ``timestamp`` says whether it has a time zone.
* ``full_with_precision``: also a text or binary column's length and ``precision: 32`` on a
  SMALLINT.

Types: integers -> ``bigint``; NUMERIC -> ``decimal``; FLOAT / REAL / DOUBLE -> ``double``
for the Arrow backends, but no type for the ``sqlalchemy`` backend (dlt 1.31 with
SQLAlchemy 2.x does not map them: the type comes from the data, and the column lands after
the typed ones); strings and UUIDs -> ``text``; DATETIME -> ``timestamp``; DATE, TIME;
binaries -> ``binary``; JSON/JSONB -> ``json``; anything else: no type (from the data).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal, TypeAlias, Union, cast

if TYPE_CHECKING:
    import pyarrow as pa
    import sqlalchemy as sa

    from loadstone.schema.stored import TColumnSchema

ReflectionLevel = Literal["minimal", "full", "full_with_precision"]
REFLECTION_LEVELS = ("minimal", "full", "full_with_precision")
TableBackend = Literal["sqlalchemy", "pyarrow", "pandas", "connectorx"]
ARROW_BACKENDS = ("pyarrow", "pandas")

#: a column's SQLAlchemy type (an instance)
SqlType: TypeAlias = "sa.types.TypeEngine[object]"
#: ``type_adapter_callback(sql_type) -> new type | None`` (None keeps the reflected type; a
#: type class is instantiated; see :func:`adapt_types`)
TypeAdapter = Callable[[SqlType], Union[SqlType, "type[sa.types.TypeEngine[object]]", None]]


#: ``Column.info`` key: a float column the database returned as decimals, read as floats
READ_AS_DOUBLE = "loadstone_read_as_double"
#: ``Column.info`` key: the type ``type_adapter_callback`` gave a column, for its hints only
HINT_TYPE = "loadstone_hint_type"


def adapt_types(table: sa.Table, type_adapter: TypeAdapter | None) -> sa.Table:
    """``table`` with what ``type_adapter_callback`` returns for each column (None keeps the
    reflected type; a type class is instantiated).

    As in dlt 1.31, the new type makes the column's hints and the values are read as the
    reflected type (an Arrow page and the normalizer then convert them to the hint), so a
    ``sa.Date`` for a SQLite ``DATETIME`` loads dates instead of failing to parse the stored
    text as a date. One exception, loadstone's own: a numeric made a float type
    (``sa.Numeric(asdecimal=False)``, ``sa.Double()``) is read as floats, typed ``double``.
    """
    import sqlalchemy as sa

    for column in table.columns:
        if isinstance(column.type, sa.Float) and column.type.asdecimal:
            # a MySQL DOUBLE / FLOAT is read as a Decimal rounded to 10 places by default:
            # read the float the database holds, hinted double where dlt hints decimal (and
            # rounds again to 9 places)
            column.type.asdecimal = False
            column.info[READ_AS_DOUBLE] = True
    if type_adapter is None:
        return table
    for column in table.columns:
        new = type_adapter(column.type)
        if new is None:
            continue
        made = new() if isinstance(new, type) else new
        if _reads_floats(column.type, made):
            column.type = made
        else:
            column.info[HINT_TYPE] = made
    return table


def _reads_floats(reflected: SqlType, adapted: SqlType) -> bool:
    """Whether ``adapted`` turns the decimal column ``reflected`` into one of floats."""
    import sqlalchemy as sa

    decimal = isinstance(reflected, sa.Numeric) and not isinstance(reflected, sa.Float)
    floats = isinstance(adapted, (sa.Numeric, sa.Float)) and not adapted.asdecimal
    return decimal and floats


def _type_hints(sql_type: SqlType, with_precision: bool, arrow: bool) -> TColumnSchema:
    """``data_type`` (+ precision, scale, timezone) of one SQLAlchemy type; {} when unknown.

    Long because it is the table of types; each branch is one line of it.
    """
    import sqlalchemy as sa

    if isinstance(sql_type, sa.Boolean):
        return {"data_type": "bool"}
    if isinstance(sql_type, sa.Integer):
        hints: TColumnSchema = {"data_type": "bigint"}
        if with_precision and isinstance(sql_type, sa.SmallInteger):
            hints["precision"] = 32
        return hints
    if isinstance(sql_type, sa.Float):
        return {"data_type": "double"} if arrow else {}
    if isinstance(sql_type, sa.Numeric) and not sql_type.asdecimal:
        return {"data_type": "double"}
    if isinstance(sql_type, sa.Numeric):
        hints = {"data_type": "decimal"}
        if sql_type.precision is not None:
            hints["precision"] = sql_type.precision
            if sql_type.scale is not None:
                hints["scale"] = sql_type.scale
        return hints
    if isinstance(sql_type, (sa.String, sa.Enum)):
        hints = {"data_type": "text"}
        length = getattr(sql_type, "length", None)
        if with_precision and length:
            hints["precision"] = length
        return hints
    if isinstance(sql_type, sa.Uuid):
        return {"data_type": "text"}
    if isinstance(sql_type, sa.DateTime):
        return {"data_type": "timestamp", "timezone": bool(sql_type.timezone)}
    if isinstance(sql_type, sa.Date):
        return {"data_type": "date"}
    if isinstance(sql_type, sa.Time):
        return {"data_type": "time"}
    if isinstance(sql_type, (sa.LargeBinary, sa.BINARY, sa.VARBINARY)):
        hints = {"data_type": "binary"}
        binary_length = sql_type.length
        if with_precision and binary_length:
            hints["precision"] = binary_length
        return hints
    if isinstance(sql_type, (sa.JSON, sa.ARRAY)):
        return {"data_type": "json"}
    return {}


def column_hints(column: sa.Column[object], level: ReflectionLevel, backend: str) -> TColumnSchema:
    """The dlt column hint of one reflected column at ``level`` (see the module docstring)."""
    hints: TColumnSchema = {"name": column.name}
    if column.nullable is not None:
        hints["nullable"] = bool(column.nullable)
    elif column.primary_key:  # nullability taken away (remove_nullability_adapter): dlt's
        hints["nullable"] = False
    if level != "minimal":
        with_precision = level == "full_with_precision"
        sql_type = column.info.get(HINT_TYPE, column.type)
        hints.update(_type_hints(sql_type, with_precision, backend in ARROW_BACKENDS))
        if column.info.get(READ_AS_DOUBLE):
            hints["data_type"] = "double"
    if column.primary_key:  # after the type, in dlt's order of a column's keys
        hints["primary_key"] = True
    return hints


def table_hints(table: sa.Table, level: ReflectionLevel, backend: str) -> dict[str, TColumnSchema]:
    """Column hints of the columns of ``table``, in the table's order; at ``minimal`` none
    for a JSON or ARRAY column of the ``sqlalchemy`` backend, as dlt's: its values take the
    shape the data gives them (a document flattened into ``payload__k`` columns, a list into a
    child table). The ``pyarrow`` backend keeps such a column whole, typed ``json`` as dlt
    1.31 types its documents; ``pandas`` keeps it too (dlt: ``text``)."""
    import sqlalchemy as sa

    hints: dict[str, TColumnSchema] = {}
    for c in table.columns:
        hint = column_hints(c, level, backend)
        if level == "minimal" and isinstance(c.type, (sa.JSON, sa.ARRAY)):
            if backend not in ARROW_BACKENDS:
                continue
            hint["data_type"] = "json" if backend == "pyarrow" else "text"
        if backend in ARROW_BACKENDS and _is_range(c.type):
            hint["data_type"] = "json" if backend == "pyarrow" else "text"
        hints[c.name] = hint
    return hints


def _is_range(sql_type: object) -> bool:
    """Whether a column is a PostgreSQL range (``int4range``, ``tstzrange`` ...): dlt 1.31's
    ``pyarrow`` backend loads one as the JSON of its parts (``{"lower":1,"upper":5,
    "bounds":"[)","empty":false}``), ``pandas`` as PostgreSQL prints it (``[1,5)``); the
    ``sqlalchemy`` backend leaves it to the data (``rg__lower`` ... columns)."""
    from sqlalchemy.dialects.postgresql import AbstractRange

    return isinstance(sql_type, AbstractRange)


def arrow_overlay(
    reflected: dict[str, TColumnSchema], schema: pa.Schema
) -> dict[str, TColumnSchema]:
    """connectorx's hints, as dlt's: what the Arrow column says (an ``int`` is ``bigint``
    with precision 32, a MySQL ``BIT`` binary), then the reflected hint over it (a ``json``
    column stays json, a ``numeric(10, 2)`` keeps its size)."""
    from loadstone.schema.arrow_types import column_from_arrow

    merged: dict[str, TColumnSchema] = {}
    for name, hints in reflected.items():
        index = schema.get_field_index(name)
        column = column_from_arrow(name, schema.field(index).type) if index >= 0 else None
        from_arrow = dict(column.to_dict()) if column is not None else {}
        from_arrow.pop("nullable", None)
        merged[name] = cast("TColumnSchema", {**from_arrow, **hints})
    return merged


def arrow_type(hints: TColumnSchema) -> pa.DataType | None:
    """The Arrow type a column with these hints is built with (None: Arrow infers it)."""
    import pyarrow as pa

    data_type = hints.get("data_type")
    if data_type == "decimal":
        precision = hints.get("precision")
        if precision is None or precision > 38:
            return None  # NUMERIC without a declared size: Arrow infers from the values
        return pa.decimal128(precision, hints.get("scale") or 0)
    if data_type == "timestamp":
        return pa.timestamp("us", tz="UTC" if hints.get("timezone") else None)
    simple: dict[str, pa.DataType] = {
        "bool": pa.bool_(),
        "bigint": pa.int64(),
        "double": pa.float64(),
        "text": pa.string(),
        "date": pa.date32(),
        "time": pa.time64("us"),
        "binary": pa.binary(),
        "json": pa.string(),
    }
    return simple.get(str(data_type)) if data_type else None
