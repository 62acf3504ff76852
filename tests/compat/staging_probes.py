"""``staging=`` as a dlt user writes it, run against a library given as an argument.

The same function runs under dlt 1.31 (``tests/compat/record_staging.py`` records its answers
in ``tests/fixtures/dlt_staging.json``) and under loadstone
(``tests/pipelines/test_staging_dlt.py`` compares). Each probe's outcome is plain data:
``{"accepted": True}`` or the refusal's class name, message and ``destination`` attribute.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: destinations both libraries know: loadstone's loaders and the profiles it keeps of dlt's
DESTINATIONS = (
    "duckdb",
    "postgres",
    "filesystem",
    "motherduck",
    "redshift",
    "snowflake",
    "bigquery",
    "athena",
    "databricks",
    "mssql",
    "synapse",
    "clickhouse",
    "dremio",
    "weaviate",
    "qdrant",
    "lancedb",
)
STAGINGS = ("filesystem", "duckdb", "postgres")


def outcome_of(action: Callable[[], Any]) -> dict[str, Any]:
    """What ``action`` did: accepted, or the exception's class, message and destination."""
    try:
        action()
    except Exception as error:  # the refusal is the outcome recorded
        return {
            "accepted": False,
            "exception": type(error).__name__,
            "message": str(error),
            "destination": getattr(error, "destination", None),
        }
    return {"accepted": True}


def pairs(dlt: Any, workdir: Path) -> dict[str, dict[str, Any]]:
    """``pipeline(destination=D, staging=S)`` for every pair of known destinations."""
    return {
        f"{dest}+{staging}": outcome_of(
            lambda dest=dest, staging=staging: dlt.pipeline(
                f"pair_{dest}_{staging}",
                destination=dest,
                staging=staging,
                pipelines_dir=str(workdir / "pairs"),
            )
        )
        for dest in DESTINATIONS
        for staging in STAGINGS
    }


def run_with_staging(dlt: Any, workdir: Path, bucket_url: str) -> dict[str, Any]:
    """A DuckDB pipeline that loaded once, then ``run(..., staging="filesystem")`` and
    ``attach(..., staging="filesystem")``: what is refused, and what the refused run left."""
    os.environ["DESTINATION__FILESYSTEM__BUCKET_URL"] = bucket_url
    pipeline = dlt.pipeline(
        "staged_runs",
        destination=dlt.destinations.duckdb(str(workdir / "staged.duckdb")),
        dataset_name="ds",
        pipelines_dir=str(workdir / "runs"),
    )
    pipeline.run([{"id": 1}], table_name="items")
    refused = outcome_of(
        lambda: pipeline.run([{"id": 2}], table_name="items", staging="filesystem")
    )
    left = sorted(pipeline.list_extracted_load_packages()) + sorted(
        pipeline.list_normalized_load_packages()
    )
    return {
        "run": refused,
        "packages_left": len(left),
        "attach": outcome_of(
            lambda: dlt.attach(
                "staged_runs", pipelines_dir=str(workdir / "runs"), staging="filesystem"
            )
        ),
        "run_none": outcome_of(
            lambda: dlt.pipeline(
                "staged_none",
                destination=dlt.destinations.duckdb(str(workdir / "none.duckdb")),
                pipelines_dir=str(workdir / "runs"),
            ).run([{"id": 1}], table_name="items", staging=None)
        ),
        "empty_name": outcome_of(
            lambda: dlt.pipeline(
                "staged_empty", destination="duckdb", staging="", pipelines_dir=str(workdir)
            )
        ),
    }


def without_destination(dlt: Any, workdir: Path) -> dict[str, Any]:
    """``pipeline(staging="filesystem")`` with no destination: accepted; its extract works;
    loading into DuckDB is refused."""
    pipeline = dlt.pipeline("staged_later", staging="filesystem", pipelines_dir=str(workdir))
    extracted = outcome_of(lambda: pipeline.extract([{"id": 1}], table_name="items"))
    return {
        "extract": extracted,
        "run_duckdb": outcome_of(
            lambda: pipeline.run([{"id": 1}], table_name="items", destination="duckdb")
        ),
    }


def staging_outcome(dlt: Any, workdir: Path, bucket_url: str) -> dict[str, Any]:
    """Every probe, by name."""
    return {
        "pairs": pairs(dlt, workdir),
        "runs": run_with_staging(dlt, workdir, bucket_url),
        "without_destination": without_destination(dlt, workdir),
    }
