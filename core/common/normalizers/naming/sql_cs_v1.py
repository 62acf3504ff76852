"""``loadstone.common.normalizers.naming.sql_cs_v1``: the ``sql_cs_v1`` convention's class, as dlt's
``from dlt.common.normalizers.naming.sql_cs_v1 import NamingConvention`` (to subclass it)."""

from __future__ import annotations

from loadstone.plugin_manager import naming_convention_class

NamingConvention = naming_convention_class("sql_cs_v1")

__all__ = ["NamingConvention"]
