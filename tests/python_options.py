"""``PYTHONPATH`` for the suite's Python processes, so that Spark's Python workers start in less
CPU (``python_site/sitecustomize.py`` says how and why).

pytest's configure calls :func:`enable`; every process started from then on inherits it: the
xdist workers, the CLI runs and child programs, and the JVMs (local Spark, the cluster's
master, workers and executors, the Connect server), which pass it to the Python workers they
start. Like ``jvm_options.py``, it changes how fast they run, never what they run.
"""

from __future__ import annotations

import os
from pathlib import Path

SITE = Path(__file__).resolve().with_name("python_site")


def enable() -> None:
    """Put :data:`SITE` first on ``PYTHONPATH`` (once; other entries stay after it)."""
    entries = [e for e in os.environ.get("PYTHONPATH", "").split(os.pathsep) if e]
    if str(SITE) not in entries:
        os.environ["PYTHONPATH"] = os.pathsep.join([str(SITE), *entries])
