"""``loadstone.common.pipeline``: dlt's ``dlt.common.pipeline`` names.

``LoadInfo``, ``LoadPackageInfo`` and ``StepInfo`` are loadstone's
(:mod:`loadstone.runtime.load_info`), ``ExtractInfo`` / ``NormalizeInfo`` what ``extract()``
/ ``normalize()`` return (:mod:`loadstone.runtime.step_infos`); ``SupportsPipeline`` is the
protocol of a running pipeline (:class:`loadstone.current.RunningPipeline`).
"""

from __future__ import annotations

from loadstone.current import RunningPipeline as SupportsPipeline
from loadstone.runtime.load_info import LoadInfo, LoadPackageInfo, StepInfo
from loadstone.runtime.step_infos import ExtractInfo, NormalizeInfo
from loadstone.runtime.working_folder import default_pipelines_dir

__all__ = [
    "ExtractInfo",
    "LoadInfo",
    "LoadPackageInfo",
    "NormalizeInfo",
    "StepInfo",
    "SupportsPipeline",
    "get_dlt_pipelines_dir",
]


def get_dlt_pipelines_dir() -> str:
    """Where pipelines keep their working folders unless given ``pipelines_dir``
    (``$LOADSTONE_HOME/pipelines``; dlt's is under ``~/.dlt``)."""
    return str(default_pipelines_dir())
