"""``loadstone.common.libs.pandas``: dlt's ``from dlt.common.libs.pandas import pandas`` (the
library itself; not a dependency of loadstone, so missing it is dlt's error naming it)."""

from __future__ import annotations

from loadstone.exceptions import MissingDependencyException

try:
    import pandas  # type: ignore[import-untyped,unused-ignore]  # pandas ships no stubs
except ModuleNotFoundError as missing:
    raise MissingDependencyException("loadstone.common.libs.pandas", ["pandas"]) from missing

__all__ = ["pandas"]
