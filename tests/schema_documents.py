"""One way for tests to build a :class:`~loadstone.schema.Schema` from a partial document.

Normalizers, checks and destinations take a ``Schema`` (one type at every boundary); tests
describe the schema they start from as the few stored keys they care about
(``{"tables": {...}, "settings": {...}}``). :func:`schema_of` turns that into the Schema a
normalizer would evolve from such a document: named ``normalized``, with a new schema's
``iso_timestamp`` detection unless the settings say otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping

from loadstone.schema import Schema
from loadstone.schema.detections import DEFAULT_DETECTIONS

__all__ = ["schema_of"]


def schema_of(stored: Mapping[str, object] | None = None, name: str = "normalized") -> Schema:
    """A Schema from a partial stored document (tables, settings, normalizers...)."""
    document: dict[str, object] = {"name": name, "tables": {}, **(stored or {})}
    settings = document.get("settings")
    settings = dict(settings) if isinstance(settings, Mapping) else {}
    settings.setdefault("detections", list(DEFAULT_DETECTIONS))
    document["settings"] = settings
    return Schema.from_dict(document, bump_version=False)
