"""Step one: extract. Resources and sources (:mod:`.source`) and the extractor that writes
any input into a load package (:mod:`.extractor`).

The package also answers dlt's ``from dlt.extract import DltResource, DltSource, Incremental``
(``DltResource`` is loadstone's ``Resource``, ``DltSource`` its ``Source``), imported on
first use so that importing one module of the step does not import the others. The
decorators are not among them: ``loadstone.extract.resource`` and ``.source`` are modules
(``loadstone.resource`` / ``loadstone.source`` are the decorators).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: dlt's names -> (module, attribute)
_EXPORTS: dict[str, tuple[str, str]] = {
    "DltResource": ("loadstone.extract.resource", "Resource"),
    "DltSource": ("loadstone.extract.source", "Source"),
    "Incremental": ("loadstone.extract.incremental", "Incremental"),
    "defer": ("loadstone.extract.deferred", "defer"),
    "with_hints": ("loadstone.extract.mark", "with_hints"),
    "with_table_name": ("loadstone.extract.mark", "with_table_name"),
    "make_hints": ("loadstone.extract.mark", "make_hints"),
}

__all__ = [
    "DltResource",
    "DltSource",
    "Incremental",
    "defer",
    "make_hints",
    "with_hints",
    "with_table_name",
]

if TYPE_CHECKING:
    from loadstone.extract.deferred import defer
    from loadstone.extract.incremental import Incremental
    from loadstone.extract.mark import make_hints, with_hints, with_table_name
    from loadstone.extract.resource import Resource as DltResource
    from loadstone.extract.source import Source as DltSource


def __getattr__(name: str) -> Any:
    try:
        module_name, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'loadstone.extract' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module_name), attribute)
    globals()[name] = value
    return value
