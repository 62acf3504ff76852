"""A package's load begun while its normalize still runs: the channel between the two steps.

Normalize and load never import each other; the pipeline connects them through these types:

* a normalizer reports, in order, the normalized files nothing later in the package's
  normalize rewrites or removes (:class:`FinishedFiles`, through
  ``NormalizeContext.on_files``, a :data:`FilesSink`);
* a destination that can load them before the package is whole offers
  :class:`OverlapsNormalize`: ``begin_package`` opens the package's one transaction and
  returns an :class:`OverlappedLoad`, which appends the finished files inside it and, once the
  package is normalized, loads the rest, the state row and the ``_dlt_loads`` row and
  commits (``finish``), or rolls everything back (``abort``).

Exactly once holds as for any load: nothing is visible before the one COMMIT, so a process
killed at any moment leaves the destination as it was, and the package is finished by the
next run as today. A destination without this protocol loads the package after normalize.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import attrs

if TYPE_CHECKING:
    from loadstone.destinations.contract import LoadRequest
    from loadstone.schema import Schema

__all__ = ["FilesSink", "FinishedFiles", "OverlappedLoad", "OverlapsNormalize"]


@attrs.frozen
class FinishedFiles:
    """Normalized files of a package that no later part of its normalize changes.

    ``tables`` maps a table name (as in the schema) to its new files. ``schema`` makes the
    package's schema as far as these files and every one reported before need it: the
    tables, columns and types decided so far, which later parts only extend. It is a
    callable because only the newest one is needed: the load makes it when it gets to it.
    """

    tables: Mapping[str, tuple[Path, ...]]
    schema: Callable[[], Schema]


#: where a normalizer reports finished files (called from its driver thread, in order)
FilesSink = Callable[[FinishedFiles], None]


class OverlappedLoad(Protocol):
    """One package's load in the destination's open transaction (see module docstring)."""

    def append(self, batch: Sequence[FinishedFiles], last: bool = False) -> None:
        """Load these files (in order) into the open transaction; a table whose files cannot
        go in before the package is whole (a merge, a replace) keeps them for ``finish``.
        ``last``: normalize has ended, nothing else needs the machine's cores."""

    def finish(self, request: LoadRequest) -> None:
        """Load what ``append`` did not (the request names every file of the package), the
        state row and the ``_dlt_loads`` row, and commit: the same outcome as
        ``DestinationClient.load_package(request)``."""

    def abort(self) -> None:
        """Roll the transaction back (normalize failed, or the appends did)."""


@runtime_checkable
class OverlapsNormalize(Protocol):
    """A destination client that can load a package while it is normalized."""

    def begin_package(self, load_id: str) -> OverlappedLoad:
        """Open the package's transaction; files follow through ``append``."""
