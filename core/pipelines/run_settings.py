"""Every setting a pipeline run reads, parsed before the run does any work (:func:`check_all`).

The settings of the steps are read through :mod:`loadstone.runtime.settings` (their keys and
defaults, in one place); this module adds the check the pipeline makes first, which also
asks the extract step, the normalizer, Spark and the lock for theirs.
"""

from __future__ import annotations

import logging

from loadstone.runtime.settings import (
    DEFAULT_NORMALIZER as DEFAULT_NORMALIZER,
)
from loadstone.runtime.settings import (
    keep_completed_packages,
    log_level,
    normalizer_name,
    on_bad_record,
    overlap_normalize,
)


def check_all(lock_timeout: float | None) -> None:
    """Parse every setting a run reads, so a bad one fails before any work (one line each).

    ``lock_timeout`` is the pipeline's explicit value (``pipeline(lock_timeout=)``).
    """
    from loadstone.extract.file_inputs import copy_inputs
    from loadstone.extract.settings import extract_settings
    from loadstone.normalizers.contract import check_normalizer_settings
    from loadstone.plugin_manager import get_normalizer
    from loadstone.spark_session import configured_target
    from loadstone.storage.pipeline_lock import configured_timeout

    configured_target()  # a master or remote Spark cannot use: said before any work
    keep_completed_packages()
    overlap_normalize()
    on_bad_record()
    check_normalizer_settings(get_normalizer(normalizer_name()))
    copy_inputs()
    extract_settings()
    configured_timeout(lock_timeout)
    logging.getLogger("loadstone").setLevel(log_level())
