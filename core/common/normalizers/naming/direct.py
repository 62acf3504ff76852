"""``loadstone.common.normalizers.naming.direct``: the ``direct`` convention's class, as dlt's
``from dlt.common.normalizers.naming.direct import NamingConvention`` (to subclass it)."""

from __future__ import annotations

from loadstone.plugin_manager import naming_convention_class

NamingConvention = naming_convention_class("direct")

__all__ = ["NamingConvention"]
