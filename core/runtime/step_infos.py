"""dlt's ``ExtractInfo`` and ``NormalizeInfo``: what ``extract()`` and ``normalize()`` return.

A ported program reads them as it reads dlt's (observed in dlt 1.31,
``tests/fixtures/pipeline/step_infos.json``): ``loads_ids``, ``load_packages`` (each a
:class:`~loadstone.runtime.load_info.LoadPackageInfo` in the state the step left it),
``metrics`` per load id, ``row_counts`` of a normalize, and ``str()`` as dlt words it (no
"Step ... COMPLETED" line: that belongs to the trace's step). The same objects are the
trace's ``last_extract_info`` / ``last_normalize_info``; a trace read back from
``trace.json`` makes them again from what the step saved there (:func:`step_info_from_dict`).
loadstone keeps no per-job writer metrics: ``job_metrics`` is empty, ``table_metrics`` holds
each table's item count.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from loadstone.runtime.load_info import JsonDict, LoadPackageInfo, StepInfo, instant

if TYPE_CHECKING:
    from loadstone.current import RunningPipeline as Pipeline

__all__ = [
    "DataWriterMetrics",
    "ExtractInfo",
    "NormalizeInfo",
    "StepOutcome",
    "step_info_from_dict",
]


@attrs.frozen
class DataWriterMetrics:
    """dlt's metrics of what was written for a table or resource (``items_count`` ...)."""

    file_path: str = ""
    items_count: int = 0
    file_size: int = 0
    created: float = 0.0
    last_modified: float = 0.0


def _instant(seconds: float | None) -> _dt.datetime | None:
    return None if seconds is None else instant(seconds)


@attrs.define
class StepOutcome:
    """What one extract or normalize did: its packages (in the state it left them) and
    its times; the members dlt's step infos share."""

    pipeline_name: str
    #: the step's figures and times (not compared: trace.json keeps times to the microsecond)
    step: StepInfo = attrs.field(eq=False)
    packages: list[LoadPackageInfo] = attrs.field(factory=list)
    first_run: bool = False
    #: the pipeline that ran the step (dlt's ``pipeline``), when it is in memory
    pipeline: Pipeline | None = attrs.field(default=None, eq=False, repr=False)

    #: the package state the step leaves, as dlt's text names it
    _STATE = ""

    @property
    def loads_ids(self) -> list[str]:
        return [package.load_id for package in self.packages]

    @property
    def load_packages(self) -> list[LoadPackageInfo]:
        return list(self.packages)

    @property
    def started_at(self) -> _dt.datetime | None:
        return _instant(self.step.started_at)

    @property
    def finished_at(self) -> _dt.datetime | None:
        return _instant(self.step.finished_at)

    @property
    def is_empty(self) -> bool:
        """No package came out of the step (dlt's ``is_empty``)."""
        return not self.packages

    def _times(self) -> JsonDict:
        return {"started_at": self.started_at, "finished_at": self.finished_at}

    def _common_dict(self) -> JsonDict:
        return {
            "pipeline": {"pipeline_name": self.pipeline_name},
            "first_run": self.first_run,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "loads_ids": self.loads_ids,
            "load_packages": [package.asdict() for package in self.packages],
            "job_metrics": [],
        }

    def _package_lines(self) -> list[str]:
        """dlt's line per package, each after an empty line."""
        return [
            f"\nLoad package {load_id} is {self._STATE} and NOT YET LOADED to the destination "
            "and contains no failed jobs"
            for load_id in self.loads_ids
        ]

    def __str__(self) -> str:
        return self.asstr()

    def asstr(self, verbosity: int = 0) -> str:
        raise NotImplementedError

    def to_trace(self) -> JsonDict:
        """What the trace keeps to make this info again (:func:`step_info_from_dict`)."""
        return {
            "pipeline_name": self.pipeline_name,
            "first_run": self.first_run,
            "packages": [package.to_trace() for package in self.packages],
            **self._extra_trace(),
        }

    def _extra_trace(self) -> JsonDict:
        return {}


def _metrics_of(counts: Mapping[str, int]) -> dict[str, DataWriterMetrics]:
    return {table: DataWriterMetrics(items_count=int(rows)) for table, rows in counts.items()}


@attrs.define
class ExtractInfo(StepOutcome):
    """What ``pipeline.extract()`` returns, as dlt's ``ExtractInfo``."""

    #: what was extracted: ``[{"name": ..., "data_type": "source" | "resource" | ...}]``
    data_info: list[dict[str, str]] = attrs.field(factory=list)
    #: per load id, the items per table the extract wrote
    table_counts: dict[str, dict[str, int]] = attrs.field(factory=dict)
    #: the resources extracted, those that yielded nothing too
    resources: list[str] = attrs.field(factory=list)
    #: per load id, the items per resource: a table's items count for the resource that
    #: owns it (dlt's ``resource_metrics``)
    resource_counts: dict[str, dict[str, int]] = attrs.field(factory=dict)
    #: dlt's ``dag``: each resource's edges up to its root, ``(parent, child)``, a root
    #: extracted for itself as ``(name, name)``
    dag: list[tuple[str, str]] = attrs.field(factory=list)

    _STATE = "EXTRACTED"

    @property
    def extract_data_info(self) -> list[dict[str, str]]:
        return [dict(item) for item in self.data_info]

    @property
    def metrics(self) -> dict[str, list[dict[str, Any]]]:
        """Per load id, dlt's extract metrics: times, schema, items per table and per
        resource, the resources' ``dag``."""
        metrics: dict[str, list[dict[str, Any]]] = {}
        for package in self.packages:
            counts = self.table_counts.get(package.load_id, {})
            resources = self.resources or list(counts)
            metrics[package.load_id] = [
                {
                    **self._times(),
                    "schema_name": package.schema_name,
                    "job_metrics": {},
                    "table_metrics": _metrics_of(counts),
                    "resource_metrics": _metrics_of(
                        self.resource_counts.get(package.load_id, counts)
                    ),
                    "dag": list(self.dag) or [(name, name) for name in resources],
                    "hints": {name: {} for name in resources},
                    "inputs": [],
                }
            ]
        return metrics

    def asdict(self) -> JsonDict:
        counts = [
            {"load_id": load_id, "table_name": table, "items_count": rows}
            for load_id, tables in self.table_counts.items()
            for table, rows in tables.items()
        ]
        return {
            **self._common_dict(),
            "table_metrics": counts,
            "resource_metrics": [{**c, "resource_name": c["table_name"]} for c in counts],
            "dag": [],
            "hints": [],
            "inputs": [],
        }

    def asstr(self, verbosity: int = 0) -> str:
        return "\n".join(self._package_lines())

    def _extra_trace(self) -> JsonDict:
        return {
            "data_info": self.extract_data_info,
            "table_counts": self.table_counts,
            "resources": self.resources,
            "resource_counts": self.resource_counts,
            "dag": [list(edge) for edge in self.dag],
        }


@attrs.define
class NormalizeInfo(StepOutcome):
    """What ``pipeline.normalize()`` returns, as dlt's ``NormalizeInfo``."""

    #: per load id, the rows per table the normalize wrote (the state's row last)
    table_counts: dict[str, dict[str, int]] = attrs.field(factory=dict)
    #: rows per table over all packages, the pipeline state's row last (as dlt)
    totals: dict[str, int] = attrs.field(factory=dict)

    _STATE = "NORMALIZED"

    @property
    def row_counts(self) -> dict[str, int]:
        return dict(self.totals)

    @property
    def metrics(self) -> dict[str, list[dict[str, Any]]]:
        """Per load id: the step's times and the rows per table (dlt's ``table_metrics``)."""
        return {
            package.load_id: [
                {
                    **self._times(),
                    "job_metrics": {},
                    "table_metrics": _metrics_of(self.table_counts.get(package.load_id, {})),
                }
            ]
            for package in self.packages
        }

    def asdict(self) -> JsonDict:
        counts = [
            {"load_id": load_id, "table_name": table, "items_count": rows}
            for load_id, tables in self.table_counts.items()
            for table, rows in tables.items()
        ]
        return {**self._common_dict(), "table_metrics": counts}

    def asstr(self, verbosity: int = 0) -> str:
        if not self.totals:
            return "No data found to normalize"
        lines = ["Normalized data for the following tables:"]
        lines += [f"- {table}: {rows} row(s)" for table, rows in self.totals.items()]
        return "\n".join(lines + self._package_lines())

    def _extra_trace(self) -> JsonDict:
        return {"table_counts": self.table_counts, "totals": self.totals}


def step_info_from_dict(name: str, step: Mapping[str, Any]) -> ExtractInfo | NormalizeInfo | None:
    """The extract or normalize info a trace saved (its step entry), made again; a trace
    written before the infos were saved gives its load ids and row counts."""
    if name not in ("extract", "normalize"):
        return None
    saved = step.get("info")
    if not isinstance(saved, Mapping):
        saved = {
            "packages": [
                {"load_id": load_id, "schema_name": "", "state": _STATE_AFTER[name]}
                for load_id in step.get("load_ids") or []
            ],
            "totals": dict(step.get("row_counts") or {}),
        }
    common: dict[str, Any] = {
        "pipeline_name": str(saved.get("pipeline_name") or ""),
        "step": StepInfo.from_dict(step),
        "packages": [LoadPackageInfo.from_dict(p) for p in saved.get("packages") or []],
        "first_run": bool(saved.get("first_run")),
        "table_counts": dict(saved.get("table_counts") or {}),
    }
    if name == "extract":
        return ExtractInfo(
            **common,
            data_info=list(saved.get("data_info") or []),
            resources=list(saved.get("resources") or []),
            resource_counts=dict(saved.get("resource_counts") or {}),
            dag=[(str(a), str(b)) for a, b in saved.get("dag") or []],
        )
    return NormalizeInfo(**common, totals=dict(saved.get("totals") or {}))


_STATE_AFTER = {"extract": "extracted", "normalize": "normalized"}
