"""One way for destination tests to write a schema: dlt's stored form, read into a ``Schema``.

Loaders take a :class:`~loadstone.schema.Schema` and nothing else; tests keep writing their
schemas as stored documents (the form ``Schema.to_dict()`` produces, which is easy to read in
a test) and turn them into a ``Schema`` here, the one place that does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loadstone.schema import Schema
from loadstone.schema.hints import write_disposition_hints


def stored_schema(stored: Mapping[str, Any]) -> Schema:
    """The ``Schema`` of a stored document, its version kept (no bump on reading).

    A table may give its write disposition in dlt's resource form (``{"disposition":
    "merge", "strategy": "upsert"}``), as loaders used to accept it; it is read as the stored
    hints it stands for.
    """
    return Schema.from_dict(_stored_dispositions(stored), bump_version=False)


def _stored_dispositions(stored: Mapping[str, Any]) -> Mapping[str, Any]:
    tables = stored.get("tables") or {}
    if not any(isinstance((t or {}).get("write_disposition"), Mapping) for t in tables.values()):
        return stored
    fixed: dict[str, Any] = {}
    for name, table in tables.items():
        table = dict(table or {})
        if isinstance(table.get("write_disposition"), Mapping):
            table.update(write_disposition_hints(table.pop("write_disposition")))
        fixed[name] = table
    return {**stored, "tables": fixed}
