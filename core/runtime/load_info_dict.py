"""``LoadInfo.asdict()`` in dlt 1.31's shape (observed: tests/fixtures/compat/load_info_dict.json).

A ported program logs or loads what ``asdict()`` gives; dlt's documented
``pipeline.run([info], table_name="_load_info")`` makes ``_load_info`` and its nested tables
(``__load_packages``, ``__load_packages__jobs``, ``__job_metrics``, ``__outputs`` ...) from it,
so its keys and value shapes are dlt's: times as aware datetimes, one job per file, the
package's schema update with its columns. loadstone's own figures (rows per table, step
sizes) are not here: the trace keeps them (:meth:`LoadInfo.to_trace`).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

__all__ = ["JsonDict", "load_info_dict", "package_dict", "package_jobs"]

#: a JSON-shaped dict (what ``asdict()`` and the trace hold)
JsonDict = dict[str, object]


class _Step(Protocol):
    started_at: float
    finished_at: float | None


class LoadPackageInfo(Protocol):
    """What the dict reads of a package (``loadstone.runtime.load_info.LoadPackageInfo``;
    a protocol: that module imports this one)."""

    load_id: str
    schema_name: str
    state: str
    files: list[str]
    file_sizes: dict[str, int]
    package_path: str
    schema_hash: str
    created_at: float | None
    completed_at: float | None
    schema_update: dict[str, JsonDict]
    roots: dict[str, str]

    @property
    def tables(self) -> list[str]: ...


class LoadInfo(Protocol):
    """What the dict reads of a load info (``loadstone.runtime.load_info.LoadInfo``)."""

    pipeline_name: str
    destination_name: str
    dataset_name: str
    destination_location: str | None
    first_run: bool

    @property
    def packages(self) -> Sequence[LoadPackageInfo]: ...
    @property
    def steps(self) -> Mapping[str, _Step]: ...
    @property
    def loads_ids(self) -> list[str]: ...
    @property
    def destination_type(self) -> str: ...
    @property
    def destination_displayable_credentials(self) -> str | None: ...
    @property
    def destination_fingerprint(self) -> str: ...
    @property
    def staging_name(self) -> str | None: ...
    @property
    def staging_type(self) -> str | None: ...
    @property
    def staging_displayable_credentials(self) -> str | None: ...
    @property
    def started_at(self) -> _dt.datetime | None: ...
    @property
    def finished_at(self) -> _dt.datetime | None: ...


def _instant(seconds: float | None) -> _dt.datetime | None:
    return None if seconds is None else _dt.datetime.fromtimestamp(seconds, _dt.timezone.utc)


def load_info_dict(info: LoadInfo) -> JsonDict:
    """The whole info, keys in dlt's order."""
    return {
        "pipeline": {"pipeline_name": info.pipeline_name},
        "destination_type": info.destination_type,
        "destination_displayable_credentials": info.destination_displayable_credentials,
        "destination_name": info.destination_name,
        "environment": None,
        "staging_type": info.staging_type,
        "staging_name": info.staging_name,
        "staging_displayable_credentials": info.staging_displayable_credentials,
        "destination_fingerprint": info.destination_fingerprint,
        "dataset_name": info.dataset_name,
        "loads_ids": info.loads_ids,
        "load_packages": [package_dict(p) for p in info.packages],
        "first_run": info.first_run,
        "started_at": info.started_at,
        "finished_at": info.finished_at,
        "job_metrics": [m for p in info.packages for m in _job_metrics(info, p)],
        "outputs": [o for p in info.packages for o in _outputs(info, p)],
    }


def package_dict(package: LoadPackageInfo) -> JsonDict:
    """One package as dlt's ``LoadPackageInfo.asdict()``."""
    loaded = package.state == "loaded"
    completed = package.completed_at
    return {
        "load_id": package.load_id,
        "package_path": package.package_path,
        "state": package.state,
        "schema_name": package.schema_name,
        "schema_hash": package.schema_hash,
        "schema_migrated": bool(package.schema_update),
        "completed_at": _instant(completed) if loaded else None,
        "has_pending_transitions": False,
        "refresh": None,
        "dropped_tables": [],
        "truncated_tables": [],
        "tables": _tables(package),
        "jobs": package_jobs(package),
    }


def _tables(package: LoadPackageInfo) -> list[JsonDict]:
    """The schema update as dlt's ``asdict()`` lists it: each table with its columns in a
    list, every column and table naming its schema and load id."""
    where = {"schema_name": package.schema_name, "load_id": package.load_id}
    tables: list[JsonDict] = []
    for name, table in package.schema_update.items():
        columns = table.get("columns") or {}
        assert isinstance(columns, Mapping)
        listed = [{**dict(column), "table_name": name, **where} for column in columns.values()]
        tables.append({**table, "columns": listed, **where})
    return tables


def package_jobs(package: LoadPackageInfo) -> list[JsonDict]:
    """One job per file of the package, in the folder dlt names after its state."""
    completed = package.completed_at
    where = "completed_jobs" if package.state == "loaded" else "new_jobs"
    created = package.created_at
    elapsed = (completed - created) if completed is not None and created is not None else 0.0
    return [
        {
            "state": where,
            "file_path": path,
            "file_size": package.file_sizes.get(path, 0),
            "created_at": _instant(created),
            "elapsed": max(0.0, elapsed),
            "failed_message": None,
            "table_name": Path(path).parent.name,
            "file_id": Path(path).stem,
            "retry_count": 0,
            "file_format": Path(path).suffix.lstrip(".") or None,
            "is_compressed": Path(path).suffix == ".gz",
            "job_id": Path(path).name,
        }
        for path in package.files
    ]


def _job_metrics(info: LoadInfo, package: LoadPackageInfo) -> list[JsonDict]:
    """dlt's per-job load metrics: loadstone times the load step, not each file."""
    load = info.steps.get("load")
    return [
        {
            "load_id": package.load_id,
            "dataset_name": info.dataset_name,
            "job_id": Path(path).name,
            "file_path": path,
            "table_name": Path(path).parent.name,
            "started_at": _instant(load.started_at) if load else None,
            "finished_at": _instant(load.finished_at) if load else None,
            "state": "completed",
            "remote_url": None,
            "retry_count": 0,
            "followup_jobs": [],
        }
        for path in package.files
    ]


def _outputs(info: LoadInfo, package: LoadPackageInfo) -> list[JsonDict]:
    """dlt's outputs: per resource (root table) loaded, where its tables went."""
    if package.state != "loaded":
        return []
    by_root: dict[str, list[str]] = {}
    for table in package.tables:
        by_root.setdefault(package.roots.get(table, table), []).append(table)
    return [
        {
            "load_id": package.load_id,
            "kind": "dataset",
            "resource_name": root,
            "location": info.destination_location,
            "version": package.schema_hash,
            "destination_type": info.destination_type,
            "destination_name": info.destination_name,
            "destination_fingerprint": info.destination_fingerprint,
            "casefold": "str",
            "case_sensitive": False,
            "dataset_name": info.dataset_name,
            "physical_dataset_name": info.dataset_name,
            "schemas": [{"name": package.schema_name, "version_hash": package.schema_hash}],
            "tables": tables,
        }
        for root, tables in by_root.items()
    ]
