"""Identifier collisions on case-insensitive destinations.

A case-sensitive naming convention (``sql_cs_v1``, ``direct``, ``duck_case``) keeps ``Id``
and ``id`` apart; a destination that folds case (DuckDB, Postgres unquoted, Snowflake ...)
would store both in the same column or table. Merging them silently loses data, so the load
stops **before any data moves** and the error names both identifiers.

Two entry points:

* :func:`find_identifier_collisions` is pure and works on ``(normalized, source)`` pairs:
  the normalizer calls it per batch with the identifiers it just produced;
* :func:`check_case_collisions` checks a whole schema (tables, and columns per table).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import attrs

from loadstone.exceptions import IdentifierCollisionError

if TYPE_CHECKING:
    from loadstone.schema.schema import Schema

__all__ = [
    "Collision",
    "check_batch_collisions",
    "check_case_collisions",
    "find_identifier_collisions",
]


@attrs.frozen
class Collision:
    """Identifiers that become one after case folding.

    ``identifiers``: ``(normalized identifier, source identifier)`` pairs, in first-seen order.
    ``table`` is the table holding colliding columns, ``None`` for colliding table names.
    """

    folded: str
    identifiers: tuple[tuple[str, str], ...]
    table: str | None = None

    @property
    def kind(self) -> str:
        return "table" if self.table is None else "column"

    def describe(self) -> str:
        names = " and ".join(
            repr(source) if source == normalized else f"{source!r} (as {normalized!r})"
            for normalized, source in self.identifiers
        )
        where = f" in table {self.table!r}" if self.table is not None else ""
        return f"{self.kind}s {names}{where} collide as {self.folded!r}"


def find_identifier_collisions(
    identifiers: Mapping[str, str] | Iterable[tuple[str, str]],
    *,
    table: str | None = None,
) -> list[Collision]:
    """Groups of distinct normalized identifiers that are equal after ``str.casefold``.

    ``identifiers``: ``{normalized: source}`` or ``(normalized, source)`` pairs (the same
    normalized identifier from several sources is not a collision: the convention merged
    them on purpose). ``table`` tags the result for column collisions.
    """
    pairs = identifiers.items() if isinstance(identifiers, Mapping) else identifiers
    groups: dict[str, dict[str, str]] = {}
    for normalized, source in pairs:
        group = groups.setdefault(normalized.casefold(), {})
        group.setdefault(normalized, source)
    return [
        Collision(folded, tuple(group.items()), table)
        for folded, group in groups.items()
        if len(group) > 1
    ]


def check_case_collisions(
    schema: Schema,
    has_case_sensitive_identifiers: bool,
    *,
    source_identifiers: Mapping[str, str] | None = None,
) -> None:
    """Raise :class:`IdentifierCollisionError` when ``schema`` holds table names, or column
    names within one table, that differ only by case, and the destination is
    case-insensitive (``has_case_sensitive_identifiers`` false).

    ``source_identifiers`` optionally maps schema identifiers back to the source names the
    user wrote, so the message shows those.
    """
    if has_case_sensitive_identifiers:
        return
    sources = source_identifiers or {}
    collisions = find_identifier_collisions(
        (name, sources.get(name, name)) for name in schema.tables
    )
    for table in schema.tables.values():
        collisions.extend(
            find_identifier_collisions(
                ((name, sources.get(name, name)) for name in table.columns), table=table.name
            )
        )
    if collisions:
        raise IdentifierCollisionError(collisions, schema.name)


def check_batch_collisions(
    schema: Schema | None,
    has_case_sensitive_identifiers: bool,
    *,
    tables: Mapping[str, str] | None = None,
    columns: Mapping[str, Mapping[str, str]] | None = None,
) -> None:
    """Check identifiers a batch produced, together with those already in ``schema``.

    ``tables``: ``{normalized table: source name}``; ``columns``: ``{normalized table:
    {normalized column: source key}}``. Identifiers already in the schema take part (as their
    own source), so ``id`` arriving after ``Id`` was loaded is caught too. Raises
    :class:`IdentifierCollisionError` before anything is written.
    """
    if has_case_sensitive_identifiers:
        return
    known_tables = dict.fromkeys(schema.tables if schema is not None else ())
    table_pairs = [(name, name) for name in known_tables if name not in (tables or {})]
    table_pairs.extend((tables or {}).items())
    collisions = find_identifier_collisions(table_pairs)
    for table_name, new_columns in (columns or {}).items():
        existing: Iterable[str] = ()
        if schema is not None and table_name in schema.tables:
            existing = schema.tables[table_name].columns
        pairs = [(name, name) for name in existing if name not in new_columns]
        pairs.extend(new_columns.items())
        collisions.extend(find_identifier_collisions(pairs, table=table_name))
    if collisions:
        raise IdentifierCollisionError(collisions, None if schema is None else schema.name)
