"""``loadstone.pipeline.pipeline``: dlt's ``from dlt.pipeline.pipeline import Pipeline``."""

from __future__ import annotations

from loadstone.pipelines.pipeline import Pipeline

__all__ = ["Pipeline"]
