"""Decimal loads into Spark catalog tables (issue 39), run by ``spark_destination_child.py``'s
``loads`` application (one Spark application fewer: the embedded Derby metastore admits one
JVM at a time, so these share that application's metastore).

Issue 39's values in a ``decimal(38,10)`` hint, a value beyond it refused, and the
random-decimal property (hypothesis, few examples: every example is a load).
"""

from __future__ import annotations

import sys
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(TESTS))

from decimal_cases import PROPERTY, DecimalColumn, decimal_columns, same_digits  # noqa: E402
from decimal_programs import ISSUE_VALUES  # noqa: E402
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import loadstone  # noqa: E402

OPTIONS = {"spark.master": "local[1]", "spark.sql.shuffle.partitions": "1"}
HINT = {"data_type": "decimal", "precision": 38, "scale": 10}


def pipeline(work: Path, name: str) -> Any:
    destination = loadstone.destinations.spark(
        warehouse_dir=str(work / "warehouse"),
        metastore_dir=str(work / "metastore"),
        options=OPTIONS,
    )
    return loadstone.pipeline(
        name, destination=destination, dataset_name=name, pipelines_dir=str(work / "p")
    )


def read(name: str) -> tuple[dict[str, str], list[dict[str, str | None]]]:
    from pyspark.sql import SparkSession

    session = SparkSession.getActiveSession()
    assert session is not None
    frame = session.table(f"{name}.t").orderBy("id")
    types = {k: v for k, v in frame.dtypes if not k.startswith("_dlt")}
    rows = [{k: None if r[k] is None else str(r[k]) for k in types} for r in frame.collect()]
    return types, rows


def issue_values(work: Path) -> dict[str, Any]:
    rows = [{"id": i, "x": Decimal(v)} for i, v in enumerate(ISSUE_VALUES)]
    pipeline(work, "issue").run(rows, table_name="t", columns={"x": HINT})
    types, found = read("issue")
    return {"types": types, "x": [r["x"] for r in found]}


def refused(work: Path) -> dict[str, Any]:
    pipe = pipeline(work, "refused")
    try:
        pipe.run([{"id": 1, "x": Decimal("1E+40")}], table_name="t", columns={"x": HINT})
    except loadstone.exceptions.PipelineStepFailed as failed:
        cause = failed.__cause__
        return {"error": type(cause).__name__, "failed_packages": len(pipe.failed_packages())}
    return {"error": None}


@PROPERTY
@given(columns=st.lists(decimal_columns(), min_size=1, max_size=3))
def random_decimals(work: Path, columns: list[DecimalColumn]) -> None:
    name = f"prop_{uuid.uuid4().hex[:8]}"
    width = max(len(c.values) for c in columns)
    rows = [
        {"id": i, **{f"c{n}": c.values[i] for n, c in enumerate(columns) if i < len(c.values)}}
        for i in range(width)
    ]
    hints = {f"c{n}": c.hint for n, c in enumerate(columns)}
    pipe = pipeline(work, name)
    if not all(c.fits for c in columns):
        try:
            pipe.run(rows, table_name="t", columns=hints)
        except loadstone.exceptions.PipelineStepFailed as failed:
            assert isinstance(failed.__cause__, loadstone.exceptions.ValueDoesNotFit)
            return
        raise AssertionError(f"a value that does not fit was loaded: {columns}")
    pipe.run(rows, table_name="t", columns=hints)
    types, found = read(name)
    for n, column in enumerate(columns):
        assert types[f"c{n}"] == f"decimal({column.precision},{column.scale})", types
        for i, written in enumerate(column.values):
            assert same_digits(written, found[i][f"c{n}"]), (column, written, found[i])
