"""``loadstone.common.logger``: dlt's ``dlt.common.logger`` (``from dlt.common import logger``).

A pipeline's own code logs through it as through dlt's: to the ``loadstone`` logger, whose
level is ``runtime.log_level`` (``RUNTIME__LOG_LEVEL``, as dlt's).
"""

from __future__ import annotations

import logging
from typing import Any

__all__ = ["LOGGER", "critical", "debug", "error", "exception", "info", "is_logging", "warning"]

#: the logger every function here writes to
LOGGER = logging.getLogger("loadstone")


def debug(msg: object, *args: Any, **kwargs: Any) -> None:
    LOGGER.debug(msg, *args, **kwargs)


def info(msg: object, *args: Any, **kwargs: Any) -> None:
    LOGGER.info(msg, *args, **kwargs)


def warning(msg: object, *args: Any, **kwargs: Any) -> None:
    LOGGER.warning(msg, *args, **kwargs)


def error(msg: object, *args: Any, **kwargs: Any) -> None:
    LOGGER.error(msg, *args, **kwargs)


def critical(msg: object, *args: Any, **kwargs: Any) -> None:
    LOGGER.critical(msg, *args, **kwargs)


def exception(msg: object, *args: Any, **kwargs: Any) -> None:
    LOGGER.exception(msg, *args, **kwargs)


def is_logging() -> bool:
    """True: the ``loadstone`` logger always exists (dlt's answers whether it set one up)."""
    return True
