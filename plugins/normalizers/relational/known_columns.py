"""Hints code gives for columns a table already holds: one rule for rows and Arrow tables.

A column that holds data keeps its type (the destination's column is made); what else code
says of it (``incremental``, ``unique``, ``nullable``, a key) applies from this load on, and
the schema records a new version, as dlt 1.31 does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from loadstone.schema import Column, Schema, Table


def hints_on_known_columns(
    hinted: Mapping[str, Column], known: Mapping[str, Column]
) -> list[Column]:
    """The hints of ``hinted`` on the typed columns of ``known``, without their data types."""
    return [_retyped(c, known[n]) for n, c in hinted.items() if n in known and known[n].is_complete]


def _retyped(hinted: Column, known: Column) -> Column:
    """A typed decimal also keeps its precision and scale (the destination's column holds
    them: see ``schema_updates.known_decimals``)."""
    if known.data_type == "decimal":
        return attrs.evolve(hinted, data_type=None, precision=known.precision, scale=known.scale)
    return attrs.evolve(hinted, data_type=None)


def drop_untyped(schema: Schema, table_name: str, names: Sequence[str]) -> None:
    """Take the untyped declarations of ``names`` out of the table (they come back typed)."""
    table = schema.tables[table_name]
    untyped = {n for n in names if n in table.columns and not table.columns[n].is_complete}
    if untyped:
        kept = {n: c for n, c in table.columns.items() if n not in untyped}
        schema.replace_table(attrs.evolve(table, columns=kept))


def with_hinted_columns(
    schema: Schema, table_name: str, hinted: Mapping[str, Column]
) -> Mapping[str, Column]:
    """The table's columns once it took the hinted columns it lacks, data or not (as dlt
    1.31's extract adds them: typed ones are made at the destination)."""
    known = schema.tables[table_name].columns
    declared = [column for name, column in hinted.items() if name not in known]
    if declared:
        schema.update_table(Table(table_name, columns=declared))
    return schema.tables[table_name].columns
