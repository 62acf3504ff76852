"""``pipeline.config``: the pipeline's own settings as dlt exposes them (``pipeline_salt``).

dlt keeps a salt per pipeline for deterministic hashing a program may do (pseudonymizing a
column, say): given as ``pipeline(pipeline_salt=...)``, or configured (``PIPELINE_SALT``), or
made from the pipeline's name. Made the same way here, so a ported program that hashes
with ``pipeline.config.pipeline_salt`` gets the values it got under dlt.
"""

from __future__ import annotations

from pathlib import Path

import attrs

from loadstone import config
from loadstone.digests import digest256

__all__ = ["PipelineConfiguration", "default_pipeline_name", "pipeline_configuration"]


@attrs.frozen
class PipelineConfiguration:
    """The settings of one pipeline a program reads (dlt's ``pipeline.config``)."""

    pipeline_name: str
    pipeline_salt: str


def pipeline_configuration(pipeline_name: str, pipeline_salt: str | None) -> PipelineConfiguration:
    """The configuration of ``pipeline_name``: the salt given, configured, or dlt's default
    (the base64 of the SHA3-256 of the pipeline's name, the same on every machine)."""
    found = config.locate("pipeline_salt", explicit=pipeline_salt)
    salt = found.value
    if salt is None:
        salt = digest256(pipeline_name)
    return PipelineConfiguration(pipeline_name=pipeline_name, pipeline_salt=str(salt))


def default_pipeline_name() -> str:
    """``dlt_<script>``: the name dlt gives a pipeline made without one."""
    import __main__

    script = Path(getattr(__main__, "__file__", "") or "pipeline").stem
    return f"dlt_{script}"
