"""A key a resource's hints give replaces the table's key, as dlt 1.31 applies hints
(``update_table(..., merge_compound_props=False)``): ``apply_hints(primary_key="a")`` on a
table keyed by ``a, b`` merges by ``a`` alone. dlt 1.31's outcomes (differential program
p695, probes w34/w35): ``b`` loses ``primary_key``, the merge keeps two rows; plain
``update_table`` still merges keys."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import loadstone as dlt
from loadstone.schema import Schema


def _keys(schema: Schema) -> dict[str, dict[str, bool]]:
    return {
        name: {hint: column[hint] for hint in ("primary_key", "merge_key") if hint in column}
        for name, column in schema.tables["t"]["columns"].items()
    }


def test_update_table_merges_keys_unless_asked_to_replace_them() -> None:
    schema = Schema("keys")
    schema.update_table(
        {
            "name": "t",
            "columns": {
                "a": {"name": "a", "data_type": "bigint", "primary_key": True},
                "b": {"name": "b", "data_type": "text", "primary_key": True},
                "m": {"name": "m", "data_type": "bigint", "merge_key": True},
            },
        }
    )
    schema.update_table({"name": "t", "columns": {"a": {"name": "a", "primary_key": True}}})
    assert _keys(schema) == {
        "a": {"primary_key": True},
        "b": {"primary_key": True},
        "m": {"merge_key": True},
    }
    schema.update_table(
        {"name": "t", "columns": {"b": {"name": "b", "merge_key": True}}},
        merge_compound_props=False,
    )
    assert _keys(schema) == {
        "a": {"primary_key": True},
        "b": {"primary_key": True, "merge_key": True},
        "m": {},
    }


def test_a_new_primary_key_hint_replaces_the_tables_key() -> None:
    @dlt.resource(primary_key=["a", "b"], write_disposition="merge")
    def compound(run: int) -> Iterator[Any]:
        yield [
            {"a": 1, "b": "x", "v": run},
            {"a": 1, "b": "y", "v": run},
            {"a": 2, "b": "x", "v": run},
        ]

    pipe = dlt.pipeline("compound_keys", destination="duckdb", dataset_name="d")
    pipe.run(compound(1))
    by_a = compound(2)
    by_a.apply_hints(primary_key="a")
    pipe.run(by_a)
    columns = pipe.default_schema.tables["compound"]["columns"]
    assert columns["a"]["primary_key"] is True
    assert "primary_key" not in columns["b"]
    with pipe.sql_client() as client:
        assert client.execute_sql("SELECT a, v FROM compound ORDER BY a") == [(1, 2), (2, 2)]
