"""Spark's Python workers, in the suite, import pyspark from its installed package.

Every Python process the suite starts has this folder on ``PYTHONPATH`` (``python_options.py``),
so Python runs this module as it starts. Spark puts its own copy of pyspark, ``pyspark.zip``
(and py4j's zip), first on the ``PYTHONPATH`` of every Python worker it starts (each executor's
daemon, the workers it forks, the Connect server's). Python cannot cache bytecode inside a zip,
so each daemon compiled pyspark's modules from source again, and each task re-read the zip's
directory (``importlib.invalidate_caches``): about 0.35 CPU-s more per task's worker (0.7 s
against 0.33 s, 24 tasks of a local job: 73 -> 59 CPU-s for the whole application).

pip's pyspark ships the zip inside the package it installs, made from the same files (every
module both hold is byte-identical; the zip adds pyspark's own tests). So where the installed
package sits beside the zip, the zip is dropped from ``sys.path`` and the package, compiled once
at install, is imported instead: the same code, read faster. A zip with no installed package
beside it (a cluster's own Spark) stays. Outside the suite nothing changes.
"""

from __future__ import annotations

import os
import sys


def _bundled(entry: str) -> bool:
    """Whether ``entry`` is a zip pip's pyspark ships beside the package it installed:
    ``<site>/pyspark/python/lib/<name>.zip`` with ``<site>/<package>/__init__.py`` there too."""
    folder, name = os.path.split(entry)
    if not name.endswith(".zip") or not folder.endswith(os.path.join("pyspark", "python", "lib")):
        return False
    site = os.path.dirname(os.path.dirname(os.path.dirname(folder)))
    package = "pyspark" if name == "pyspark.zip" else name.split("-", 1)[0]
    return os.path.isfile(os.path.join(site, package, "__init__.py"))


sys.path[:] = [entry for entry in sys.path if not _bundled(entry)]
