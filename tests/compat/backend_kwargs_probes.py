"""``sql_table(..., backend_kwargs=...)`` as a dlt user writes it, against a library given
as an argument: what each backend makes of the options.

Run under dlt 1.31 by ``tests/compat/record_backend_kwargs.py`` (answers in
``tests/fixtures/sql_database/dlt_backend_kwargs.json``) and under loadstone by
``tests/sources/sql_database/test_backend_kwargs_dlt.py``. The answers are the facts that do
not depend on the pandas version: time zones, dtypes of the id and amount columns, rows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

TABLE = "bk_items"
#: (backend, backend_kwargs) per probe, by name
CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "pyarrow_tz_utc": ("pyarrow", {"tz": "UTC"}),
    "pyarrow_tz_berlin": ("pyarrow", {"tz": "Europe/Berlin"}),
    "pyarrow_unknown_key": ("pyarrow", {"nope": 1}),
    "pandas_coerce_float_false": ("pandas", {"coerce_float": False}),
    "pandas_coerce_float_true": ("pandas", {"coerce_float": True}),
    "pandas_numpy_nullable": ("pandas", {"dtype_backend": "numpy_nullable"}),
    "pandas_unknown_key": ("pandas", {"nope": 1}),
    "sqlalchemy_unknown_key": ("sqlalchemy", {"nope": 1}),
}


def create_table(url: str) -> None:
    """Two rows: one with a zoned timestamp and a decimal, one all null."""
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text(f"DROP TABLE IF EXISTS {TABLE}"))
        conn.execute(
            sa.text(
                f"CREATE TABLE {TABLE} (id int PRIMARY KEY, ts timestamptz, "
                "amount numeric(10, 2), name text)"
            )
        )
        conn.execute(
            sa.text(
                f"INSERT INTO {TABLE} VALUES (1, '2024-01-01 10:00:00+02', 1.5, 'a'), "
                "(2, NULL, NULL, NULL)"
            )
        )
    engine.dispose()


def _missing(value: Any) -> bool:
    """None, NaN or pandas' NA (whose truth value is an error)."""
    import pandas as pd

    return bool(pd.isna(value))


def _page_facts(page: Any) -> dict[str, Any]:
    if isinstance(page, dict):  # the sqlalchemy backend's rows come one by one
        return {"kind": "row", "ts": page["ts"].isoformat()}
    if hasattr(page, "schema"):  # an Arrow table
        ts = page.schema.field("ts").type
        return {"kind": "arrow", "ts_tz": ts.tz, "ts": [str(v) for v in page["ts"].to_pylist()]}
    return {
        "kind": "frame",
        "id": str(page.dtypes["id"]),
        "amount": str(page.dtypes["amount"]),
        "amount_values": [None if _missing(v) else str(v) for v in page["amount"]],
    }


def outcome(sql_table: Callable[..., Any], url: str, name: str) -> dict[str, Any]:
    """The first page's facts for one case, or the error's last line."""
    backend, options = CASES[name]
    try:
        pages = list(
            sql_table(credentials=url, table=TABLE, backend=backend, backend_kwargs=options)
        )
    except Exception as error:  # the refusal is the outcome recorded
        cause: BaseException = error
        while cause.__cause__ is not None or cause.__context__ is not None:
            cause = cause.__cause__ or cause.__context__  # type: ignore[assignment]
        return {"error": type(cause).__name__, "unexpected": "unexpected keyword" in str(cause)}
    return _page_facts(pages[0])


def all_outcomes(sql_table: Callable[..., Any], url: str) -> dict[str, Any]:
    create_table(url)
    return {name: outcome(sql_table, url, name) for name in CASES}
