"""The typed-cursor programs run under dlt (to record) and under loadstone (to compare).

Each case makes a table ``t(id, v, updated_at <type>)`` of 10 rows in its own PostgreSQL
schema, loads it with ``sql_table(..., incremental=incremental("updated_at", ...))``, adds 3
rows, loads, adds 1, loads, loads again: the rows each run loads, and the cursor state the
destination keeps (``_dlt_pipeline_state``), are the outcome. The same function runs with
``dlt`` or ``loadstone`` passed in as ``dlt``, so the program is the same under both.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import zlib
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from tests.compat.harness import read_only

#: column type -> (SQL type, SQL expression of row i)
TYPES = {
    "timestamptz": (
        "timestamptz",
        "timestamptz '2024-01-01 00:00:00+00' + ({i}) * interval '1 minute'",
    ),
    "timestamp": ("timestamp", "timestamp '2024-01-01' + ({i}) * interval '1 minute'"),
    "date": ("date", "date '2024-01-01' + ({i})"),
    "numeric": ("numeric(12,3)", "({i}) * 1.5"),
    "integer": ("integer", "({i})"),
    "uuid": ("uuid", "('00000000-0000-0000-0000-' || lpad(({i})::text, 12, '0'))::uuid"),
    "text": ("text", "lpad(({i})::text, 6, '0')"),
}
UTC = dt.timezone.utc
#: incremental options on a timestamptz cursor (values as the program writes them)
OPTIONS: dict[str, dict[str, Any]] = {
    "initial_value": {"initial_value": dt.datetime(2024, 1, 1, 0, 5, tzinfo=UTC)},
    "end_value": {
        "initial_value": dt.datetime(2024, 1, 1, 0, 3, tzinfo=UTC),
        "end_value": dt.datetime(2024, 1, 1, 0, 8, tzinfo=UTC),
    },
    "end_value_closed_open_start": {
        "initial_value": dt.datetime(2024, 1, 1, 0, 3, tzinfo=UTC),
        "end_value": dt.datetime(2024, 1, 1, 0, 8, tzinfo=UTC),
        "range_start": "open",
        "range_end": "closed",
    },
    "range_start_open": {"range_start": "open"},
    "row_order_asc": {"row_order": "asc"},
    "row_order_desc": {"row_order": "desc"},
    "min": {"last_value_func": min},
    # every fifth row without a cursor value (the column nullable)
    "missing_include": {"on_cursor_value_missing": "include"},
    "missing_exclude": {"on_cursor_value_missing": "exclude"},
    "missing_raise": {"on_cursor_value_missing": "raise"},
}
#: the cases: name -> (column type, backend, incremental options)
CASES: dict[str, tuple[str, str, str | None]] = {
    **{f"{t}_sqlalchemy": (t, "sqlalchemy", None) for t in TYPES},
    **{f"{t}_pyarrow": (t, "pyarrow", None) for t in ("timestamptz", "numeric", "date", "uuid")},
    **{f"{t}_pandas": (t, "pandas", None) for t in ("timestamptz", "integer")},
    **{
        f"{t}_connectorx": (t, "connectorx", None)
        for t in ("timestamptz", "timestamp", "numeric", "text")
    },
    **{f"timestamptz_{o}": ("timestamptz", "sqlalchemy", o) for o in OPTIONS},
}


def _insert(engine: sa.Engine, schema: str, expr: str, first: int, last: int) -> None:
    with engine.begin() as conn:
        conn.exec_driver_sql(
            f"INSERT INTO {schema}.t SELECT i, 'v' || i, {expr.format(i='i')} "
            f"FROM generate_series({first}, {last}) i"
        )


def stored_cursor(db: Path, dataset: str, table: str = "t") -> Any:
    """The cursor state the destination keeps, as stored (dlt's marked text included)."""
    with read_only(db) as conn:
        (text,) = conn.execute(
            f"select state from {dataset}._dlt_pipeline_state order by version desc limit 1"
        ).fetchone()  # type: ignore[misc]  # one row after a load
    state = json.loads(zlib.decompress(base64.b64decode(text)))
    (source,) = state.get("sources", {"": {}}).values()
    cursor = source.get("resources", {}).get(table, {}).get("incremental", {}).get("updated_at")
    if cursor is None:
        return None
    return {k: cursor[k] for k in ("initial_value", "last_value", "start_value")}


def run_case(dlt: Any, sql_table: Any, url: str, schema: str, case: str, work: Path) -> Any:
    """Runs one case; returns the ids each run loaded and the stored cursor state."""
    kind, backend, option = CASES[case]
    sql_type, expr = TYPES[kind]
    constraint = "not null"
    if option and option.startswith("missing_"):
        expr, constraint = f"CASE WHEN mod({{i}}, 5) = 0 THEN NULL ELSE {expr} END", ""
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.exec_driver_sql(f"DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}")
        conn.exec_driver_sql(
            f"CREATE TABLE {schema}.t (id int primary key, v text, updated_at {sql_type} {constraint})"
        )
    _insert(engine, schema, expr, 1, 10)
    pipeline = dlt.pipeline(
        "inc",
        destination=dlt.destinations.duckdb(str(work / "inc.duckdb")),
        dataset_name="d",
        pipelines_dir=str(work / "pipelines"),
    )
    options = OPTIONS[option] if option else {}
    loaded: list[list[int]] = []
    seen: Counter[int] = Counter()
    for first, last in ((1, 0), (11, 13), (14, 14), (1, 0)):
        if first <= last:
            _insert(engine, schema, expr, first, last)
        table = sql_table(
            url,
            table="t",
            schema=schema,
            backend=backend,
            incremental=dlt.sources.incremental("updated_at", **options),
        )
        pipeline.run(table)
        with read_only(work / "inc.duckdb") as conn:
            now = Counter(i for (i,) in conn.execute("select id from d.t").fetchall())
        loaded.append(sorted((now - seen).elements()))
        seen = now
    with engine.begin() as conn:
        conn.exec_driver_sql(f"DROP SCHEMA {schema} CASCADE")
    engine.dispose()
    return {"loaded": loaded, "state": stored_cursor(work / "inc.duckdb", "d")}


def plain(value: Any) -> Any:
    """A value of the outcome as JSON holds it."""
    if isinstance(value, (dt.date, dt.time, Decimal)):
        return str(value)
    return value
