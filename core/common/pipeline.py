"""``loadstone.common.pipeline``: dlt's ``dlt.common.pipeline`` names.

``LoadInfo`` and ``StepInfo`` are loadstone's (:mod:`loadstone.runtime.load_info`);
``LoadPackageInfo`` is loadstone's ``PackageInfo`` and ``SupportsPipeline`` the protocol of a
running pipeline (:class:`loadstone.current.RunningPipeline`).
"""

from __future__ import annotations

from loadstone.current import RunningPipeline as SupportsPipeline
from loadstone.runtime.load_info import LoadInfo, StepInfo
from loadstone.runtime.load_info import PackageInfo as LoadPackageInfo

__all__ = ["LoadInfo", "LoadPackageInfo", "StepInfo", "SupportsPipeline"]
