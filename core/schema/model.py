"""Columns and tables: frozen values in dlt's stored form.

A schema is shared by the pipeline, the normalizer (inside Spark workers) and destinations,
so its parts are immutable values: a change makes a new :class:`Column` or :class:`Table`,
nothing is edited behind another part's back. Every identifier held here is a *destination*
identifier (already normalized by the schema's naming convention).

The stored form is dlt's engine_version 11 dict (``to_dict`` / ``from_dict``). Keys this
model does not know (``x-*`` hints such as ``x-normalizer`` or ``x-merge-strategy``, and any
future dlt key) are kept in ``extra`` and written back unchanged, so a file survives a round
trip through loadstone.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, KeysView, Mapping
from typing import TYPE_CHECKING, Any, Final, cast

import attrs

from loadstone.exceptions import InvalidSchemaError
from loadstone.schema.data_types import is_data_type
from loadstone.schema.stored import TColumnSchema, TTableSchema

if TYPE_CHECKING:
    from loadstone.typing import TSchemaContract

__all__ = [
    "BOOLEAN_HINTS",
    "COLUMN_HINTS",
    "WRITE_DISPOSITIONS",
    "Column",
    "Table",
]

#: boolean column hints, in the order dlt writes them.
BOOLEAN_HINTS: Final[tuple[str, ...]] = (
    "primary_key",
    "unique",
    "merge_key",
    "row_key",
    "parent_key",
    "root_key",
    "partition",
    "cluster",
    "sort",
    "variant",
    "hard_delete",
    "dedup_sort",
)
#: hints that default_hints rules may set (boolean hints plus not_null -> nullable: false).
COLUMN_HINTS: Final[tuple[str, ...]] = ("not_null", *BOOLEAN_HINTS)

WRITE_DISPOSITIONS: Final[tuple[str, ...]] = ("append", "replace", "merge", "skip")

_COLUMN_KEYS: Final = (
    "name",
    "data_type",
    "nullable",
    "precision",
    "scale",
    "timezone",
    *BOOLEAN_HINTS,
    "description",
)
_TABLE_KEYS: Final = (
    "name",
    "columns",
    "write_disposition",
    "parent",
    "schema_contract",
    "description",
    "resource",
)


def _frozen_extra(value: Mapping[str, object] | None) -> dict[str, Any]:
    return dict(value or {})


def _key_order(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


def _check_data_type(
    instance: Column, attribute: attrs.Attribute[str | None], value: str | None
) -> None:
    if value is not None and not is_data_type(value):
        raise InvalidSchemaError(f"unknown data_type {value!r}", column=instance.name)


class StoredFormView:
    """Read access in dlt's stored form: ``table["columns"]["id"]["data_type"]``.

    dlt's schema API hands out plain dicts (``schema.get_table("users")["columns"]``); code
    ported from dlt reads them that way. The values come from ``to_dict()``, so they are
    copies: change a schema through its methods, never through these views.
    """

    def to_dict(self) -> Mapping[str, object]:  # pragma: no cover - each class defines its own
        raise NotImplementedError

    def __getitem__(self, key: str) -> Any:
        return self.to_dict()[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.to_dict().get(key, default)

    def keys(self) -> KeysView[str]:
        return self.to_dict().keys()

    def items(self) -> Any:
        return self.to_dict().items()

    def values(self) -> Any:
        return self.to_dict().values()

    def __contains__(self, key: object) -> bool:
        return key in self.to_dict()

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_dict())

    def __len__(self) -> int:
        return len(self.to_dict())

    def __bool__(self) -> bool:  # never empty: skips building the dict in ``if table:``
        return True

    def __repr__(self) -> str:
        """The stored form, as printing dlt's dict shows it (``print(schema.tables["t"])``)."""
        return repr(dict(self.to_dict()))


@attrs.frozen(kw_only=True, repr=False)
class Column(StoredFormView):
    """One column of a table.

    Hints are tri-state: ``None`` means "not set" (the key is absent from the stored form),
    so a file written by dlt comes back with exactly the keys it had.
    """

    name: str = attrs.field(kw_only=False)
    data_type: str | None = attrs.field(default=None, validator=_check_data_type)
    nullable: bool | None = None
    precision: int | None = None
    scale: int | None = None
    timezone: bool | None = None
    primary_key: bool | None = None
    unique: bool | None = None
    merge_key: bool | None = None
    row_key: bool | None = None
    parent_key: bool | None = None
    root_key: bool | None = None
    partition: bool | None = None
    cluster: bool | None = None
    sort: bool | None = None
    variant: bool | None = None
    hard_delete: bool | None = None
    dedup_sort: str | bool | None = None
    description: str | None = None
    extra: dict[str, Any] = attrs.field(factory=dict, converter=_frozen_extra, hash=False)
    #: key order of the stored dict this column was read from (written back the same way;
    #: not part of equality)
    key_order: tuple[str, ...] = attrs.field(default=(), converter=_key_order, eq=False, repr=False)

    def __repr__(self) -> str:
        """Only the hints that are set: a column has ~20 fields, most of them unset."""
        shown = ", ".join(f"{k}={v!r}" for k, v in self.to_dict(with_name=False).items())
        return f"Column({self.name!r}{', ' if shown else ''}{shown})"

    @property
    def is_complete(self) -> bool:
        """A column with a data type; dlt does not create columns that only saw nulls."""
        return self.data_type is not None

    def hint(self, name: str) -> object:
        """The value of a hint by its stored name (``not_null`` reads ``nullable``)."""
        if name == "not_null":
            return None if self.nullable is None else not self.nullable
        if name in _COLUMN_KEYS:
            return getattr(self, name)
        return self.extra.get(name)

    def evolve(self, **changes: Any) -> Column:
        """A copy with ``changes``; unknown names land in ``extra``."""
        known = {k: v for k, v in changes.items() if k in _COLUMN_KEYS}
        unknown = {k: v for k, v in changes.items() if k not in _COLUMN_KEYS}
        if unknown:
            known["extra"] = {**self.extra, **unknown}
        return attrs.evolve(self, **known)

    def merge(self, partial: Column) -> Column:
        """This column updated with every hint ``partial`` sets (not-``None`` values win)."""
        changes: dict[str, Any] = {
            key: getattr(partial, key)
            for key in _COLUMN_KEYS
            if key != "name" and getattr(partial, key) is not None
        }
        if partial.extra:
            changes["extra"] = {**self.extra, **partial.extra}
        return attrs.evolve(self, **changes) if changes else self

    def to_dict(self, *, with_name: bool = True) -> TColumnSchema:
        """The stored form; only keys that are set. ``with_name=False`` as in pretty YAML."""
        values: dict[str, object] = {"name": self.name} if with_name else {}
        for key in _COLUMN_KEYS[1:]:
            value = getattr(self, key)
            if value is not None:
                values[key] = value
        values.update(self.extra)
        return cast(TColumnSchema, _ordered(values, self.key_order))  # plus x-* keys in extra

    @classmethod
    def from_dict(
        cls, data: TColumnSchema | Mapping[str, object], name: str | None = None
    ) -> Column:
        """Read a stored column; ``name`` (the dict key in ``columns``) wins over ``data['name']``."""
        column_name = name if name is not None else data.get("name")
        if not isinstance(column_name, str) or not column_name:
            raise InvalidSchemaError(f"column without a name: {dict(data)!r}")
        known: dict[str, Any] = {}  # field values, checked by the attrs validators
        extra: dict[str, object] = {}
        for key, value in data.items():
            if key == "name":
                continue
            if key in _COLUMN_KEYS:
                known[key] = value
            else:
                extra[key] = value
        try:
            return cls(column_name, extra=extra, key_order=tuple(data), **known)
        except InvalidSchemaError as ex:
            raise InvalidSchemaError(ex.message, column=column_name) from None


#: the column hints that make a table's key together: a partial table naming one replaces it
COMPOUND_KEYS = ("primary_key", "merge_key")


def _keys_replaced(columns: dict[str, Column], given: Mapping[str, Column]) -> dict[str, Column]:
    """``columns`` with each key of :data:`COMPOUND_KEYS` that ``given`` sets on some column
    taken off the columns ``given`` does not set it on (dlt drops the hint)."""
    for key in COMPOUND_KEYS:
        named = {name for name, column in given.items() if getattr(column, key)}
        if not named:
            continue
        for name, column in columns.items():
            if getattr(column, key) and name not in named:
                dropped: dict[str, Any] = {key: None}
                columns[name] = attrs.evolve(column, **dropped)
    return columns


def _ordered(values: dict[str, object], key_order: tuple[str, ...]) -> dict[str, object]:
    """``values`` with keys in ``key_order`` first (as read from a file), then the rest:
    a document read and written back keeps its key order (dlt's or a user's)."""
    if not key_order:
        return values
    if "name" in values and "name" not in key_order:  # read without a name key: name first
        key_order = ("name", *key_order)
    out = {key: values[key] for key in key_order if key in values}
    out.update((key, value) for key, value in values.items() if key not in out)
    return out


def _columns_dict(value: Mapping[str, Column] | Iterable[Column] | None) -> dict[str, Column]:
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return dict(value)
    return {column.name: column for column in value}


@attrs.frozen(kw_only=True, repr=False)
class Table(StoredFormView):
    """One table: ordered columns plus table hints.

    ``columns`` keeps insertion order, which is the column order at the destination (and is
    part of the schema's version hash). ``extra`` keeps every other stored key, e.g.
    ``x-normalizer`` (normalizer hints such as ``seen-data`` and ``max_nesting``),
    ``x-merge-strategy``, ``file_format``, ``table_format``, ``references``.
    """

    name: str = attrs.field(kw_only=False)
    columns: dict[str, Column] = attrs.field(factory=dict, converter=_columns_dict, hash=False)
    write_disposition: str | None = None
    parent: str | None = None
    #: the contract as given (a mode, a dict per entity, or a SchemaContract)
    schema_contract: TSchemaContract | None = None
    description: str | None = None
    resource: str | None = None
    extra: dict[str, Any] = attrs.field(factory=dict, converter=_frozen_extra, hash=False)
    key_order: tuple[str, ...] = attrs.field(default=(), converter=_key_order, eq=False, repr=False)

    # ---------------------------------------------------------------- convenience views
    @property
    def normalizer_hints(self) -> dict[str, Any]:
        """The ``x-normalizer`` hints (``seen-data``, ``max_nesting`` ...)."""
        return dict(self.extra.get("x-normalizer") or {})

    @property
    def seen_data(self) -> bool:
        """True once the normalizer wrote rows for this table (dlt's ``x-normalizer.seen-data``)."""
        return bool(self.normalizer_hints.get("seen-data"))

    @property
    def max_nesting(self) -> int | None:
        """Table-level nesting limit (``x-normalizer.max_nesting``), if any."""
        value = self.normalizer_hints.get("max_nesting")
        return None if value is None else int(value)

    @property
    def merge_strategy(self) -> str | None:
        """``x-merge-strategy`` (``delete-insert``, ``scd2``, ``upsert``, ``insert-only``)."""
        return self.extra.get("x-merge-strategy")

    @property
    def is_nested(self) -> bool:
        return self.parent is not None

    def column_names(self) -> list[str]:
        return list(self.columns)

    def columns_with_hint(self, hint: str) -> list[str]:
        """Names of columns whose ``hint`` is truthy (``not_null`` means ``nullable: false``)."""
        return [name for name, column in self.columns.items() if column.hint(hint)]

    # ---------------------------------------------------------------- changes
    def evolve(self, **changes: Any) -> Table:
        known = {k: v for k, v in changes.items() if k in _TABLE_KEYS}
        unknown = {k: v for k, v in changes.items() if k not in _TABLE_KEYS}
        if unknown:
            known["extra"] = {**self.extra, **unknown}
        return attrs.evolve(self, **known)

    def with_column(self, column: Column) -> Table:
        """A copy with ``column`` added at the end, or merged into the existing one."""
        columns = dict(self.columns)
        existing = columns.get(column.name)
        columns[column.name] = column if existing is None else existing.merge(column)
        return attrs.evolve(self, columns=columns)

    def with_normalizer_hint(self, key: str, value: object) -> Table:
        hints = {**self.normalizer_hints, key: value}
        return attrs.evolve(self, extra={**self.extra, "x-normalizer": hints})

    def merge(self, partial: Table, *, replace_keys: bool = False) -> Table:
        """This table updated with ``partial``: new columns appended, known ones merged,
        every table hint ``partial`` sets replaces the current one. ``replace_keys`` (dlt's
        ``merge_compound_props=False``): a key ``partial`` sets on some column
        (``primary_key``, ``merge_key``) is taken off the columns it does not set it on."""
        columns = dict(self.columns)
        for name, column in partial.columns.items():
            existing = columns.get(name)
            columns[name] = column if existing is None else existing.merge(column)
        if replace_keys:
            columns = _keys_replaced(columns, partial.columns)
        changes: dict[str, Any] = {"columns": columns}
        for key in _TABLE_KEYS[2:]:
            value = getattr(partial, key)
            if value is not None:
                changes[key] = value
        if partial.extra:
            extra = dict(self.extra)
            for key, value in partial.extra.items():
                if isinstance(value, Mapping) and isinstance(extra.get(key), Mapping):
                    extra[key] = {**extra[key], **value}
                else:
                    extra[key] = value
            changes["extra"] = extra
        return attrs.evolve(self, **changes)

    # ---------------------------------------------------------------- stored form
    def to_dict(self, *, with_names: bool = True) -> TTableSchema:
        """The stored form: columns in order, then the table hints that are set."""
        values: dict[str, object] = {"name": self.name} if with_names else {}
        values["columns"] = {
            name: column.to_dict(with_name=with_names) for name, column in self.columns.items()
        }
        for key in _TABLE_KEYS[2:]:
            value = getattr(self, key)
            if value is not None:
                values[key] = value
        values.update(self.extra)
        return cast(TTableSchema, _ordered(values, self.key_order))  # plus x-* keys in extra

    @classmethod
    def from_dict(cls, data: TTableSchema | Mapping[str, object], name: str | None = None) -> Table:
        table_name = name if name is not None else data.get("name")
        if not isinstance(table_name, str) or not table_name:
            raise InvalidSchemaError(f"table without a name: {sorted(data)!r}")
        raw_columns = data.get("columns") or {}
        columns: dict[str, Column] = {}
        try:
            if isinstance(raw_columns, Mapping):
                for column_name, column_data in raw_columns.items():
                    columns[column_name] = Column.from_dict(column_data or {}, column_name)
            elif isinstance(raw_columns, Iterable):  # dlt's older list of columns
                for column_data in raw_columns:
                    column = Column.from_dict(column_data)
                    columns[column.name] = column
            else:
                raise InvalidSchemaError(f"columns must be a mapping, got {raw_columns!r}")
        except InvalidSchemaError as ex:
            raise InvalidSchemaError(ex.message, table=table_name, column=ex.column) from None
        known: dict[str, Any] = {}  # field values, checked by the attrs validators
        extra: dict[str, object] = {}
        for key, value in data.items():
            if key in ("name", "columns"):
                continue
            if key in _TABLE_KEYS:
                known[key] = value
            else:
                extra[key] = value
        wd = known.get("write_disposition")
        if wd is not None and wd not in WRITE_DISPOSITIONS:
            raise InvalidSchemaError(f"unknown write_disposition {wd!r}", table=table_name)
        return cls(table_name, columns=columns, extra=extra, key_order=tuple(data), **known)
