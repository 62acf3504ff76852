"""``loadstone.sources``: what dlt users reach as ``dlt.sources``.

Its subpackages are dlt's built-in sources (``filesystem``, ``sql_database``, ``rest_api``).

``loadstone.sources.incremental(...)`` declares an incremental cursor
(:mod:`loadstone.extract.incremental`); ``Resource`` and ``Source`` are the classes
``@loadstone.resource`` and ``@loadstone.source`` make.
"""

from __future__ import annotations

from loadstone.extract.incremental import Incremental
from loadstone.extract.incremental import Incremental as incremental
from loadstone.extract.resource import Resource
from loadstone.extract.source import Source

__all__ = ["Incremental", "Resource", "Source", "incremental"]
