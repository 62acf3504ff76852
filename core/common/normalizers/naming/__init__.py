"""``loadstone.common.normalizers.naming``: dlt's path to the naming conventions, so that a
custom convention written for dlt ports by its imports alone (docs/plugins.md).

``NamingConvention`` is the base class; each built-in convention is the module of its name
(``.snake_case``, ``.sql_cs_v1`` ...), whose ``NamingConvention`` is the plugin's class.
"""

from __future__ import annotations

from loadstone.naming import NamingConvention

__all__ = ["NamingConvention"]
