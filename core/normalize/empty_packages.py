"""Packages with nothing to load: dropped by normalize, as dlt's normalize drops them.

A resource that yields nothing, in a run that changes no state, leaves an extracted package
with no rows, no state to carry and no table to create. dlt 1.31 lists that package in the
``ExtractInfo`` and then drops it: normalize and load report no package, nothing is written to
``_dlt_loads`` / ``_dlt_version``, and the empty resource's table (even with declared
columns) never enters the schema (observed: ``tests/fixtures/pipeline/step_infos.json``).
A package is kept when it carries the pipeline state (``resource_state``, an incremental),
holds an input read in place, asks for a table without rows
(``dlt.mark.materialize_table_schema()``) or replaces a table.
"""

from __future__ import annotations

import shutil

from loadstone.schema import Schema
from loadstone.schema.hints import disposition_of
from loadstone.storage.load_package import LoadPackage

__all__ = ["drop_if_empty", "holds_nothing"]


def holds_nothing(package: LoadPackage, schema: Schema | None = None) -> bool:
    """Whether the extracted ``package`` has nothing a load would write: a table it replaces
    counts only when ``schema`` (the pipeline's) already has it (it is emptied then; dlt 1.31
    drops the package of a replace that yields nothing into a table never made)."""
    meta = package.meta
    if meta.get("extracted_rows") or meta.get("extracted_bytes") or meta.get("inputs"):
        return False
    if meta.get("carries_state", True) or meta.get("declared_tables"):
        return False
    for table, hints in package.table_hints().items():
        if hints.get("x-materialize"):
            return False
        made = schema is None or schema.has_table(table)
        if made and disposition_of(hints)[0] == "replace":
            return False
    return True


def drop_if_empty(package: LoadPackage, schema: Schema | None = None) -> bool:
    """Delete ``package`` when it holds nothing (True then)."""
    if not holds_nothing(package, schema):
        return False
    package.delete_data()
    shutil.rmtree(package.root, ignore_errors=True)
    return True
