"""``loadstone.common.schema.utils``: dlt's ``dlt.common.schema.utils`` helpers
(:mod:`loadstone.schema.utils`)."""

from __future__ import annotations

from loadstone.schema.utils import *  # noqa: F403
from loadstone.schema.utils import __all__ as __all__
