"""What a destination accepts: the published limits of a real system (identifier lengths,
case rules, file formats, merge strategies), from ``../shared/spec/capabilities.md``.

The core fits identifiers and types to them *before* any data moves, so a profile is useful
even for a destination that has no loader (:mod:`loadstone.destinations.contract` holds the
rest of the destination contract and re-exports :class:`Capabilities`).
"""

from __future__ import annotations

from typing import Literal

import attrs

from loadstone.exceptions import LoaderFileFormatNotSupported

Casefold = Literal["keep", "lower", "upper"]


@attrs.frozen
class Capabilities:
    """What a destination accepts; the values of ``../shared/spec/capabilities.md``.

    ``max_identifier_length`` / ``max_column_identifier_length`` are ``None`` where the
    destination has no fixed limit (filesystem, spark). ``preferred_loader_file_format`` is the
    first format the spec lists, ``supported_loader_file_formats`` all it lists.
    """

    max_identifier_length: int | None
    max_column_identifier_length: int | None
    has_case_sensitive_identifiers: bool
    casefold: Casefold = attrs.field(validator=attrs.validators.in_(("keep", "lower", "upper")))
    preferred_naming: str = "snake_case"
    preferred_loader_file_format: str = "parquet"
    supported_loader_file_formats: tuple[str, ...] = ("parquet",)
    supported_merge_strategies: tuple[str, ...] = ("delete-insert",)
    timestamp_precision: int = 6
    decimal_precision: tuple[int, int] = (38, 9)
    wei_precision: tuple[int, int] = (76, 0)
    supports_transactions: bool = True
    supports_ddl_transactions: bool = False
    supports_truncate_command: bool = True
    #: dlt's: the formats it loads from a staging destination (empty: it loads none that way)
    supported_staging_file_formats: tuple[str, ...] = ()
    #: it can hold another destination's staged files (dlt: the filesystem only)
    can_be_staging: bool = False
    #: the nesting a schema loaded here normalizes with when no source or resource sets one
    #: (dlt stores it in the schema's normalizer config; a custom destination's
    #: ``max_table_nesting=``, 0 by default: nested data stays JSON in its root table)
    max_table_nesting: int | None = None
    #: an Arrow item's struct, list and map columns (``json`` in the schema) are stored in
    #: their Arrow types, not as JSON text (dlt 1.31's filesystem: Parquet, Delta, Iceberg)
    keeps_nested_arrow_types: bool = False
    #: ``merge`` needs a table format; a plain table takes it as ``append`` and its nested
    #: tables get no ``_dlt_root_id`` (dlt 1.31's filesystem)
    merge_needs_table_format: bool = False

    def merges(self, table_format: object) -> bool:
        """Whether a merge into a table of ``table_format`` (None: plain) loads as a merge."""
        return bool(table_format) or not self.merge_needs_table_format

    def fold_identifier(self, ident: str, case_sensitive_convention: bool = False) -> str:
        """Return ``ident`` as the destination will store it.

        A case-insensitive convention's output is folded the way the destination folds
        unquoted identifiers (``deal_flow`` → ``DEAL_FLOW`` on snowflake), so users see
        ordinary identifiers. A case-sensitive convention's output on a case-sensitive
        destination is kept (and quoted by the loader): folding it would merge ``Deal`` and
        ``deal``.
        """
        if case_sensitive_convention and self.has_case_sensitive_identifiers:
            return ident
        if self.casefold == "upper":
            return ident.upper()
        if self.casefold == "lower":
            return ident.lower()
        return ident

    def case_collision_risk(self, case_sensitive_convention: bool) -> bool:
        """True when a case-sensitive convention meets a case-insensitive destination.

        There ``Deal`` and ``deal`` are one table, so the pipeline must check for collisions
        after folding identifiers with :meth:`fold_identifier`.
        """
        return case_sensitive_convention and not self.has_case_sensitive_identifiers

    def check_loader_file_format(self, destination: str, file_format: str | None) -> None:
        """Refuse a ``loader_file_format`` the destination does not load, before any work
        (as dlt 1.31 refuses it at ``run``); None means the preferred format."""
        if file_format is not None and file_format not in self.supported_loader_file_formats:
            raise LoaderFileFormatNotSupported(
                destination, file_format, self.supported_loader_file_formats
            )

    def identifier_limit(self, for_columns: bool = False) -> int | None:
        """Maximum identifier length for tables/datasets, or for columns."""
        return self.max_column_identifier_length if for_columns else self.max_identifier_length
