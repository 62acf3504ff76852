"""The cases of ``dlt.sources.helpers.transform``, run the same way under dlt 1.31 (recorded by
``python -m tests.sources.transform_cases``, in an environment with dlt) and under loadstone
(``test_transform_helpers.py``): each case's outcome is plain JSON data."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures/sources/transform_helpers.json"

#: (paths or None for the default, prefix or None, item)
PIVOTS: list[tuple[Any, Any, Any]] = [
    (None, None, [[1, 2, 3]]),
    (None, None, [[1], [2]]),
    (None, None, []),
    (None, None, {"a": [[1, 2]]}),
    ("$", "p", [[1, 2]]),
    ("a", None, {"a": [[1, 2], [3, 4]]}),
    ("a", None, {"a": [[1, 2], [3]]}),
    ("a", None, {"a": []}),
    ("a", None, {"a": [[]]}),
    ("a", None, {"b": 1}),
    ("a", None, {"a": None}),
    ("a", None, {"a": [1, 2]}),
    ("a", None, {"a": [[1, 2], "x"]}),
    ("$.a", None, {"a": [[1, 2]]}),
    ("a[*].b", None, {"a": [{"b": [[1, 2]]}, {"b": [[3]]}]}),
    (["a", "b"], "k", {"a": [[1]], "b": [[2, 3]]}),
    ("a", "", {"a": [[1, 2]]}),
]


def _outcome(call: Any) -> Any:
    try:
        return {"value": call()}
    except Exception as error:  # the outcome of either library is data
        return {"error": type(error).__name__, "message": str(error)}


def _pivot(transform: ModuleType, paths: Any, prefix: Any, item: Any) -> Any:
    options = {k: v for k, v in (("paths", paths), ("prefix", prefix)) if v is not None}
    return transform.pivot(**options)(copy.deepcopy(item))


def _hashes(transform: ModuleType) -> dict[str, Any]:
    import pandas as pd
    import pyarrow as pa

    add = transform.add_row_hash_to_table
    table = pa.table({"a": [1, 2, None], "b": ["x", "y", "z"]})
    # (no datetime column: pandas 3 parses to microseconds, pandas 2 to nanoseconds, and the
    # hash is of the stored integer, under dlt as here)
    frame = pd.DataFrame({"a": [1, 2], "b": ["x", "y"], "f": [0.25, -1.5]})
    batch = pa.record_batch({"n": pa.array([1, 2], pa.int32()), "f": [0.5, None]})
    hashed_frame = add("rh")(frame)
    return {
        "table": add("row_hash")(table).to_pydict(),
        "table_schema": str(add("row_hash")(table).schema),
        "frame": hashed_frame.to_dict("list"),
        "frame_in_place": hashed_frame is frame,
        "batch": add("h")(batch).to_pydict(),
        "dict": _outcome(lambda: add("h")({"a": 1})),
    }


def _pipeline_rows(dlt: ModuleType, transform: ModuleType, folder: Path) -> dict[str, Any]:
    """A resource's first rows kept and skipped by filters, loaded into DuckDB."""

    def pages() -> Any:
        yield [{"n": 1}, {"n": 2}]
        yield {"n": 3}
        yield [{"n": 4}, {"n": 5}]

    found: dict[str, Any] = {}
    for name, step in (("first", transform.take_first(3)), ("skipped", transform.skip_first(3))):
        pipeline = dlt.pipeline(
            f"transform_{name}",
            destination="duckdb",
            pipelines_dir=str(folder / "p"),
            dataset_name="d",
        )
        resource = dlt.resource(pages, name="numbers").add_filter(step)
        pipeline.run(resource, credentials=str(folder / f"{name}.duckdb"))
        with pipeline.sql_client() as client:
            found[name] = [r[0] for r in client.execute_sql("select n from numbers order by n")]
    return found


def outcomes(dlt: ModuleType, transform: ModuleType, folder: Path) -> dict[str, Any]:
    firsts = transform.take_first(2)
    skips = transform.skip_first(2)
    return {
        "take_first": [firsts(x) for x in range(5)],
        "skip_first": [skips(x) for x in range(5)],
        "pivot": [_outcome(lambda c=case: _pivot(transform, *c)) for case in PIVOTS],
        "hashes": _hashes(transform),
        "pipeline": _pipeline_rows(dlt, transform, folder),
    }


if __name__ == "__main__":  # under dlt 1.31: python -m tests.sources.transform_cases
    import tempfile

    import dlt as dlt_module
    from dlt.sources.helpers import transform as dlt_transform

    with tempfile.TemporaryDirectory() as work:
        recorded = outcomes(dlt_module, dlt_transform, Path(work))
    FIXTURE.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {FIXTURE}", file=sys.stderr)
