"""A source's ``max_table_nesting`` is its schema's normalizer setting
(``normalizers.json.config.max_nesting``), as dlt 1.31 keeps it: its tables carry no
``max_nesting`` of their own, a resource's own limit still goes on its table. dlt 1.31's
outcome of the same program (differential programs p682 and w21): ``a__b`` flattened to one
level, ``{'seen-data': True}`` for the tables, ``{'max_nesting': 1}`` for the schema."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import loadstone as dlt


def test_a_source_nesting_limit_is_the_schemas_setting() -> None:
    @dlt.source(max_table_nesting=1)
    def nested() -> Any:
        @dlt.resource
        def plain() -> Iterator[Any]:
            yield {"id": 1, "a": {"b": {"c": 1}}}

        @dlt.resource(max_table_nesting=2)
        def own() -> Iterator[Any]:
            yield {"id": 1, "a": {"b": {"c": 1}}}

        return plain, own

    pipe = dlt.pipeline("source_nesting", destination="duckdb", dataset_name="d")
    pipe.run(nested())
    schema = pipe.default_schema
    assert schema.to_dict()["normalizers"]["json"]["config"] == {"max_nesting": 1}
    assert schema.tables["plain"]["x-normalizer"] == {"seen-data": True}
    assert sorted(schema.tables["plain"]["columns"]) == ["_dlt_id", "_dlt_load_id", "a__b", "id"]
    assert schema.tables["own"]["x-normalizer"] == {"max_nesting": 2, "seen-data": True}
    assert "a__b__c" in schema.tables["own"]["columns"]
