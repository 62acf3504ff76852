"""Identifiers of one task: source keys, column and table names, remembered once each.

Every key of every item is normalized, and most keys repeat on every line, so each name is
computed once per task and looked up after that. The source spelling of each name is kept
too: the driver names it when two source keys collide into one identifier.
"""

from __future__ import annotations

from loadstone.naming import NamingConvention
from loadstone.plugins.normalizers.relational.native import PrefixNames

#: source key -> (normalized key path, column name), for one flatten prefix
KeyNames = dict[str, tuple[tuple[str, ...], str]]


class BlankKey(str):
    """``_empty``, the name of a blank source key, marked as blank.

    Why a mark: a blank key's column is ``<parent>___empty`` (dlt's), but a list under a blank
    key of a nested object adds nothing to its table's name (``t__nested``, as dlt names it),
    and a key spelled ``_empty`` must keep its part in both.
    """

    __slots__ = ()


#: the one marked name of every blank key
BLANK_KEY = BlankKey("_empty")


def list_table_parts(parts: tuple[str, ...]) -> tuple[str, ...]:
    """The table-name parts of a list at ``parts``: a last blank key is dropped (dlt's name),
    unless it is the only part (its rows would go into the parent table itself)."""
    if len(parts) > 1 and isinstance(parts[-1], BlankKey):
        return parts[:-1]
    return parts


class ColumnNames:
    """The naming convention's answers for this task, and where each name came from."""

    __slots__ = (
        "_col_cache",
        "_col_parts",
        "_key_cache",
        "_key_source",
        "_naming",
        "_table_cache",
        "_use_break_path",
        "_variant_cache",
        "name_of",
        "prefix_names",
        "table_source",
    )

    def __init__(self, naming: NamingConvention, use_break_path: bool) -> None:
        self._naming = naming
        self._use_break_path = use_break_path
        self._key_cache: dict[str, str] = {}
        self._key_source: dict[str, str] = {}
        self._col_cache: dict[tuple[str, ...], str] = {}
        self._col_parts: dict[str, tuple[str, ...]] = {}
        self._table_cache: dict[tuple[str, ...], str] = {}
        self._variant_cache: dict[tuple[str, str], str] = {}
        #: table -> the source path it came from (the root's: its source table name)
        self.table_source: dict[str, str] = {}
        #: the flattening's cache, read by the C loop directly (see :meth:`names_under`)
        self.prefix_names: PrefixNames = {}
        #: bound once: the C flattening calls it for every key it has not met under a prefix
        self.name_of = self._name_of

    def norm_key(self, key: str) -> str:
        """A source key in destination form (a blank key is ``_empty``)."""
        try:
            return self._key_cache[key]
        except KeyError:
            pass
        normalized: str
        if not key.strip():
            normalized = BLANK_KEY
        elif self._use_break_path:
            normalized = self._naming.normalize_path(key)
        else:
            normalized = self._naming.normalize_identifier(key)
        self._key_cache[key] = normalized
        self._key_source.setdefault(normalized, key)
        return normalized

    def col_name(self, parts: tuple[str, ...]) -> str:
        """The column of a path of normalized keys (a nested dict's keys join their parent's)."""
        try:
            return self._col_cache[parts]
        except KeyError:
            # str(): a blank key's mark (BlankKey) stays out of column names
            name = str(parts[0]) if len(parts) == 1 else self._shorten(*parts)
            self._col_cache[parts] = name
            self._col_parts.setdefault(name, parts)
            return name

    def table_name(self, parts: tuple[str, ...]) -> str:
        """The nested table of a path of normalized keys, from the root table on."""
        try:
            return self._table_cache[parts]
        except KeyError:
            name = self._shorten(*parts)
            self._table_cache[parts] = name
            source = "__".join(self._key_source.get(p, p) for p in parts)
            self.table_source.setdefault(name, source)
            return name

    def variant_name(self, column: str, data_type: str) -> str:
        """The variant column that holds values of ``data_type`` for ``column``."""
        name = self._variant_cache.get((column, data_type))
        if name is None:
            name = self._shorten(column, f"v_{data_type}")
            self._variant_cache[(column, data_type)] = name
        return name

    def source_of(self, column: str) -> str:
        """The source key path a column name came from (``a.b`` for ``a__b``)."""
        parts = self._col_parts.get(column)
        if parts is None:
            return column
        return ".".join(self._key_source.get(p, p) for p in parts)

    def names_under(self, prefix: tuple[str, ...]) -> KeyNames:
        """Cache of source key -> (normalized parts, column name) for one flatten prefix."""
        names = self.prefix_names.get(prefix)
        if names is None:
            names = self.prefix_names[prefix] = {}
        return names

    def _name_of(
        self, names: KeyNames, prefix: tuple[str, ...], key: str
    ) -> tuple[tuple[str, ...], str]:
        """Name ``key`` under ``prefix`` and remember it in ``names`` (that prefix's cache)."""
        parts = (*prefix, self.norm_key(key))
        entry = names[key] = (parts, self.col_name(parts))
        return entry

    def _shorten(self, *fragments: str) -> str:
        name = self._naming.shorten_fragments(*fragments)
        assert name is not None  # fragments are never empty here
        return name
