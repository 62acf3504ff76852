"""Normalize and load of a run's new package, overlapped where the destination can.

The two steps never import each other: this module connects them. Before normalize, the
load step opens the package's load (:meth:`LoadStep.begin`: the destination's transaction,
a thread); the normalize step reports the files it finished to it (``on_files``) while it
works on the later parts; then the load step commits the package with the rest
(:meth:`LoadStep.load_pending`). A normalize that fails rolls the transaction back, so the
destination and the package are left exactly as a failed normalize leaves them without
the overlap. ``load.overlap_normalize = false``, a destination without
:class:`~loadstone.destinations.overlap.OverlapsNormalize`, a package on an object store
or more than one package to normalize: normalize, then load, as always.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from loadstone.storage.load_package import EXTRACTED, iter_pending

if TYPE_CHECKING:
    from loadstone.load.overlap import OverlapFeed
    from loadstone.load.step import LoadStep
    from loadstone.normalize.step import NormalizeStep
    from loadstone.pipelines.boundary import StepBoundary
    from loadstone.runtime.load_info import LoadInfo

__all__ = ["normalize_and_load"]


def normalize_and_load(
    normalize: NormalizeStep, load: LoadStep, boundary: StepBoundary
) -> LoadInfo:
    """Normalize the extracted packages and load them, the load begun early where it can."""
    feeds = _begun(normalize, load)
    try:
        sinks = {load_id: feed.sink for load_id, feed in feeds.items()}
        boundary.run("normalize", lambda: normalize.normalize_pending(sinks))
    except BaseException:
        for feed in feeds.values():
            with contextlib.suppress(Exception):  # the normalize failure is what to report
                feed.abort()
        raise
    return boundary.run("load", lambda: load.load_pending(feeds))


def _begun(normalize: NormalizeStep, load: LoadStep) -> dict[str, OverlapFeed]:
    """The package's load opened early (one package to normalize), by load id."""
    packages = [p for p in iter_pending(normalize.folder.packages_dir) if p.state == EXTRACTED]
    if len(packages) != 1:
        return {}
    try:
        feed = load.begin(packages[0])
    except Exception:  # e.g. the database held by another process: the load step says so
        return {}
    return {} if feed is None else {packages[0].load_id: feed}
