"""``loadstone.common.normalizers.naming.duck_case``: the ``duck_case`` convention's class, as dlt's
``from dlt.common.normalizers.naming.duck_case import NamingConvention`` (to subclass it)."""

from __future__ import annotations

from loadstone.plugin_manager import naming_convention_class

NamingConvention = naming_convention_class("duck_case")

__all__ = ["NamingConvention"]
