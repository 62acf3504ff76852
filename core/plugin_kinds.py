"""The kinds of plugins: their entry-point groups, hooks and the words users know them by.

Shared by the plugin manager, which finds plugins, and by the errors that name a kind.
"""

from __future__ import annotations

#: plugin kind -> entry-point group
GROUPS: dict[str, str] = {
    "naming": "loadstone.naming",
    "normalizers": "loadstone.normalizers",
    "destinations": "loadstone.destinations",
}
#: plugin kind -> the hook its plugins implement
HOOKS: dict[str, str] = {
    "naming": "loadstone_naming_convention",
    "normalizers": "loadstone_normalizer",
    "destinations": "loadstone_destinations",
}
#: plugin kind -> what a user calls one plugin of that kind
LABELS: dict[str, str] = {
    "naming": "naming convention",
    "normalizers": "normalizer",
    "destinations": "destination",
}
