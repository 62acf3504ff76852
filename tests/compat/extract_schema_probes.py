"""The schema versions a run saves, step by step, as a dlt user reads them: after
``extract()`` (the run's root tables and the state table), after ``normalize()`` (the nested
tables), on a second run that adds a table. Recorded under dlt 1.31 by
``tests/compat/record_extract_schema.py`` (``tests/fixtures/dlt_extract_schema.json``);
compared by ``tests/extract/test_extract_schema.py``. Hash values differ between the two
libraries (see ``loadstone.schema.versioning``); versions, hash counts and tables do not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _seen(schema: Any) -> dict[str, Any]:
    return {
        "version": schema.version,
        "previous_hashes": len(schema.previous_hashes),
        "tables": list(schema.tables),
    }


def steps_outcome(dlt: Any, workdir: Path) -> dict[str, Any]:
    @dlt.resource(primary_key="id", write_disposition="merge", columns={"note": {}})
    def users() -> Any:
        yield [{"id": 1, "name": "a", "tags": [{"t": "x"}]}, {"id": 2, "tags": []}]

    @dlt.resource
    def empties() -> Any:
        yield from []

    @dlt.resource(schema_contract={"columns": "freeze"})
    def frozen() -> Any:
        yield {"a": 1, "b": [1, 2]}

    pipeline = dlt.pipeline(
        "extract_schema",
        destination=dlt.destinations.duckdb(str(workdir / "extract_schema.duckdb")),
        pipelines_dir=str(workdir / "pipelines"),
    )
    out: dict[str, Any] = {}
    pipeline.extract([users(), empties()])
    out["after_extract"] = _seen(pipeline.default_schema)
    out["users_after_extract"] = sorted(pipeline.default_schema.tables["users"]["columns"])
    pipeline.normalize()
    out["after_normalize"] = _seen(pipeline.default_schema)
    pipeline.load()
    pipeline.run([{"a": 1, "b": [1]}], table_name="other")
    out["second_run"] = _seen(pipeline.default_schema)
    pipeline.run(frozen())
    out["contract_run"] = _seen(pipeline.default_schema)
    return out
