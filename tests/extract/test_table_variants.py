"""``with_hints(..., create_table_variant=True)``: a page goes to a table of its own with the
resource's hints and the variant's, and the resource's table keeps its own (dlt 1.31's
outcome of the same program, recorded by hand from its run: tables, hints, row counts)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import loadstone as dlt


@dlt.resource(
    name="events",
    primary_key="id",
    write_disposition="merge",
    columns={"kind": {"data_type": "text", "description": "k"}},
)
def events() -> Any:
    yield {"id": 1, "kind": "a"}
    yield dlt.mark.with_hints(
        {"id": 2, "x": 1}, dlt.mark.make_hints(table_name="events_b"), create_table_variant=True
    )
    yield dlt.mark.with_hints(
        [{"id": 4, "x": 1}],
        dlt.mark.make_hints(table_name="events_b", columns={"x": {"data_type": "double"}}),
        create_table_variant=True,
    )
    yield {"id": 3, "kind": "c"}


def test_a_table_variant_takes_the_resource_hints_and_its_own(tmp_path: Path) -> None:
    pipe = dlt.pipeline("variants", destination="duckdb", pipelines_dir=str(tmp_path))
    pipe.run(events())
    tables = {name: pipe.default_schema.tables[name] for name in ("events", "events_b")}
    columns = {
        name: {
            column: (spec.get("data_type"), spec.get("primary_key"), spec.get("description"))
            for column, spec in table["columns"].items()
            if not column.startswith("_dlt")
        }
        for name, table in tables.items()
    }
    assert columns == {
        "events": {"kind": ("text", None, "k"), "id": ("bigint", True, None)},
        "events_b": {
            "kind": ("text", None, "k"),
            "x": ("double", None, None),
            "id": ("bigint", True, None),
        },
    }
    assert {name: table.get("write_disposition") for name, table in tables.items()} == {
        "events": "merge",
        "events_b": "merge",
    }
    counts = pipe.last_trace.last_normalize_info.row_counts
    assert (counts["events"], counts["events_b"]) == (2, 2)
