"""snake_case: the default convention; lower-case, case-insensitive, ASCII snake case.

``DealFlow`` -> ``deal_flow``. Rules and their order are pinned by ``../shared/spec/naming.md``
(the order matters: trailing underscores become ``x`` *before* runs of ``_`` are collapsed).
"""

from __future__ import annotations

import re
from functools import lru_cache

from loadstone.hookspecs import hookimpl
from loadstone.naming import NamingConvention as BaseNamingConvention

__all__ = ["NamingConvention", "loadstone_naming_convention", "normalize_snake_case"]

_TRANSLATE = str.maketrans({"+": "x", "-": "_", "*": "x", "@": "a", "|": "l"})
# \d: Unicode decimal digits (``٣``, ``１``) are kept, as dlt does; other non-ASCII goes
_NOT_ALLOWED = re.compile(r"[^a-zA-Z\d_]+")
_BEFORE_CAPITALIZED_WORD = re.compile(r"([^_])([A-Z][a-z]+)")
_BEFORE_CAPITAL = re.compile(r"([a-z0-9])([A-Z])")
_LEADING_DIGIT = re.compile(r"^\d")
_TRAILING_UNDERSCORES = re.compile(r"_+$")
_UNDERSCORE_RUN = re.compile(r"__+")


def _underscore_between(match: re.Match[str]) -> str:
    # a function, not the template r"\1_\2": re parses a template on every call (10x slower)
    return f"{match[1]}_{match[2]}"


@lru_cache(maxsize=16384)
def normalize_snake_case(identifier: str) -> str:
    """The snake_case rule on one stripped, non-empty identifier (without shortening).

    Cached: a data set repeats the same few hundred keys millions of times.
    """
    text = _NOT_ALLOWED.sub("_", identifier.translate(_TRANSLATE))
    text = _BEFORE_CAPITALIZED_WORD.sub(_underscore_between, text)
    text = _BEFORE_CAPITAL.sub(_underscore_between, text).lower()
    if _LEADING_DIGIT.match(text):
        text = "_" + text
    text = _TRAILING_UNDERSCORES.sub(lambda match: "x" * len(match.group()), text)
    return _UNDERSCORE_RUN.sub("_", text)


class NamingConvention(BaseNamingConvention):
    """Case-insensitive snake case with a reduced alphabet (``[a-z0-9_]``)."""

    @property
    def is_case_sensitive(self) -> bool:
        return False

    def normalize_identifier(self, identifier: str) -> str:
        identifier = super().normalize_identifier(identifier)
        return self.shorten_identifier(
            normalize_snake_case(identifier), identifier, self.max_length
        )


@hookimpl
def loadstone_naming_convention() -> type[BaseNamingConvention]:
    return NamingConvention
