"""Schema diagrams (``schema --format mermaid|dbml|dot``) in the shape dlt 1.31 exports.

``tests/fixtures/diagrams/orders_dlt.*`` are dlt 1.31's exports of the sample's schema
(``dlt pipeline P schema --format mermaid|dbml`` after loading examples/data/orders.jsonl):
the same lines, tables in each tool's schema order."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadstone.schema import diagram

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "diagrams"


@pytest.fixture(scope="module")
def orders_schema(tmp_path_factory: pytest.TempPathFactory) -> dict:
    import os

    import loadstone

    folder = tmp_path_factory.mktemp("orders")
    old = os.environ.get("LOADSTONE_HOME")
    os.environ["LOADSTONE_HOME"] = str(folder / "home")
    try:
        pipeline = loadstone.pipeline(
            "diagram_orders", destination=loadstone.destinations.duckdb(str(folder / "o.duckdb"))
        )
        pipeline.run(str(ROOT / "examples" / "data" / "orders.jsonl"), table_name="orders")
        return dict(pipeline.default_schema.to_dict(bump_version=False))
    finally:
        if old is None:
            del os.environ["LOADSTONE_HOME"]
        else:
            os.environ["LOADSTONE_HOME"] = old


@pytest.mark.parametrize("fmt", ["mermaid", "dbml"])
def test_diagram_has_the_lines_dlt_exports(orders_schema: dict, fmt: str) -> None:
    ours = diagram.render(orders_schema, fmt).strip().splitlines()
    dlts = (FIXTURES / f"orders_dlt.{fmt}").read_text(encoding="utf-8").strip().splitlines()
    assert sorted(ours) == sorted(dlts)


def test_dot_draws_every_table_and_reference(orders_schema: dict) -> None:
    dot = diagram.to_dot(orders_schema)
    assert dot.startswith('digraph "diagram_orders" {')
    for table in ("orders", "orders__items", "orders__items__discounts", "_dlt_loads"):
        assert f'"{table}" [id="{table}"' in dot
    assert '"orders__items":f6 -> "orders":f10' in dot  # _dlt_parent_id -> _dlt_id


def test_without_dlt_tables_only_data_tables_and_their_links_remain(orders_schema: dict) -> None:
    mermaid = diagram.to_mermaid(orders_schema, include_dlt_tables=False)
    assert "_dlt_loads" not in mermaid and "_dlt_version{" not in mermaid
    assert '    orders__tags }|--|| orders : "_dlt_parent"' in mermaid
