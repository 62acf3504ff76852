"""``pipeline.config``: the pipeline's own settings as dlt exposes them (``pipeline_salt``).

dlt keeps a salt per pipeline for deterministic hashing a program may do (pseudonymizing a
column, say): given as ``pipeline(pipeline_salt=...)``, or configured (``PIPELINE_SALT``), or
made from the pipeline's name. Made the same way here, so a ported program that hashes
with ``pipeline.config.pipeline_salt`` gets the values it got under dlt.
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs

from loadstone import config
from loadstone.digests import digest256
from loadstone.exceptions import PipelineConfigError

__all__ = [
    "PipelineConfiguration",
    "check_pipeline_name",
    "default_pipeline_name",
    "pipeline_configuration",
]

#: what a folder name may not hold on some system (dlt 1.31 refuses the same names): the
#: characters Windows refuses, a dot, control characters
_NOT_IN_A_NAME = re.compile(r'[<>:"/\\|?*.\x00-\x1f]')
#: the device names Windows reserves, in any case
_RESERVED = frozenset(
    {
        "con",
        "prn",
        "aux",
        "nul",
        *(f"com{i}" for i in range(1, 10)),
        *(f"lpt{i}" for i in range(1, 10)),
    }
)


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


def check_pipeline_name(name: object) -> None:
    """Refuse a pipeline name that cannot be the pipeline's working folder on every system,
    as dlt 1.31 refuses it (``InvalidPipelineName``, loadstone's :class:`PipelineConfigError`):
    a folder made on Linux must open on Windows and in an object store too."""
    if not name or not isinstance(name, str):
        raise PipelineConfigError("pipeline_name must be a non-empty string")
    if _NOT_IN_A_NAME.search(name) or name.lower() in _RESERVED:
        raise PipelineConfigError(
            f"pipeline name {name!r} cannot name the pipeline's working folder on every "
            'system: use letters, digits, spaces, "-" and "_" (no < > : " / \\ | ? * . and '
            "not a reserved name such as con or nul)"
        )
