"""``loadstone.sources``: what dlt users reach as ``dlt.sources``.

Its subpackages are dlt's built-in sources (``filesystem``, ``sql_database``, ``rest_api``).

``loadstone.sources.incremental(...)`` declares an incremental cursor
(:mod:`loadstone.extract.incremental`); ``Resource`` and ``Source`` are the classes
``@loadstone.resource`` and ``@loadstone.source`` make (dlt's names ``DltResource`` and
``DltSource`` are the same classes); ``credentials`` holds dlt's configuration specs.
"""

from __future__ import annotations

from loadstone.extract.incremental import Incremental
from loadstone.extract.incremental import Incremental as incremental
from loadstone.extract.resource import Resource
from loadstone.extract.resource import Resource as DltResource
from loadstone.extract.source import Source
from loadstone.extract.source import Source as DltSource
from loadstone.sources import credentials
from loadstone.typing import TDataItem, TDataItems

__all__ = [
    "DltResource",
    "DltSource",
    "Incremental",
    "Resource",
    "Source",
    "TDataItem",
    "TDataItems",
    "credentials",
    "incremental",
]
