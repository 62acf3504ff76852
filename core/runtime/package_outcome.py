"""What becomes of a package at the end of a step: loaded, or set aside.

The normalize and load steps end every package they touch in one of these two ways; the
pipeline's crash recovery (:mod:`loadstone.pipelines.recovery`) reads what they left. Kept
below the steps, so that each step does it the same way without importing the pipeline.
"""

from __future__ import annotations

import contextlib
import shutil
import time
from typing import TYPE_CHECKING

import attrs

from loadstone.exceptions import LoadstoneError
from loadstone.storage import state_changes
from loadstone.storage.load_package import LOADED, LoadPackage
from loadstone.storage.loaded_inputs import LoadedInputs

if TYPE_CHECKING:
    from loadstone.runtime.working_folder import WorkingFolder

__all__ = ["FAILURE_KEY", "complete_package", "forget_schema_changes", "set_aside"]

#: ``package.json`` key of a package set aside: why it could not be normalized
FAILURE_KEY = "failure"


def set_aside(folder: WorkingFolder, package: LoadPackage, cause: str) -> None:
    """Move a package that can never load out of the way, recording why in it; the changes
    its extract made to the sources' state go with it (``WorkingFolder.remove_packages``),
    so the next run reads its rows again."""
    with contextlib.suppress(LoadstoneError):
        package.update(**{FAILURE_KEY: cause, "failed_at": time.time()})

    def move() -> None:
        folder.failed_packages_dir.mkdir(parents=True, exist_ok=True)
        shutil.move(str(package.root), str(folder.failed_packages_dir / package.root.name))

    folder.remove_packages([package], move)
    _forget_extract(folder, package)


def _forget_extract(folder: WorkingFolder, package: LoadPackage) -> None:
    """Take back what the package's extract changed in the schema: the root tables it
    declared and the contract given to ``run`` or to its source, so the next run goes on as
    if the package had never been (dlt: after the package is aborted)."""
    meta = package.meta
    declared = meta.get("declared_tables") or []
    if not declared and "schema_contract_before" not in meta:
        return
    schema = folder.schemas.get(package.schema_name)
    if schema is None:
        return
    if "schema_contract_before" in meta:
        schema.set_schema_contract(meta["schema_contract_before"])
    schema.drop_tables([name for name in declared if schema.has_table(name)])
    folder.save_schema(schema)


def forget_schema_changes(folder: WorkingFolder, package: LoadPackage) -> None:
    """Take back the tables and columns a package set aside at load added to the schema.

    They exist nowhere else (the destination rolled the package back), and a column only
    that package brought -- a user key named like dlt's non-nullable ``_dlt_list_idx`` --
    would make every later package fail the same way.
    """
    schema = folder.schemas.get(package.schema_name)
    if schema is None:
        return
    meta = package.meta
    schema.drop_tables(meta.get("new_tables") or [])
    for name, added in (meta.get("new_columns") or {}).items():
        if schema.has_table(name):
            table = schema.get_table(name)
            kept = {k: c for k, c in table.columns.items() if k not in added}
            schema.replace_table(attrs.evolve(table, columns=kept))
    folder.save_schema(schema)


def complete_package(
    folder: WorkingFolder,
    package: LoadPackage,
    *,
    skipped: bool,
    keep: bool,
    first_run: bool = False,
) -> None:
    """After the destination's commit: remember the package's file inputs, then switch
    it to loaded (a kill between the two leaves it pending: see ``loaded_inputs``).
    ``first_run``: the package was the pipeline's first load (its schema update holds the
    system tables, as ``get_load_package_info`` shows it later)."""
    LoadedInputs(folder.root).record(package)
    package.set_state(LOADED, loaded_at=time.time(), skipped=skipped, first_run=first_run)
    state_changes.forget(package.load_id)  # loaded: its state changes stay for good
    if not keep:
        package.delete_data()
