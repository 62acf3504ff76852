"""File paths inside a dataset folder, from dlt's ``layout`` placeholders.

The default ``{table_name}/{load_id}.{file_id}.{ext}`` is dlt 1.31's. The placeholders dlt
documents: ``table_name``, ``load_id``, ``file_id``, ``ext``, ``schema_name``, ``curr_date``,
``year``, ``month``, ``day``, ``hour``, ``minute``, ``dow``, ``timestamp``, ``timestamp_ms``,
``load_package_timestamp``, ``load_package_timestamp_ms``, dlt's date tokens (``YYYY``,
``YY``, ``Y``, ``Q``, ``MM``, ``M``, ``MMM``, ``MMMM``, ``DD``, ``D``, ``HH``, ``H``, ``ss``,
``s``, ``SSS``, ``S``, ``ddd``, ``dddd``, ``d``; ``mm`` and ``m`` are the month, as dlt 1.31
writes them), plus the user's
``extra_placeholders`` (a value, or a callable given the schema name, table name, load id,
file id and extension). Dates are those of the load package (its load id), so a retried
package writes the same paths and overwrites what a killed attempt left.

The same layout turned into a regular expression lists the files of one table, for replace
(remove the files of earlier loads) and for reading back.
"""

from __future__ import annotations

import datetime as _dt
import re
import string
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from loadstone.destinations.contract import load_id_timestamp

KNOWN_PLACEHOLDERS = frozenset(
    {
        "table_name",
        "load_id",
        "file_id",
        "ext",
        "schema_name",
        "curr_date",
        "year",
        "month",
        "day",
        "hour",
        "minute",
        "dow",
        "timestamp",
        "timestamp_ms",
        "load_package_timestamp",
        "load_package_timestamp_ms",
    }
) | frozenset("YYYY YY Y Q MM M MMM MMMM DD D HH H mm m ss s SSS S ddd dddd d".split())


class LayoutError(ValueError):
    """A layout names a placeholder that is neither dlt's nor an extra placeholder."""


def _placeholders(layout: str) -> list[str]:
    return [field for _, field, _, _ in string.Formatter().parse(layout) if field]


@attrs.frozen
class Layout:
    """A layout template and the user's extra placeholders."""

    template: str
    extra: Mapping[str, Any] = attrs.field(factory=dict)

    def __attrs_post_init__(self) -> None:
        unknown = set(_placeholders(self.template)) - KNOWN_PLACEHOLDERS - set(self.extra)
        if unknown:
            raise LayoutError(
                f"layout {self.template!r} has unknown placeholder(s) "
                f"{', '.join(sorted(unknown))}; known: {', '.join(sorted(KNOWN_PLACEHOLDERS))} "
                "and extra_placeholders"
            )
        if "table_name" not in _placeholders(self.template):
            raise LayoutError(f"layout {self.template!r} must contain {{table_name}}")

    def path(self, schema_name: str, table_name: str, load_id: str, file_id: str, ext: str) -> str:
        """The path of one file, relative to the dataset folder."""
        values = _values(schema_name, table_name, load_id, file_id, ext)
        for key, value in self.extra.items():
            values[key] = _call(value, schema_name, table_name, load_id, file_id, ext)
        return self.template.format(**values)

    def table_pattern(self, schema_name: str, table_name: str) -> re.Pattern[str]:
        """Matches the relative paths of ``table_name``'s files (any load, any file)."""
        parts: list[str] = []
        for literal, field, _, _ in string.Formatter().parse(self.template):
            parts.append(re.escape(literal))
            if field == "table_name":
                parts.append(re.escape(table_name))
            elif field == "schema_name":
                parts.append(re.escape(schema_name))
            elif field == "load_id":
                parts.append(r"(?P<load_id>\d+(?:\.\d+)?)")
            elif field:
                parts.append(r"[^/]+?" if field != "ext" else r"[^/]+")
        return re.compile("".join(parts) + r"\Z")

    def table_folder(self, schema_name: str, table_name: str) -> str:
        """The longest fixed folder holding all files of the table ('' for the dataset root)."""
        fixed = ""
        for literal, field, _, _ in string.Formatter().parse(self.template):
            fixed += literal
            if field == "table_name":
                fixed += table_name
            elif field == "schema_name":
                fixed += schema_name
            elif field:
                break
        return fixed.rsplit("/", 1)[0] if "/" in fixed else ""


def _values(
    schema_name: str, table_name: str, load_id: str, file_id: str, ext: str
) -> dict[str, Any]:
    when = load_id_timestamp(load_id)
    return {
        "table_name": table_name,
        "load_id": load_id,
        "file_id": file_id,
        "ext": ext,
        "schema_name": schema_name,
        "curr_date": when.date().isoformat(),
        "year": when.strftime("%Y"),
        "month": when.strftime("%m"),
        "day": when.strftime("%d"),
        "hour": when.strftime("%H"),
        "minute": when.strftime("%M"),
        "dow": when.strftime("%a").lower(),
        "timestamp": int(when.timestamp()),
        "timestamp_ms": int(when.timestamp() * 1000),
        "load_package_timestamp": int(when.timestamp()),
        "load_package_timestamp_ms": int(when.timestamp() * 1000),
        **_date_tokens(when),
    }


def _date_tokens(when: _dt.datetime) -> dict[str, str]:
    """dlt 1.31's date tokens, as it fills them (lower-case names; ``mm``/``m`` the month
    and ``d`` the day of the week from Sunday = 0, as observed)."""
    month = when.strftime("%m")
    return {
        "YYYY": when.strftime("%Y"),
        "YY": when.strftime("%y"),
        "Y": when.strftime("%Y"),
        "Q": str((when.month - 1) // 3 + 1),
        "MM": month,
        "M": str(when.month),
        "MMM": when.strftime("%b").lower(),
        "MMMM": when.strftime("%B").lower(),
        "DD": when.strftime("%d"),
        "D": str(when.day),
        "HH": when.strftime("%H"),
        "H": str(when.hour),
        "mm": month,
        "m": str(when.month),
        "ss": when.strftime("%S"),
        "s": str(when.second),
        "SSS": f"{when.microsecond // 1000:03d}",
        "S": str(when.microsecond // 100000),
        "ddd": when.strftime("%a").lower(),
        "dddd": when.strftime("%A").lower(),
        "d": when.strftime("%w"),
    }


def _call(value: Any, *args: str) -> Any:
    if callable(value):
        fn: Callable[..., Any] = value
        return fn(*args)
    if isinstance(value, _dt.datetime):
        return value.isoformat()
    return value
