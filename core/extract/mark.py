"""``loadstone.mark``: marks a resource yields beside its data, as ``dlt.mark``.

A resource function may yield a page wrapped in a mark instead of bare data:
``with_table_name(page, "orders")`` sends that page to another table,
``with_hints(page, make_hints(...))`` changes the hints of the resource's table from then on,
``materialize_table_schema()`` creates the resource's table even when no row arrives. The
extractor unwraps marks; steps such as ``add_map`` act on the data inside them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import attrs

from loadstone.extract.resource_hints import (
    StoredHint,
    StoredHints,
    additional_hint_dict,
    check_file_format,
    cursor_column_hints,
    merge_hints,
    nested_hint_list,
    normalize_columns,
    normalize_write_disposition,
    reference_list,
)
from loadstone.extract.resource_hints import make_hints as hint_dict
from loadstone.typing import (
    TAnySchemaColumns,
    TColumnNames,
    TDataItem,
    TLoaderFileFormat,
    TSchemaContract,
    TTableFormat,
    TTableHintTemplate,
    TWriteDispositionConfig,
)

if TYPE_CHECKING:
    from loadstone.extract.incremental import Incremental


@attrs.frozen
class DataItemWithMeta:
    """A page of data and what to do with it (one of the ``*Meta`` classes below)."""

    meta: Meta
    data: TDataItem


@attrs.frozen
class TableNameMeta:
    table_name: str


@attrs.frozen
class HintsMeta:
    hints: Mapping[str, StoredHint]
    create_table_variant: bool = False


#: keys of dlt's hint dict that become table keys as they are
_TABLE_KEYS = ("references", "parent_table_name", "additional_table_hints")

#: the stored hint that makes a table exist without data (read by the normalizer)
MATERIALIZE_HINT = "x-materialize"


@attrs.frozen
class MaterializeTableSchema:
    """The page that makes the table exist without data."""


#: what a mark asks for: another table, new hints, or the table without data
Meta = TableNameMeta | HintsMeta | MaterializeTableSchema


def with_table_name(item: TDataItem, table_name: str) -> DataItemWithMeta:
    """Send ``item`` (one item or a list of them) to ``table_name``."""
    return DataItemWithMeta(TableNameMeta(table_name), item)


def with_hints(
    item: TDataItem,
    hints: Mapping[str, StoredHint] | None = None,
    create_table_variant: bool = False,
) -> DataItemWithMeta:
    """Apply ``hints`` (from :func:`make_hints`) to the resource's table, then yield ``item``."""
    stored = stored_hints_of(hints or {})
    if isinstance(item, DataItemWithMeta) and isinstance(item.meta, MaterializeTableSchema):
        # dlt's way to declare a table with no rows: the hints' table, made from its columns
        return DataItemWithMeta(HintsMeta({**stored, MATERIALIZE_HINT: True}), None)
    return DataItemWithMeta(HintsMeta(stored, create_table_variant), item)


def stored_hints_of(hints: Mapping[str, StoredHint]) -> StoredHints:
    """dlt's hint dict (``make_hints`` form) -> the hint dict extract stores per table."""
    known = ("columns", "write_disposition", "primary_key", "merge_key", "schema_contract")
    # the cursor is the resource's (``merge_hints`` binds it); a page's hints have no use
    # for it, as dlt's
    extra = ("name", "table_name", "table_format", "file_format", "nested_hints", "incremental")
    ignored = ("original_columns",)  # dlt's copy of the columns as given: nothing to apply
    unknown = set(hints) - {*known, *_TABLE_KEYS, *extra, *ignored}
    if unknown:
        raise TypeError(f"hints {', '.join(sorted(unknown))} are not supported by loadstone")
    out = hint_dict(
        write_disposition=hints.get("write_disposition"),
        primary_key=hints.get("primary_key"),
        merge_key=hints.get("merge_key"),
        columns=hints.get("columns") or None,
        schema_contract=hints.get("schema_contract"),
        table_format=hints.get("table_format"),
        file_format=hints.get("file_format"),
        references=hints.get("references"),
        additional_table_hints=hints.get("additional_table_hints"),
        parent_table_name=hints.get("parent_table_name"),
        nested_hints=hints.get("nested_hints"),
    )
    table_name = hints.get("table_name", hints.get("name"))  # dlt's key, or the stored one
    if table_name is not None:
        out["name"] = table_name
    if hints.get("incremental") is not None:  # a page's cursor only marks its column (dlt's)
        out = merge_hints(out, cursor_column_hints(hints["incremental"].cursor_path))
    return out


def materialize_table_schema() -> DataItemWithMeta:
    """Yield this from a resource to create its table even when it yields no rows."""
    return DataItemWithMeta(MaterializeTableSchema(), None)


def make_hints(
    table_name: TTableHintTemplate[str] | None = None,
    parent_table_name: TTableHintTemplate[str] | None = None,
    write_disposition: TWriteDispositionConfig | None = None,
    columns: TAnySchemaColumns | None = None,
    primary_key: TColumnNames | None = None,
    merge_key: TColumnNames | None = None,
    schema_contract: TSchemaContract | None = None,
    table_format: TTableFormat | None = None,
    file_format: TLoaderFileFormat | None = None,
    additional_table_hints: Mapping[str, object] | None = None,
    references: object = None,
    incremental: Incremental | None = None,
    nested_hints: Mapping[str | tuple[str, ...], Mapping[str, StoredHint]] | None = None,
) -> StoredHints:
    """Hints for :func:`with_hints` or ``merge_hints``: dlt's ``make_hints``.

    ``incremental`` becomes the resource's cursor in ``merge_hints`` (a page's hints do not
    filter, as dlt's); ``nested_hints`` are the nested tables' hints, as on the resource.
    """
    hints: StoredHints = {"columns": normalize_columns(columns) if columns else {}}
    for name, value in (
        ("write_disposition", write_disposition),
        ("primary_key", primary_key),
        ("merge_key", merge_key),
        ("schema_contract", schema_contract),
        ("table_format", table_format),
        ("file_format", file_format),
    ):
        if value is not None:
            hints[name] = value
    if table_name is not None:
        hints["table_name"] = table_name
    if references is not None:
        hints["references"] = reference_list(references)
    if parent_table_name is not None:
        hints["parent_table_name"] = parent_table_name
    if additional_table_hints is not None:
        hints["additional_table_hints"] = additional_hint_dict(additional_table_hints)
    if nested_hints is not None:
        nested_hint_list(nested_hints)  # a bad one fails where it is given
        hints["nested_hints"] = dict(nested_hints)
    if incremental is not None:
        hints["incremental"] = incremental
    return hints


def make_nested_hints(
    columns: TAnySchemaColumns | None = None,
    schema_contract: TSchemaContract | None = None,
    primary_key: TColumnNames | None = None,
    merge_key: TColumnNames | None = None,
    write_disposition: TWriteDispositionConfig | None = None,
    references: object = None,
    table_format: TTableFormat | None = None,
    file_format: TLoaderFileFormat | None = None,
    additional_table_hints: Mapping[str, object] | None = None,
    parent_table_name: str | None = None,
    table_name: object = None,
    incremental: object = None,
    nested_hints: object = None,
) -> StoredHints:
    """Hints for one nested table, for ``nested_hints={"field": make_nested_hints(...)}``
    (dlt's keys: a key breaks the table's link to its parent, see ``nested_hint_list``).

    It takes ``make_hints``'s arguments, as dlt's: formats and additional hints go into the
    nested table; ``table_name``, ``incremental`` and ``nested_hints`` are kept and unused
    (a nested table's name is its path, as in dlt). ``parent_table_name`` is refused: dlt
    records a parent whose rows the table's ``_dlt_parent_id`` does not reference."""
    if parent_table_name is not None:
        raise TypeError(
            "make_nested_hints(parent_table_name=...) is not supported by loadstone: a nested "
            "table's parent is the table its path is under"
        )
    from loadstone.schema.contracts import SchemaContract

    hints: StoredHints = {"columns": normalize_columns(columns)}
    if schema_contract is not None:
        SchemaContract.parse(schema_contract)  # a bad contract fails where it is given
        hints["schema_contract"] = schema_contract
    if write_disposition is not None:
        normalize_write_disposition(write_disposition)  # a bad one fails where it is given
        hints["write_disposition"] = write_disposition
    if references is not None:
        hints["references"] = reference_list(references)
    if additional_table_hints is not None:
        hints["additional_table_hints"] = additional_hint_dict(additional_table_hints)
    given = (
        ("primary_key", primary_key),
        ("merge_key", merge_key),
        ("table_format", table_format),
        ("file_format", check_file_format(file_format)),
        ("table_name", table_name),
        ("incremental", incremental),
        ("nested_hints", nested_hints),
    )
    hints.update((name, value) for name, value in given if value is not None)
    return hints


def unwrap(page: TDataItem) -> tuple[TDataItem, Callable[[TDataItem], TDataItem]]:
    """(the data of a page, a function that wraps new data in the page's mark again)."""
    if isinstance(page, DataItemWithMeta):
        return page.data, lambda data: DataItemWithMeta(page.meta, data)
    return page, _identity


def _identity(data: TDataItem) -> TDataItem:
    return data
