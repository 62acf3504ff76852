"""A PostgreSQL dataset as comparable data: its columns and its rows, as text.

Shared by the tests and by ``tests/fixtures/postgres/record.py`` (which runs it in dlt's
throwaway environment with psycopg2), so both sides are described by the same code. Only
DB-API calls with ``%s`` placeholders are used, which psycopg 2 and 3 both take.

Values are PostgreSQL's own text for each value (``col::text``, time zone UTC), so a type
difference shows as a text difference. Bookkeeping ids (``_dlt_id``, ``_dlt_parent_id``,
``_dlt_root_id``, ``_dlt_load_id``) differ between any two loads and are left out of rows;
system tables are compared by their columns only.
"""

from __future__ import annotations

from typing import Any

#: information_schema.columns fields that make a column's definition
COLUMN_FIELDS = (
    "table_name",
    "column_name",
    "ordinal_position",
    "data_type",
    "is_nullable",
    "character_maximum_length",
    "numeric_precision",
    "numeric_scale",
    "datetime_precision",
)
BOOKKEEPING = {"_dlt_id", "_dlt_parent_id", "_dlt_root_id", "_dlt_load_id"}
SYSTEM = {"_dlt_loads", "_dlt_version", "_dlt_pipeline_state"}


def _quote(ident: str) -> str:
    return '"' + ident.replace('"', '""') + '"'


def columns(conn: Any, dataset: str) -> list[list[Any]]:
    """``information_schema.columns`` of every table of ``dataset``, in table/position order."""
    cur = conn.cursor()
    cur.execute(
        f"SELECT {', '.join(COLUMN_FIELDS)} FROM information_schema.columns "
        "WHERE table_schema = %s ORDER BY table_name, ordinal_position",
        (dataset,),
    )
    return [list(row) for row in cur.fetchall()]


def rows(conn: Any, dataset: str) -> dict[str, list[list[str | None]]]:
    """Every data table's rows as sorted lists of text values (bookkeeping ids left out)."""
    cur = conn.cursor()
    cur.execute("SET TIME ZONE 'UTC'")
    by_table: dict[str, list[str]] = {}
    for table, column, *_ in columns(conn, dataset):
        if table not in SYSTEM and column not in BOOKKEEPING:
            by_table.setdefault(table, []).append(column)
    out: dict[str, list[list[str | None]]] = {}
    for table, names in by_table.items():
        select = ", ".join(f"{_quote(n)}::text" for n in names)
        cur.execute(f"SELECT {select} FROM {_quote(dataset)}.{_quote(table)}")
        out[table] = sorted(
            (list(r) for r in cur.fetchall()), key=lambda r: [(v is None, v or "") for v in r]
        )
    return out


def snapshot(conn: Any, dataset: str) -> dict[str, Any]:
    """Columns of every table and rows of every data table of ``dataset``."""
    return {"columns": columns(conn, dataset), "rows": rows(conn, dataset)}
