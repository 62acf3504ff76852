"""Hints code gives for columns a table already holds: one rule for rows and Arrow tables.

A column that holds data keeps its type (the destination's column is made); what else code
says of it (``incremental``, ``unique``, ``nullable``, a key) applies from this load on, and
the schema records a new version, as dlt 1.31 does.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from loadstone.schema import Column


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
