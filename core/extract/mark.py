"""``loadstone.mark``: marks a resource yields beside its data, as ``dlt.mark``.

A resource function may yield a page wrapped in a mark instead of bare data:
``with_table_name(page, "orders")`` sends that page to another table,
``with_hints(page, make_hints(...))`` changes the hints of the resource's table from then on,
``materialize_table_schema()`` creates the resource's table even when no row arrives. The
extractor unwraps marks; steps such as ``add_map`` act on the data inside them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs


@attrs.frozen
class DataItemWithMeta:
    """A page of data and what to do with it (one of the ``*Meta`` classes below)."""

    meta: Any
    data: Any


@attrs.frozen
class TableNameMeta:
    table_name: str


@attrs.frozen
class HintsMeta:
    hints: Mapping[str, Any]
    create_table_variant: bool = False


@attrs.frozen
class MaterializeTableSchema:
    """The page that makes the table exist without data."""


def with_table_name(item: Any, table_name: str) -> DataItemWithMeta:
    """Send ``item`` (one item or a list of them) to ``table_name``."""
    return DataItemWithMeta(TableNameMeta(table_name), item)


def with_hints(
    item: Any, hints: Mapping[str, Any] | None = None, create_table_variant: bool = False
) -> DataItemWithMeta:
    """Apply ``hints`` (from :func:`make_hints`) to the resource's table, then yield ``item``."""
    if create_table_variant:
        raise TypeError("with_hints(create_table_variant=True) is not supported by loadstone")
    return DataItemWithMeta(HintsMeta(_internal_hints(hints or {}), create_table_variant), item)


def _internal_hints(hints: Mapping[str, Any]) -> dict[str, Any]:
    """dlt's hint dict (``make_hints`` form) -> the hint dict extract stores per table."""
    from loadstone.extract.sources import make_hints as hint_dict

    known = ("columns", "write_disposition", "primary_key", "merge_key", "schema_contract")
    unknown = set(hints) - {*known, "name", "table_format", "file_format"}
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
    )
    if hints.get("name") is not None:
        out["name"] = hints["name"]
    return out


def materialize_table_schema() -> DataItemWithMeta:
    """Yield this from a resource to create its table even when it yields no rows."""
    return DataItemWithMeta(MaterializeTableSchema(), None)


def make_hints(
    table_name: str | Callable[[Any], str] | None = None,
    parent_table_name: Any = None,
    write_disposition: Any = None,
    columns: Any = None,
    primary_key: Any = None,
    merge_key: Any = None,
    schema_contract: Any = None,
    table_format: Any = None,
    file_format: Any = None,
    additional_table_hints: Any = None,
    references: Any = None,
    incremental: Any = None,
    nested_hints: Any = None,
) -> dict[str, Any]:
    """Hints for :func:`with_hints` or ``apply_hints``: dlt's ``make_hints``.

    The hints loadstone cannot honour raise ``TypeError`` here rather than be ignored.
    """
    from loadstone.extract.sources import normalize_columns

    for name, value in (
        ("parent_table_name", parent_table_name),
        ("additional_table_hints", additional_table_hints),
        ("references", references),
        ("incremental", incremental),
        ("nested_hints", nested_hints),
    ):
        if value is not None:
            raise TypeError(f"make_hints({name}=...) is not supported by loadstone")
    hints: dict[str, Any] = {"columns": normalize_columns(columns) if columns else {}}
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
        hints["name"] = table_name
    return hints


def make_nested_hints(
    columns: Any = None, schema_contract: Any = None, **others: Any
) -> dict[str, Any]:
    """Hints for one nested table, for ``nested_hints={"field": make_nested_hints(...)}``:
    ``columns`` and ``schema_contract`` (other hints raise ``TypeError`` rather than be
    ignored)."""
    for name, value in others.items():
        if value is not None:
            raise TypeError(f"make_nested_hints({name}=...) is not supported by loadstone")
    from loadstone.extract.sources import normalize_columns
    from loadstone.schema.contracts import SchemaContract

    hints: dict[str, Any] = {"columns": normalize_columns(columns)}
    if schema_contract is not None:
        SchemaContract.parse(schema_contract)  # a bad contract fails where it is given
        hints["schema_contract"] = schema_contract
    return hints


def unwrap(page: Any) -> tuple[Any, Callable[[Any], Any]]:
    """(the data of a page, a function that wraps new data in the page's mark again)."""
    if isinstance(page, DataItemWithMeta):
        return page.data, lambda data: DataItemWithMeta(page.meta, data)
    return page, _identity


def _identity(data: Any) -> Any:
    return data
