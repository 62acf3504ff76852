"""ISO 8601 timestamps and dates, parsed as dlt reads them.

Shared by type detection (:mod:`loadstone.schema.detections`) and coercion
(:mod:`loadstone.schema.data_types`), so a string detected as a timestamp is the one that
coerces to it. The common ``YYYY-MM-DDTHH:MM:SS[.fff][Z|±HH:MM]`` shape is checked by
position first: a regex costs more than the whole parse.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Final

__all__ = ["parse_iso_date", "parse_iso_timestamp"]

_UTC: Final = dt.timezone.utc
_ZERO: Final = dt.timedelta(0)


_DATE_EXT = r"(?P<y>\d{4})-(?:(?P<m>\d{2})-(?P<d>\d{2})|W(?P<w>\d{2})-(?P<wd>[1-7])|(?P<o>\d{3}))"
_DATE_BASIC = r"(?P<y>\d{4})(?:(?P<m>\d{2})(?P<d>\d{2})|W(?P<w>\d{2})(?P<wd>[1-7])|(?P<o>\d{3}))"
_FRACTION = r"(?:[.,](?P<f>\d+))?"
_OFFSET = r"(?P<tz>Z|[+-]\d{2}(?::?\d{2})?)?"
_TIME_EXT = rf"(?P<H>\d{{2}})(?::(?P<M>\d{{2}})(?::(?P<S>\d{{2}}){_FRACTION})?)?"
_TIME_BASIC = rf"(?P<H>\d{{2}})(?:(?P<M>\d{{2}})(?:(?P<S>\d{{2}}){_FRACTION})?)?"

_TS_EXT: Final = re.compile(rf"{_DATE_EXT}[T ]{_TIME_EXT}{_OFFSET}")
_TS_BASIC: Final = re.compile(rf"{_DATE_BASIC}[T ]{_TIME_BASIC}{_OFFSET}")
_DATE_ONLY: Final = re.compile(
    r"(?P<y>\d{4})(?:-(?:(?P<m>\d{2})(?:-(?P<d>\d{2}))?|W(?P<w>\d{2})(?:-(?P<wd>[1-7]))?|(?P<o>\d{3})))?"
    r"|(?P<y2>\d{4})(?P<m2>\d{2})(?P<d2>\d{2})"
)


def _date_from(groups: dict[str, str | None]) -> dt.date:
    year = int(groups["y"])  # type: ignore[arg-type]  # the pattern always captures y
    if groups.get("w"):
        return dt.date.fromisocalendar(year, int(groups["w"]), int(groups.get("wd") or 1))  # type: ignore[arg-type]  # w matched
    if groups.get("o"):
        ordinal = int(groups["o"])  # type: ignore[arg-type]  # o matched
        if not 1 <= ordinal <= (366 if _is_leap(year) else 365):
            raise ValueError(f"day of year {ordinal} out of range")
        return dt.date(year, 1, 1) + dt.timedelta(days=ordinal - 1)
    return dt.date(year, int(groups.get("m") or 1), int(groups.get("d") or 1))


def _is_leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _offset(text: str | None) -> dt.timezone:
    if not text or text == "Z":
        return _UTC
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    hours, minutes = int(digits[:2]), int(digits[2:4] or 0)
    if hours > 23 or minutes > 59:
        raise ValueError(f"invalid UTC offset {text!r}")
    return dt.timezone(sign * dt.timedelta(hours=hours, minutes=minutes))


_DIGITS: Final = frozenset("0123456789")


def _common_shape(value: str) -> bool:
    """``YYYY-MM-DDTHH:MM:SS[.fff|.ffffff][Z|±HH:MM]`` (what APIs and isoformat() emit),
    checked by position because a regex costs more than the whole parse."""
    n = len(value)
    if n < 19 or value[4] != "-" or value[7] != "-" or value[10] not in "T " or value[13] != ":":
        return False
    if value[16] != ":" or not (value[:4] + value[5:7] + value[8:10]).isdigit():
        return False
    if not (value[11:13] + value[14:16] + value[17:19]).isdigit():
        return False
    rest = value[19:]
    if rest[:1] == ".":
        if len(rest) >= 7 and rest[1:7].isdigit():
            end = 7
        elif len(rest) >= 4 and rest[1:4].isdigit():
            end = 4
        else:
            return False
        if rest[end : end + 1] in _DIGITS and len(rest) > end:
            return False  # other fraction lengths take the general parser
        rest = rest[end:]
    if rest in ("", "Z"):
        return True
    return (
        len(rest) == 6 and rest[0] in "+-" and rest[3] == ":" and (rest[1:3] + rest[4:6]).isdigit()
    )


def parse_iso_timestamp(value: str) -> dt.datetime | None:
    """The UTC datetime of an ISO 8601 timestamp string, ``None`` when it is not one."""
    if _common_shape(value):
        try:
            moment = dt.datetime.fromisoformat(value[:-1] + "+00:00" if value[-1] == "Z" else value)
        except ValueError:
            return None
        if moment.tzinfo is None:
            return moment.replace(tzinfo=_UTC)
        if moment.utcoffset() == _ZERO:
            return moment.replace(tzinfo=_UTC)
        return moment.astimezone(_UTC)
    match = _TS_EXT.fullmatch(value) or _TS_BASIC.fullmatch(value)
    if match is None:
        return None
    groups = match.groupdict()
    try:
        day = _date_from(groups)
        fraction = (groups["f"] or "")[:6].ljust(6, "0")
        moment = dt.datetime(
            day.year,
            day.month,
            day.day,
            int(groups["H"]),
            int(groups["M"] or 0),
            int(groups["S"] or 0),
            int(fraction),
            tzinfo=_offset(groups["tz"]),
        )
    except ValueError:
        return None
    return moment.astimezone(_UTC)


def parse_iso_date(value: str) -> dt.date | None:
    """The date of an ISO 8601 date string (no time part), ``None`` when it is not one."""
    match = _DATE_ONLY.fullmatch(value)
    if match is None:
        return None
    groups = match.groupdict()
    if groups["y2"]:
        groups = {"y": groups["y2"], "m": groups["m2"], "d": groups["d2"]}
    try:
        return _date_from(groups)
    except ValueError:
        return None
