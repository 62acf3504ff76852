"""``loadstone.pipeline``: the package behind dlt's ``from dlt.pipeline.exceptions import ...``
and ``from dlt.pipeline import Pipeline``.

``loadstone.pipeline`` the attribute stays the function that makes a pipeline:
``loadstone/__init__`` imports this (light: ``Pipeline`` comes on use) package first and lets its own lazy table answer
the name, so a later ``import loadstone.pipeline.exceptions`` does not replace the function
by this package. The pipeline itself lives in :mod:`loadstone.pipelines`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from loadstone.pipelines.pipeline import Pipeline

__all__ = ["Pipeline"]


def __getattr__(name: str) -> object:
    """``from dlt.pipeline import Pipeline`` (type hints of user code), imported on use:
    ``import loadstone`` imports this package first and must stay light."""
    if name == "Pipeline":
        from loadstone.pipelines.pipeline import Pipeline

        return Pipeline
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
