"""Hints from code: ``columns=``, ``primary_key=``, ``write_disposition=`` ... -> a partial Table.

``@resource(...)``, ``apply_hints(...)`` and ``pipeline.run(...)`` take table hints in the
user's words: column dicts or lists, key names as strings or lists, a write disposition as a
string or ``{"disposition": "merge", "strategy": "scd2"}``. These pure functions turn them
into a :class:`~loadstone.schema.model.Table` that :meth:`Schema.update_table` merges.

Identifiers may be given in source form (``createdAt``) or destination form
(``created_at``): :func:`normalize_hints` puts every identifier through the naming
convention (column names with ``normalize_path``, table names with
``normalize_tables_path``; both idempotent, so destination forms pass unchanged).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs

from loadstone.exceptions import InvalidSchemaError
from loadstone.schema.contracts import SchemaContract
from loadstone.schema.data_types import validate_precision
from loadstone.schema.model import WRITE_DISPOSITIONS, Column, Table

if TYPE_CHECKING:
    from loadstone.naming import NamingConvention
    from loadstone.typing import TSchemaContract

__all__ = [
    "MERGE_STRATEGIES",
    "columns_from_hint",
    "disposition_of",
    "normalize_hints",
    "parse_write_disposition",
    "table_from_hints",
    "write_disposition_hints",
]

MERGE_STRATEGIES: Final[tuple[str, ...]] = ("delete-insert", "scd2", "upsert", "insert-only")

#: the system columns dlt adds to an scd2 table (observed stored form).
_SCD2_VALID_FROM: Final = "_dlt_valid_from"
_SCD2_VALID_TO: Final = "_dlt_valid_to"
_ROW_KEY: Final = "_dlt_id"


def parse_write_disposition(
    value: object,
) -> tuple[str | None, dict[str, object]]:
    """``(disposition, extra table keys)`` from a write_disposition hint.

    ``"merge"`` -> ``("merge", {})``; ``{"disposition": "merge", "strategy": "scd2"}`` ->
    ``("merge", {"x-merge-strategy": "scd2"})`` (dlt's stored key). Further dict keys
    (``validity_column_names``, ``boundary_timestamp`` ...) are kept as ``x-<key>`` table hints.
    As in dlt 1.31, the strategy and options of another disposition are ignored
    (``{"disposition": "replace", "strategy": "staging-optimized"}`` is ``"replace"``).
    """
    extra: dict[str, object] = {}
    disposition: object
    if value is None:
        return None, {}
    if isinstance(value, str):
        disposition = value
    elif isinstance(value, Mapping):
        disposition = value.get("disposition")
        if disposition == "merge":  # dlt ignores a strategy and options of other dispositions
            extra = _merge_options(value)
    else:
        raise InvalidSchemaError(f"write_disposition must be a string or dict, got {value!r}")
    if not isinstance(disposition, str) or disposition not in WRITE_DISPOSITIONS:
        raise InvalidSchemaError(
            f"unknown write_disposition {disposition!r}; use one of {', '.join(WRITE_DISPOSITIONS)}"
        )
    return disposition, extra


def _merge_options(value: Mapping[str, object]) -> dict[str, object]:
    """A merge disposition's strategy and options as stored table keys (``x-...``)."""
    extra: dict[str, object] = {}
    strategy = value.get("strategy")
    if strategy is not None:
        if strategy not in MERGE_STRATEGIES:
            raise InvalidSchemaError(
                f"unknown merge strategy {strategy!r}; use one of {', '.join(MERGE_STRATEGIES)}"
            )
        extra["x-merge-strategy"] = strategy
    for key, item in value.items():
        if key not in ("disposition", "strategy"):
            hint = key if key.startswith("x-") else "x-" + key.replace("_", "-")
            # a boundary or active-record datetime is kept in ISO form, as dlt 1.31 stores it
            extra[hint] = item.isoformat() if isinstance(item, _dt.date) else item
    return extra


def write_disposition_hints(value: object) -> dict[str, object]:
    """A write_disposition hint as stored table keys: ``{"write_disposition": ..., "x-...": ...}``.

    The same parse as :func:`parse_write_disposition`, in the form resources keep their hints.
    """
    disposition, extra = parse_write_disposition(value)
    return {} if disposition is None else {"write_disposition": disposition, **extra}


def disposition_of(table: Mapping[str, object]) -> tuple[str | None, str | None]:
    """``(write disposition, merge strategy)`` a stored table or a hint dict declares.

    Reads dlt's stored form (``write_disposition`` plus ``x-merge-strategy``) and the
    resource form (``write_disposition: {"disposition": ..., "strategy": ...}``); ``None`` for
    what is not declared.
    """
    raw = table.get("write_disposition")
    disposition, extra = parse_write_disposition(raw)
    strategy = table.get("x-merge-strategy") or extra.get("x-merge-strategy")
    return disposition, None if strategy is None else str(strategy)


def _as_list(value: str | Sequence[str] | None) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return list(value)


def columns_from_hint(
    columns: Mapping[str, object] | Sequence[Mapping[str, object] | Column] | None,
) -> dict[str, Column]:
    """Columns from a ``columns=`` hint: ``{name: {hints}}`` or ``[{"name": ..., hints}]``."""
    out: dict[str, Column] = {}
    if columns is None:
        return out
    items: Iterable[tuple[str | None, object]]
    if isinstance(columns, Mapping):
        items = columns.items()
    else:
        items = ((None, c) for c in columns)
    for name, spec in items:
        if isinstance(spec, Column):
            column = spec if name is None else attrs.evolve(spec, name=name)
        elif isinstance(spec, Mapping):
            column = Column.from_dict(spec, name)  # without a key: the dict's own name
            if "name" not in spec:  # dlt adds the name after the hints given
                column = attrs.evolve(column, key_order=(*spec, "name"))
        else:
            raise InvalidSchemaError(f"column hint for {name!r} must be a dict, got {spec!r}")
        if column.data_type is not None:
            validate_precision(column.data_type, column.precision, column.scale)
        out[column.name] = column
    return out


def _mark(columns: dict[str, Column], names: Iterable[str], hint: str) -> None:
    """Mark the key ``names``; a resource-level key replaces the columns' own (as dlt 1.31:
    ``primary_key="a"`` with a column hint ``{"b": {"primary_key": True}}`` keys on ``a``)."""
    names = list(names)
    if names:
        for name, column in list(columns.items()):
            if name not in names and column.hint(hint):
                columns[name] = column.evolve(**{hint: None})
    for name in names:
        # a key holds no null (dlt 1.31's primary and merge keys); the hints in dlt's order:
        # a key column it makes reads {name, nullable, key}, a declared one gets key, nullable
        existing = columns.get(name) or Column(name, nullable=False, key_order=("name", "nullable"))
        changes: dict[str, Any] = {hint: True}
        if existing.nullable is None:
            changes["nullable"] = False
        order = existing.key_order or tuple(existing.to_dict())
        changes["key_order"] = (*order, *(key for key in changes if key not in order))
        columns[name] = attrs.evolve(existing, **changes)


def hints_first(column: Column, hinted: Column) -> Column:
    """``column`` (a typed column with code's hints merged in) with the keys of those hints
    first, in their order, as dlt 1.31 types a hinted column: ``{name, nullable,
    primary_key}`` gets its ``data_type`` last."""
    if not hinted.key_order:
        return column
    order = tuple(hinted.to_dict())
    rest = (key for key in column.to_dict() if key not in order)
    return attrs.evolve(column, key_order=(*order, *rest))


def scd2_columns(extra: Mapping[str, Any]) -> dict[str, Column]:
    """dlt's scd2 validity columns (named by ``validity_column_names``) and the row version
    (``_dlt_id`` as a content hash, or the user's ``row_version_column_name``), with their
    hints in dlt 1.31's order; they replace declared columns of the same names, as dlt's."""
    names = extra.get("x-validity-column-names") or [_SCD2_VALID_FROM, _SCD2_VALID_TO]
    valid_from, valid_to = names[0], names[1]
    version = extra.get("x-row-version-column-name") or _ROW_KEY
    active = extra.get("x-active-record-timestamp")
    # scd2 rows are identified by their version (a content hash in _dlt_id, or the user's
    # row_version_column_name): a version, not a key, and never null, as dlt 1.31 stores it
    row_version = Column(
        version,
        nullable=False,
        unique=False,
        row_key=False,
        extra={"x-row-version": True},
        key_order=("name", "nullable", "x-row-version", "unique", "row_key"),
    )
    return {
        valid_from: Column(
            valid_from, data_type="timestamp", nullable=True, extra={"x-valid-from": True}
        ),
        # dlt writes the active-record key even when unset (observed stored form)
        valid_to: Column(
            valid_to,
            data_type="timestamp",
            nullable=True,
            extra={"x-valid-to": True, "x-active-record-timestamp": active},
        ),
        version: row_version,
    }


def declared_key_order(write_disposition: str | None) -> tuple[str, ...]:
    """dlt 1.31's order of the keys of a table declared by code hints (its
    ``compute_table_schema``, and so the table its schema keeps): a merge's strategy and
    boundary, then its ``write_disposition``, come after the contract, formats and
    references; any other disposition comes right after ``columns``."""
    keys = ("schema_contract", "table_format", "file_format", "references")
    if write_disposition == "merge":
        merge = ("x-merge-strategy", "x-boundary-timestamp", "write_disposition")
        return ("columns", *keys, *merge, "name", "resource")
    return ("columns", "write_disposition", *keys, "name", "resource")


def table_from_hints(
    table_name: str,
    *,
    columns: Mapping[str, object] | Sequence[Mapping[str, object] | Column] | None = None,
    primary_key: str | Sequence[str] | None = None,
    merge_key: str | Sequence[str] | None = None,
    write_disposition: str | Mapping[str, object] | None = None,
    schema_contract: TSchemaContract | None = None,
    parent: str | None = None,
    description: str | None = None,
    resource: str | None = None,
    table_format: str | None = None,
    file_format: str | None = None,
    max_nesting: int | None = None,
) -> Table:
    """A partial table from code hints (identifiers as given: normalize with
    :func:`normalize_hints` before merging into a schema).

    ``primary_key`` columns become ``nullable: false`` unless a column hint says otherwise;
    an ``scd2`` merge adds dlt's ``_dlt_valid_from`` / ``_dlt_valid_to`` columns.
    """
    disposition, extra = parse_write_disposition(write_disposition)
    cols = columns_from_hint(columns)
    _mark(cols, _as_list(primary_key), "primary_key")
    _mark(cols, _as_list(merge_key), "merge_key")
    if extra.get("x-merge-strategy") == "scd2":
        # after the declared columns, as dlt orders them (tests/fixtures/relational/
        # scd2_columns_dlt.json); they replace a declared column of the same name in place
        for name, column in scd2_columns(extra).items():
            cols[name] = column
    if schema_contract is not None:
        SchemaContract.parse(schema_contract)  # validate early, keep the user's form
    if table_format is not None:
        extra["table_format"] = table_format
    if file_format is not None:
        extra["file_format"] = file_format
    if max_nesting is not None:
        extra["x-normalizer"] = {"max_nesting": int(max_nesting)}
    return Table(
        table_name,
        columns=cols,
        write_disposition=disposition,
        parent=parent,
        schema_contract=schema_contract,
        description=description,
        resource=resource,
        extra=extra,
        key_order=declared_key_order(disposition),
    )


def normalize_hints(
    table: Table, naming: NamingConvention, *, use_break_path: bool = True
) -> Table:
    """``table`` with every identifier in destination form.

    ``use_break_path`` (the schema's ``use_break_path_on_normalize``): True normalizes by path
    (``a__b`` stays ``a__b``); False uses the legacy whole-identifier rule.
    """
    norm_col = naming.normalize_path if use_break_path else naming.normalize_identifier
    norm_table = (
        naming.normalize_tables_path if use_break_path else naming.normalize_table_identifier
    )
    columns: dict[str, Column] = {}
    for column in table.columns.values():
        name = norm_col(column.name)
        existing = columns.get(name)
        renamed = attrs.evolve(column, name=name)
        columns[name] = renamed if existing is None else existing.merge(renamed)
    validity = table.extra.get("x-validity-column-names")
    extra = dict(table.extra)
    if isinstance(validity, list):
        extra["x-validity-column-names"] = [norm_col(n) for n in validity]
    version = table.extra.get("x-row-version-column-name")
    if isinstance(version, str):
        extra["x-row-version-column-name"] = norm_col(version)
    return attrs.evolve(
        table,
        name=norm_table(table.name),
        parent=None if table.parent is None else norm_table(table.parent),
        columns=columns,
        extra=extra,
    )
