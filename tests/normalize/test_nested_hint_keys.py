"""``nested_hints=`` with keys and write dispositions, as dlt 1.31 treats them (the whole
outcomes are compared with dlt's recording in ``tests/compat/nested_hint_scenarios.py``):
a primary or merge key makes a nested table one of its own, its rows not linked to their
parent; a merging one gives its rows' ``_dlt_id`` as the root key of its nested rows; a
``replace`` of a linked nested table empties it while its root appends."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import duckdb

import loadstone as dlt

_ROWS = [{"id": 1, "lines": [{"sku": "a", "qty": 1, "parts": [{"p": 1}]}, {"sku": "b"}]}]
_LATER = [{"id": 1, "lines": [{"sku": "a", "qty": 9, "parts": [{"p": 2}]}]}]


def _pipeline(tmp_path: Path) -> Any:
    return dlt.pipeline(
        "nested_keys",
        destination=dlt.destinations.duckdb(str(tmp_path / "nk.duckdb")),
        dataset_name="ds",
        pipelines_dir=str(tmp_path / "pipelines"),
    )


def _orders(rows: list[dict[str, Any]], **nested: Any) -> Any:
    hints = {"lines": dlt.mark.make_nested_hints(**nested)}
    return dlt.resource(list(rows), name="orders", nested_hints=hints)


def _query(tmp_path: Path, sql: str) -> list[tuple[Any, ...]]:
    with duckdb.connect(str(tmp_path / "nk.duckdb")) as conn:
        return conn.execute(sql).fetchall()


def test_a_nested_primary_key_makes_a_table_of_its_own(tmp_path: Path) -> None:
    pipe = _pipeline(tmp_path)
    pipe.run(_orders(_ROWS, primary_key="sku"))
    lines = pipe.default_schema.get_table("orders__lines")
    assert lines.get("parent") is None
    assert (lines["resource"], lines["write_disposition"]) == ("orders", "append")
    assert [c for c in lines["columns"] if c.startswith("_dlt")] == ["_dlt_load_id", "_dlt_id"]
    assert pipe.default_schema.get_table("orders__lines__parts")["parent"] == "orders__lines"


def test_a_merging_nested_table_replaces_the_nested_rows_of_its_rows(tmp_path: Path) -> None:
    pipe = _pipeline(tmp_path)
    for rows in (_ROWS, _LATER):
        pipe.run(_orders(rows, primary_key="sku", write_disposition="merge"))
    assert _query(tmp_path, "select sku, qty from ds.orders__lines order by sku") == [
        ("a", 9),
        ("b", None),
    ]
    assert _query(tmp_path, "select p from ds.orders__lines__parts") == [(2,)]
    assert _query(
        tmp_path,
        "select count(*) from ds.orders__lines__parts p "
        "join ds.orders__lines l on p._dlt_root_id = l._dlt_id",
    ) == [(1,)]


def test_a_replaced_nested_table_is_emptied_while_its_root_appends(tmp_path: Path) -> None:
    pipe = _pipeline(tmp_path)
    for rows in (_ROWS, _LATER):
        pipe.run(_orders(rows, write_disposition="replace"))
    assert _query(tmp_path, "select count(*) from ds.orders") == [(2,)]
    assert _query(tmp_path, "select sku from ds.orders__lines") == [("a",)]
    assert _query(tmp_path, "select p from ds.orders__lines__parts") == [(2,)]


def test_on_postgresql_the_nested_merge_and_replace_load_as_on_duckdb(
    postgres_url: str, tmp_path: Path
) -> None:
    dataset = f"nested_keys_{uuid.uuid4().hex[:8]}"
    pipe = dlt.pipeline(
        "nested_keys_pg",
        destination=dlt.destinations.postgres(postgres_url),
        dataset_name=dataset,
        pipelines_dir=str(tmp_path / "pipelines"),
    )
    for rows in (_ROWS, _LATER):
        pipe.run(_orders(rows, primary_key="sku", write_disposition="merge"))
    replacing = {"lines": dlt.mark.make_nested_hints(write_disposition="replace")}
    for _ in range(2):
        pipe.run(dlt.resource(list(_LATER), name="replaced", nested_hints=replacing))
    with pipe.sql_client() as client:
        lines = client.execute_sql(f'SELECT sku, qty FROM "{dataset}".orders__lines ORDER BY sku')
        parts = client.execute_sql(f'SELECT p FROM "{dataset}".orders__lines__parts')
        replaced = client.execute_sql(f'SELECT count(*) FROM "{dataset}".replaced__lines')
        roots = client.execute_sql(f'SELECT count(*) FROM "{dataset}".replaced')
        client.execute_sql(f'DROP SCHEMA "{dataset}" CASCADE')
    assert [tuple(r) for r in lines] == [("a", 9), ("b", None)]
    assert [tuple(r) for r in parts] == [(2,)]
    assert [tuple(r) for r in replaced + roots] == [(1,), (2,)]
