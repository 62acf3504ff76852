"""Helpers of the filesystem destination tests: pipelines into a bucket, files read back.

Everything here reads what the destination wrote with independent readers (pyarrow, gzip +
json, DuckDB), never through the destination's own reader.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

import loadstone
from loadstone.pipelines.pipeline import Pipeline

DATASET = "fsdata"


def fs_pipeline(
    tmp_path: Path, name: str, bucket_url: str, *, dataset: str = DATASET, **config: Any
) -> Pipeline:
    """A pipeline into ``bucket_url`` with its working folder under ``tmp_path``."""
    destination = loadstone.destinations.filesystem(bucket_url=bucket_url, **config)
    return loadstone.pipeline(
        pipeline_name=name,
        destination=destination,
        dataset_name=dataset,
        pipelines_dir=tmp_path / "pipelines",
    )


def files_of(dataset_dir: Path) -> list[str]:
    """Relative paths of every file in the dataset folder."""
    return sorted(str(p.relative_to(dataset_dir)) for p in dataset_dir.rglob("*") if p.is_file())


def read_file_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of one written file: Parquet by pyarrow, JSONL (gzipped or not) by json."""
    if path.name.endswith(".parquet"):
        return pq.read_table(path).to_pylist()
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def rows_per_table(dataset_dir: Path) -> dict[str, int]:
    """Rows of every data table, counted from its files."""
    counts: dict[str, int] = {}
    for relative in files_of(dataset_dir):
        table = relative.split("/")[0]
        if table.startswith("_dlt") or table == "init":
            continue
        counts[table] = counts.get(table, 0) + len(read_file_rows(dataset_dir / relative))
    return dict(sorted(counts.items()))


def counter_source() -> Any:
    """A source whose resource keeps its position in the pipeline state (3 rows a run)."""
    from loadstone import current

    @loadstone.source
    def numbers() -> Any:
        @loadstone.resource
        def counter() -> Any:
            state = current.resource_state()
            start = state.get("last", 0)
            yield [{"n": n} for n in range(start, start + 3)]
            state["last"] = start + 3

        return counter

    return numbers()


def load_case(cases_dir: Path, file_name: str) -> list[dict[str, Any]]:
    return json.loads((cases_dir / file_name).read_text(encoding="utf-8"))
