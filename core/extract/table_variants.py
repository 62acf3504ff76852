"""Table variants (dlt's ``create_table_variant=True``): hints a resource keeps for one other
table it fills.

A resource fills tables other than its own when a page is marked ``with_table_name``, when
its table name is a function of the item, or when a page comes ``with_hints(...,
create_table_variant=True)``. A *variant* holds hints for one such table, by name; it is made
by ``apply_hints(table_name="b", ..., create_table_variant=True)``, by ``merge_hints(...,
create_table_variant=True)`` or by that ``with_hints`` mark, and a second one for the same
name merges into the first. The items that go to the table get the resource's hints with the
variant's merged over them, and the table records ``variant_name``, as dlt 1.31 does; the
resource's own table and hints stay as they are. This module is that one rule.
"""

from __future__ import annotations

from collections.abc import Mapping

from loadstone.extract.resource_hints import VARIANT_NAME, StoredHint, StoredHints, merge_hints

#: a resource's variants: table name -> the hints given for it (not merged with the resource's)
Variants = Mapping[str, StoredHints]


def variant_table_name(table_name: object) -> str:
    """The name a variant is kept under: a table name given as text (dlt's ``ValueError``
    for a missing or dynamic one: a variant is for one known table)."""
    if not isinstance(table_name, str):
        raise ValueError(
            "Please provide `str` table name if you want to create a table variant of hints"
        )
    return table_name


def add_variant(
    variants: Variants, table_name: object, hints: Mapping[str, StoredHint]
) -> dict[str, StoredHints]:
    """``variants`` with ``hints`` merged into the variant of ``table_name`` (a new dict;
    columns merge, the rest replaces, as for the resource's own hints)."""
    name = variant_table_name(table_name)
    given = {key: value for key, value in hints.items() if key != "name"}
    return {**variants, name: merge_hints(variants.get(name, {}), given)}


def variant_hints(
    base: Mapping[str, StoredHint], variants: Variants, table_name: str
) -> StoredHints | None:
    """The hints of ``table_name`` when a variant names it: the resource's ``base`` hints
    with the variant's merged over them, and ``variant_name``; ``None`` when none does."""
    variant = variants.get(table_name)
    if variant is None:
        return None
    return {**merge_hints(base, variant), VARIANT_NAME: table_name}
