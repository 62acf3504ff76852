"""The small JSON paths REST configs use: ``data``, ``$.data.items``, ``results[0]``, ``data[*].id``.

dlt takes JSONPath expressions for ``data_selector``, ``total_path``, ``cursor_path`` and
parent ``field`` names; the ones real configs write are dotted names, indexes and ``[*]``,
so that is what this module reads (no filters, no recursive descent: those raise).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from loadstone.exceptions import JSONPathError
from loadstone.typing import TDataItem

_SEGMENT = re.compile(r"\[['\"]([^'\"]+)['\"]\]|\[(\d+|\*)\]|([^.\[\]]+)")
_MISSING = object()


def segments(path: str) -> tuple[str, ...]:
    """``"$.a.b[0]"`` -> ``("a", "b", "0")``; ``"*"`` stands for every element or value."""
    text = path.strip()
    if ".." in text or "?" in text or "(" in text:
        raise JSONPathError(f"JSON path {path!r}: only dotted names, [n] and [*] are supported")
    if text.startswith("$"):
        text = text[1:].lstrip(".")
    return tuple(quoted or index or plain for quoted, index, plain in _SEGMENT.findall(text))


def find_values(path: str, document: TDataItem) -> list[TDataItem]:
    """Every value ``path`` selects in ``document`` (``[]`` when nothing matches)."""
    found = [document]
    for segment in segments(path):
        step: list[TDataItem] = []
        for value in found:
            step.extend(_children(value, segment))
        found = step
    return found


def find_first(path: str, document: TDataItem, default: TDataItem = None) -> TDataItem:
    """The first value ``path`` selects, or ``default``."""
    values = find_values(path, document)
    return values[0] if values else default


def _children(value: TDataItem, segment: str) -> list[TDataItem]:
    if segment == "*":
        if isinstance(value, Mapping):
            return list(value.values())
        return list(value) if isinstance(value, list) else []
    if isinstance(value, Mapping):
        return [value[segment]] if segment in value else []
    if isinstance(value, list) and segment.isdigit() and int(segment) < len(value):
        return [value[int(segment)]]
    return []


def set_value(path: str, document: dict[str, TDataItem], value: object) -> None:
    """Put ``value`` at a dotted ``path`` of a JSON body, making the dicts on the way."""
    parts = segments(path)
    target = document
    for part in parts[:-1]:
        target = target.setdefault(part, {})
    target[parts[-1]] = value
