"""The type programs run under dlt (to record) and under loadstone (to compare).

One table of PostgreSQL's awkward types (tests/fixtures/sources/postgres_types.sql: arrays,
json/jsonb, uuid, bytea, interval, money, an enum, inet, numerics with and without scale,
time with time zone) read by ``sql_table`` at each reflection level and backend, and with
each adapter. The outcome is what dlt's schema says of each column, the DuckDB columns and
the rows as text. ``dlt`` and ``sql_table`` are passed in: the program is the same under both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import sqlalchemy as sa

from tests.compat.harness import destination_tables

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sources"
LEVELS = ("minimal", "full", "full_with_precision")


def _as_double(sql_type: Any) -> Any:
    """A type adapter: numerics read as floats (dlt's documented example)."""
    if isinstance(sql_type, sa.Numeric) and not isinstance(sql_type, sa.Float):
        return sa.Numeric(asdecimal=False)
    return None


def _drop_note(table: Any) -> Any:
    """A table adapter: the ``note`` column removed."""
    table._columns.remove(table.c.note)
    return table


def _first_two(query: Any, table: Any) -> Any:
    """A query adapter: only ids 1 and 2."""
    return query.where(table.c.id < 3)


#: adapter cases: name -> sql_table keyword arguments (backend sqlalchemy, level full)
ADAPTERS: dict[str, dict[str, Any]] = {
    "type_adapter_double": {"type_adapter_callback": _as_double},
    "table_adapter_drop": {"table_adapter_callback": _drop_note},
    "query_adapter": {"query_adapter_callback": _first_two},
    "included_columns": {"included_columns": ["id", "docb", "num_scaled"]},
    "excluded_columns": {"excluded_columns": ["tags", "nums", "raw"]},
    "type_adapter_double_pyarrow": {"type_adapter_callback": _as_double, "backend": "pyarrow"},
}
#: the cases: name -> sql_table keyword arguments
CASES: dict[str, dict[str, Any]] = {
    **{
        f"{backend}_{level}": {"backend": backend, "reflection_level": level}
        for backend in ("sqlalchemy", "pyarrow")
        for level in LEVELS
    },
    # dlt's pandas backend decodes bytea as UTF-8 and fails: the table without it
    **{
        f"pandas_{level}": {
            "backend": "pandas",
            "reflection_level": level,
            "excluded_columns": ["raw"],
        }
        for level in LEVELS
    },
    **ADAPTERS,
    # connectorx cannot read money, timetz (it panics: not implemented): the table without them
    "connectorx_full": {
        "backend": "connectorx",
        "excluded_columns": ["cash", "at_tz", "mood", "addr"],
    },
    "interval_sqlalchemy": {"table": "spans"},
    "interval_pyarrow": {"table": "spans", "backend": "pyarrow"},
}
#: DuckDB types whose text differs by client version: the rows are compared without them
_AS_TEXT = "CAST({} AS VARCHAR)"


def create_tables(url: str, schema: str) -> None:
    engine = sa.create_engine(url)
    sql = (FIXTURES / "postgres_types.sql").read_text().replace("src.", f"{schema}.")
    with engine.begin() as conn:
        conn.exec_driver_sql(f"DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}")
        conn.exec_driver_sql(sql)
    engine.dispose()


def drop_tables(url: str, schema: str) -> None:
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.exec_driver_sql(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    engine.dispose()


def rows_as_text(db: Path) -> dict[str, list[list[str | None]]]:
    """Every data table's rows (by id, then all columns) as DuckDB prints each value."""
    out: dict[str, list[list[str | None]]] = {}
    names = destination_tables(db)  # read first: it attaches the file in a reader of its own
    with duckdb.connect(str(db)) as conn:
        for name in names:
            columns = [
                c
                for (c,) in conn.execute(
                    "select column_name from information_schema.columns where table_schema = "
                    "'d' and table_name = ? and column_name not like '_dlt%' "
                    "order by ordinal_position",
                    [name],
                ).fetchall()
            ]
            listed = ", ".join(_AS_TEXT.format(f'"{c}"') for c in columns)
            rows = conn.execute(f'select {listed} from d."{name}" order by 1').fetchall()
            out[name] = [list(row) for row in rows]
    return out


def run_case(dlt: Any, sql_table: Any, url: str, schema: str, case: str, work: Path) -> Any:
    """The schema's columns, the destination's columns and the rows of one case."""
    pipeline = dlt.pipeline(
        "types",
        destination=dlt.destinations.duckdb(str(work / "types.duckdb")),
        dataset_name="d",
        pipelines_dir=str(work / "pipelines"),
    )
    arguments = {"table": "kinds", **CASES[case]}
    pipeline.run(sql_table(url, schema=schema, **arguments))
    tables = pipeline.default_schema.to_dict()["tables"]
    return {
        "schema": {
            name: list(table["columns"].values())
            for name, table in tables.items()
            if not name.startswith("_dlt")
        },
        "destination": destination_tables(work / "types.duckdb"),
        "rows": rows_as_text(work / "types.duckdb"),
    }
