"""``loadstone.version``: the installed version, where ``dlt.version`` keeps dlt's."""

from __future__ import annotations

#: the distribution's name on the package index
PKG_NAME = "loadstone"
__version__ = "0.1.0"
