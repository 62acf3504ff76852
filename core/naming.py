"""Naming conventions: the base class every convention (built-in or third party) subclasses.

A naming convention maps source identifiers (any Unicode key of a JSON document) to
destination identifiers. Conventions differ only in how *one* identifier is normalized; the
rest is shared and lives here exactly once, because it must behave identically for every
convention so that loadstone produces byte-for-byte the identifiers dlt produces
(``../shared/spec/naming.md``):

* shortening to ``max_length`` with a deterministic tag in the middle (so two long
  identifiers that share a head and a tail still differ, with high probability);
* paths: compound identifiers of nested tables and flattened columns (``users__pets``), made,
  broken, normalized and shortened as a whole.

A convention subclasses :class:`NamingConvention`, implements :meth:`normalize_identifier`
(calling ``super().normalize_identifier`` first for the blank check and the strip, and
:meth:`shorten_identifier` last) and :attr:`is_case_sensitive`. The layout is dlt's: one module
per convention with a class named ``NamingConvention``, so a dlt convention ports by changing
its import.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any, ClassVar

from loadstone.digests import digest128
from loadstone.exceptions import InvalidIdentifierError, InvalidMaxLengthError

__all__ = [
    "BUILTIN_MODULE_PREFIX",
    "DEFAULT_COLLISION_PROBABILITY",
    "NamingConvention",
    "compute_tag",
    "tag_length",
    "trim_and_tag",
]

#: Modules of the built-in conventions; a convention defined there is named by its short name.
BUILTIN_MODULE_PREFIX = "loadstone.plugins.naming."

#: Accepted probability that two shortened identifiers with the same head and tail collide.
DEFAULT_COLLISION_PROBABILITY = 0.001


def tag_length(collision_probability: float = DEFAULT_COLLISION_PROBABILITY) -> int:
    """Number of digest bytes in a tag for the given collision probability (4 for 0.001)."""
    return int((2 + 1) * math.log2(1 / collision_probability) // 8) + 1


def compute_tag(
    identifier: str, collision_probability: float = DEFAULT_COLLISION_PROBABILITY
) -> str:
    """The deterministic tag of an identifier: SHAKE-128, base64, made identifier-safe.

    ``/`` and ``+`` become ``a`` and ``b`` and the result is lower-cased, so the tag fits every
    convention's alphabet and does not depend on the destination's case folding.
    """
    text = digest128(identifier, tag_length(collision_probability))
    return text.replace("/", "a").replace("+", "b").lower()


def trim_and_tag(normalized: str, tag: str, max_length: int) -> str:
    """Keep a head and a tail of ``normalized`` around ``tag``: exactly ``max_length`` long."""
    remaining = max_length - len(tag)
    if remaining < 0:
        raise InvalidMaxLengthError(
            max_length, f"shorter than the {len(tag)}-character tag of a shortened identifier"
        )
    head = remaining // 2 + remaining % 2
    tail = remaining // 2
    return normalized[:head] + tag + normalized[len(normalized) - tail :]


class NamingConvention(ABC):
    """Maps source identifiers to destination identifiers; subclass to write a convention.

    ``max_length`` (``None`` or ``0``: unlimited) bounds every identifier the convention
    returns; longer ones are shortened with a tag (:meth:`shorten_identifier`).
    """

    #: Joins the parts of a compound identifier (nested table, flattened column).
    PATH_SEPARATOR: ClassVar[str] = "__"

    max_length: int | None

    def __init__(self, max_length: int | None = None) -> None:
        if max_length is not None and (
            isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 0
        ):
            raise InvalidMaxLengthError(
                max_length, "must be a non-negative integer or None", self.name()
            )
        self.max_length = max_length

    # --- what a convention defines -------------------------------------------------------

    @property
    @abstractmethod
    def is_case_sensitive(self) -> bool:
        """Whether identifiers differing only in case stay different identifiers."""

    @abstractmethod
    def normalize_identifier(self, identifier: str) -> str:
        """Normalize one identifier; the base checks it and strips surrounding white space.

        Subclasses call ``identifier = super().normalize_identifier(identifier)`` first, then
        transform, then return ``self.shorten_identifier(normalized, identifier,
        self.max_length)`` so the tag comes from the identifier as given (after the strip).
        """
        if identifier is None:
            raise InvalidIdentifierError(identifier, self.name())
        stripped = identifier.strip()
        if not stripped:
            raise InvalidIdentifierError(identifier, self.name())
        return stripped

    def normalize_table_identifier(self, identifier: str) -> str:
        """Normalize a table name; the same as a column name unless a convention says so."""
        return self.normalize_identifier(identifier)

    # --- paths -------------------------------------------------------------------------------

    def make_path(self, *identifiers: str) -> str:
        """Join the non-blank parts with :attr:`PATH_SEPARATOR` (parts are not normalized)."""
        for part in identifiers:
            self._require_text(part)
        return self.PATH_SEPARATOR.join(part for part in identifiers if part.strip())

    def break_path(self, path: str) -> list[str]:
        """Split a path on :attr:`PATH_SEPARATOR`, dropping blank parts (kept unstripped)."""
        self._require_text(path)
        return [part for part in path.split(self.PATH_SEPARATOR) if part.strip()]

    def normalize_path(self, path: str) -> str:
        """Normalize every part of a path, join them, and shorten the whole.

        Normalizing part by part keeps ``a__b`` as ``a__b``: normalization is idempotent on
        its own output. A path with no non-blank part normalizes to ``""``.
        """
        return self._normalize_path_with(path, self.normalize_identifier)

    def normalize_tables_path(self, path: str) -> str:
        """:meth:`normalize_path` for table names (parts go through the table rule)."""
        return self._normalize_path_with(path, self.normalize_table_identifier)

    def shorten_fragments(self, *normalized_idents: str) -> str | None:
        """Join already normalized parts and shorten the result, tagged by the joined string.

        Names flattened columns and nested tables. Called with no parts it returns ``None``
        (as dlt does).
        """
        if not normalized_idents:
            return None
        path = self.make_path(*normalized_idents)
        return self.shorten_identifier(path, path, self.max_length)

    # --- shortening ----------------------------------------------------------------------------

    @staticmethod
    def shorten_identifier(normalized_ident: str, identifier: str, max_length: int | None) -> str:
        """Shorten ``normalized_ident`` to ``max_length`` if it is longer, tagged by ``identifier``.

        The tag comes from the source identifier, not the normalized one: two sources that
        normalize to the same long string still get distinct shortened names.
        """
        if max_length and len(normalized_ident) > max_length:
            return trim_and_tag(normalized_ident, compute_tag(identifier), max_length)
        return normalized_ident

    # --- naming the convention -------------------------------------------------------------

    @classmethod
    def name(cls) -> str:
        """Short name for a built-in convention, else the fully qualified module name.

        This is the name stored in a schema and accepted by the plugin manager.
        """
        module = cls.__module__
        if module.startswith(BUILTIN_MODULE_PREFIX):
            return module[len(BUILTIN_MODULE_PREFIX) :]
        return module

    def __str__(self) -> str:
        text = self.name() + ("_cs" if self.is_case_sensitive else "_ci")
        if self.max_length:
            text += f"_{self.max_length}"
        return text

    def __repr__(self) -> str:
        return f"<{type(self).__qualname__} {self}>"

    # --- helpers -----------------------------------------------------------------------------

    def _normalize_path_with(self, path: str, normalize: Any) -> str:
        self._require_text(path)
        parts = [normalize(part) for part in self.break_path(path)]
        return self.shorten_identifier(self.make_path(*parts), path, self.max_length)

    def _require_text(self, path: object) -> None:
        if path is None:
            raise InvalidIdentifierError(path, self.name())
