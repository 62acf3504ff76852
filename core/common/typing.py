"""``loadstone.common.typing``: dlt's ``dlt.common.typing`` names.

The item and argument types are loadstone's (:mod:`loadstone.typing`, :mod:`loadstone.config`);
the short dict spellings (``DictStrAny``, ``StrAny`` ...) are dlt's names for builtin
generics and are spelled here, where only ported programs read them.
"""

from __future__ import annotations

import datetime as _datetime
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeAlias, TypeVar, Union

import pendulum

from loadstone.config import TSecretStrValue, TSecretValue, value
from loadstone.typing import (
    TColumnNames,
    TDataItem,
    TDataItems,
    TLoaderFileFormat,
    TRefreshMode,
    TTableHintTemplate,
)

__all__ = [
    "AnyFun",
    "ConfigValue",
    "DictStrAny",
    "DictStrStr",
    "SecretValue",
    "StrAny",
    "StrStr",
    "StrStrStr",
    "TAny",
    "TAnyDateTime",
    "TColumnNames",
    "TDataItem",
    "TDataItems",
    "TFun",
    "TLoaderFileFormat",
    "TRefreshMode",
    "TSecretStrValue",
    "TSecretValue",
    "TSortOrder",
    "TTableHintTemplate",
    "TTableNames",
]

DictStrAny: TypeAlias = dict[str, Any]
DictStrStr: TypeAlias = dict[str, str]
#: read-only mappings (dlt: "immutable, covariant")
StrAny: TypeAlias = Mapping[str, Any]
StrStr: TypeAlias = Mapping[str, str]
StrStrStr: TypeAlias = Mapping[str, Mapping[str, str]]
AnyFun: TypeAlias = Callable[..., Any]
TFun = TypeVar("TFun", bound=AnyFun)
TAny = TypeVar("TAny")
#: one table name or several
TTableNames: TypeAlias = Union[str, list[str]]  # noqa: UP007 (evaluated at import: Python 3.10 has no `|` on these)
#: a datetime as pendulum or Python object, ISO string or unix timestamp
TAnyDateTime: TypeAlias = (
    pendulum.DateTime | pendulum.Date | _datetime.datetime | _datetime.date | str | float | int
)
TSortOrder = Literal["asc", "desc"]
#: ``dlt.config.value`` / ``dlt.secrets.value``: the marker of an argument read from configuration
ConfigValue: Any = value
SecretValue: Any = value
