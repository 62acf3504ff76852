"""``loadstone.common.libs.pyarrow``: dlt's ``from dlt.common.libs.pyarrow import pyarrow``
(the library itself, a dependency of loadstone)."""

from __future__ import annotations

import pyarrow

__all__ = ["pyarrow"]
