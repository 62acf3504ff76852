"""The MariaDB programs run under dlt (to record) and under loadstone (to compare).

The tables of tests/fixtures/sources/mariadb_source.sql (tinyint(1), unsigned bigint,
datetime(6), timestamp, decimal(38,10), json, enum, set, bit, blob, utf8mb4 text, a view, a
compound key) read by ``sql_database`` through SQLAlchemy and PyMySQL at each reflection
level and backend; and an incremental ``updated_at`` (datetime(6)) over four runs. ``dlt``
and its ``sql_database`` / ``sql_table`` are passed in: the program is the same under both.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb

from tests.compat.harness import destination_tables
from tests.sources.mariadb_support import run_script
from tests.sources.sql_incremental_cases import stored_cursor
from tests.sources.sql_types_cases import rows_as_text

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sources"
#: the cases: name -> sql_database keyword arguments
CASES: dict[str, dict[str, Any]] = {
    **{
        f"{backend}_{level}": {"backend": backend, "reflection_level": level}
        for backend in ("sqlalchemy", "pyarrow", "pandas", "connectorx")
        for level in ("minimal", "full", "full_with_precision")
        if backend == "sqlalchemy" or level == "full"
    },
    **{
        f"extras_{backend}": {"backend": backend, "table_names": ["extras"]}
        for backend in ("sqlalchemy", "pyarrow", "pandas", "connectorx")
    },
}
#: the tables a case reads when it does not name them
TABLES = ["kinds", "kinds_view"]


def create_tables(url: str) -> None:
    run_script(url, (FIXTURES / "mariadb_source.sql").read_text())


def _pipeline(dlt: Any, work: Path, name: str) -> Any:
    return dlt.pipeline(
        name,
        destination=dlt.destinations.duckdb(str(work / f"{name}.duckdb")),
        dataset_name="d",
        pipelines_dir=str(work / "pipelines"),
    )


def run_case(dlt: Any, sql_database: Any, url: str, case: str, work: Path) -> Any:
    """The schema's columns, the destination's columns and the rows of one case."""
    pipeline = _pipeline(dlt, work, "maria")
    arguments = {"table_names": TABLES, **CASES[case]}
    pipeline.run(sql_database(url, **arguments))
    tables = pipeline.default_schema.to_dict()["tables"]
    return {
        "schema": {
            name: list(table["columns"].values())
            for name, table in tables.items()
            if not name.startswith("_dlt")
        },
        "destination": destination_tables(work / "maria.duckdb"),
        "rows": rows_as_text(work / "maria.duckdb"),
    }


def _add_events(url: str, first: int, last: int) -> None:
    values = ", ".join(
        f"({i}, 'e{i}', '{dt.datetime(2024, 1, 1) + dt.timedelta(seconds=i, microseconds=i)}')"
        for i in range(first, last + 1)
    )
    if values:
        run_script(url, f"INSERT INTO events VALUES {values}")


def run_incremental(dlt: Any, sql_table: Any, url: str, backend: str, work: Path) -> Any:
    """The ids each of four runs loads (10 rows, then 3, 1, 0 new) and the stored cursor."""
    run_script(
        url,
        "DROP TABLE IF EXISTS events;\n"
        "CREATE TABLE events (id INT PRIMARY KEY, v VARCHAR(10), updated_at DATETIME(6) NOT NULL)",
    )
    pipeline = _pipeline(dlt, work, "events")
    loaded: list[list[int]] = []
    seen: Counter[int] = Counter()
    for first, last in ((1, 10), (11, 13), (14, 14), (1, 0)):
        _add_events(url, first, last)
        table = sql_table(
            url, table="events", backend=backend, incremental=dlt.sources.incremental("updated_at")
        )
        pipeline.run(table)
        with duckdb.connect(str(work / "events.duckdb")) as conn:
            now = Counter(i for (i,) in conn.execute("select id from d.events").fetchall())
        loaded.append(sorted((now - seen).elements()))
        seen = now
    return {"loaded": loaded, "state": stored_cursor(work / "events.duckdb", "d", "events")}
