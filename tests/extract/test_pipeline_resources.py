"""``@resource`` / ``@source``: names, hints, selection, and ``current.source_schema()``."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadstone import current
from loadstone.exceptions import NoActiveContext, ResourceError
from loadstone.extract.decorators import resource, source
from loadstone.extract.resource import Resource
from loadstone.extract.source import Source


def test_resource_name_and_table_name_default_to_the_function_name() -> None:
    @resource
    def users():
        yield {"id": 1}

    assert isinstance(users, Resource)
    assert users.name == "users"
    assert users.table_name == "users"


def test_yielded_lists_are_items_one_by_one() -> None:
    @resource
    def users():
        yield [{"id": 1}, {"id": 2}]
        yield {"id": 3}

    assert list(users) == [{"id": 1}, {"id": 2}, {"id": 3}]


def test_resource_with_arguments_is_bound_by_calling_it() -> None:
    @resource(name="numbers")
    def numbers(upto: int):
        yield from ({"n": n} for n in range(upto))

    bound = numbers(3)
    assert bound.name == "numbers"
    assert [i["n"] for i in bound] == [0, 1, 2]


def test_a_resource_without_arguments_can_be_called_like_in_dlt() -> None:
    @resource(write_disposition="merge", primary_key="id")
    def users():
        yield [{"id": 1}, {"id": 2}]

    called = users()
    assert called.name == "users"
    assert called.compute_table_hints()["primary_key"] == ["id"]
    assert list(called) == [{"id": 1}, {"id": 2}]
    assert list(users) == [{"id": 1}, {"id": 2}]


def test_a_called_resource_cannot_be_called_again() -> None:
    @resource
    def users():
        yield {"id": 1}

    with pytest.raises(ResourceError, match="is not callable"):
        users()()


def test_calling_a_bound_resource_is_a_type_error_as_in_dlt() -> None:
    """dlt 1.31 raises ``TypeError`` for a resource called twice, a bound one ``bind``-ed
    again, or one made of data (differential program p654)."""

    @resource
    def numbers(n: int = 3):
        yield from range(n)

    for call in (lambda: numbers()(), lambda: numbers.bind(2).bind(3)):
        with pytest.raises(TypeError, match="'numbers' is not callable"):
            call()
    with pytest.raises(TypeError):
        resource([1, 2], name="listed")()


def test_resource_from_data_needs_a_name() -> None:
    with pytest.raises(ResourceError, match="name"):
        resource([{"id": 1}])
    assert resource([{"id": 1}], name="x").name == "x"
    assert resource([{"id": 1}], table_name="t").table_name == "t"


def test_decorator_hints_are_kept_in_dlt_table_form() -> None:
    @resource(
        primary_key="id", write_disposition="merge", columns={"my_column": {"data_type": "bool"}}
    )
    def users():
        yield {"id": 1}

    hints = users.compute_table_hints()
    assert hints["primary_key"] == ["id"]
    assert hints["write_disposition"] == "merge"
    assert hints["columns"]["my_column"] == {"name": "my_column", "data_type": "bool"}


def test_write_disposition_dict_gives_merge_strategy() -> None:
    res = resource([], name="t", write_disposition={"disposition": "merge", "strategy": "scd2"})
    assert res.compute_table_hints() == {"write_disposition": "merge", "x-merge-strategy": "scd2"}


def test_unknown_write_disposition_is_refused() -> None:
    with pytest.raises(ResourceError, match="write_disposition"):
        resource([], name="t", write_disposition="upsert")


def test_apply_hints_merges_columns_and_replaces_other_hints() -> None:
    res = resource([], name="t", columns={"a": {"data_type": "text"}}, write_disposition="append")
    res.apply_hints(
        columns={"a": {"nullable": False}, "b": {"data_type": "json"}}, write_disposition="replace"
    )
    hints = res.compute_table_hints()
    assert hints["columns"]["a"] == {"name": "a", "data_type": "text", "nullable": False}
    assert hints["columns"]["b"]["data_type"] == "json"
    assert hints["write_disposition"] == "replace"


def test_source_collects_resources_and_with_resources_selects() -> None:
    @source
    def shop():
        return [resource([{"id": 1}], name="orders"), resource([{"id": 2}], name="users")]

    src = shop()
    assert isinstance(src, Source)
    assert src.name == "shop"
    assert list(src.resources) == ["orders", "users"]
    picked = src.with_resources("users")
    assert list(picked.selected_resources) == ["users"]
    assert list(picked) == [{"id": 2}]


def test_with_resources_returns_a_clone_and_leaves_the_source_selection() -> None:
    """dlt 1.31 (differential program p655): ``with_resources`` selects on a clone, so the
    source still loads every resource and hints set on the clone stay there."""

    @source
    def shop():
        return [resource([{"id": 1}], name="orders"), resource([{"id": 2}], name="users")]

    src = shop()
    picked = src.with_resources("users")
    picked.resources["users"].apply_hints(table_name="people")
    assert picked is not src
    assert list(src.selected_resources) == ["orders", "users"]
    assert src.resources["users"].table_name == "users"
    assert sorted(item["id"] for item in src) == [1, 2]


def test_resources_are_reachable_by_name_for_apply_hints() -> None:
    @source
    def mongodb():
        return [resource([], name="collection1"), resource([], name="collection2")]

    source_data = mongodb().with_resources("collection1")
    source_data.resources["collection1"].apply_hints(columns={"column_name": {"data_type": "json"}})
    assert (
        source_data.resources["collection1"].compute_table_hints()["columns"]["column_name"][
            "data_type"
        ]
        == "json"
    )


def test_with_resources_names_the_unknown_resource() -> None:
    @source
    def shop():
        return resource([], name="orders")

    with pytest.raises(ResourceError, match="nope"):
        shop().with_resources("nope")


def test_current_source_schema_is_the_source_schema_inside_the_body() -> None:
    seen = {}

    @source
    def textual(nesting_level: int):
        schema = current.source_schema()
        seen["schema"] = schema
        return resource([], name="content")

    src = textual(1)
    assert seen["schema"] is src.schema
    assert src.schema.name == "textual"


def test_current_source_schema_outside_a_source_is_an_error() -> None:
    with pytest.raises(NoActiveContext):
        current.source_schema()


def test_source_schema_file_beside_the_module_is_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib
    import sys

    (tmp_path / "my_src.py").write_text(
        "import loadstone as dlt\n\n"
        "@dlt.source\n"
        "def shop():\n"
        "    return dlt.resource([{'id': 1}], name='orders')\n"
    )
    (tmp_path / "shop_schema.yml").write_text(
        "name: shop\n"
        "tables:\n"
        "  orders:\n"
        "    columns:\n"
        "      note:\n"
        "        data_type: text\n"
        "        nullable: true\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("my_src")
    try:
        src = module.shop()
        assert "orders" in src.schema.to_dict()["tables"]
    finally:
        sys.modules.pop("my_src", None)


def test_add_limit_stops_after_that_many_yields() -> None:
    pages_read: list[int] = []

    @resource
    def pages():
        for page in range(100):
            pages_read.append(page)
            yield [{"page": page, "row": r} for r in range(3)]

    assert len(list(pages().add_limit(2))) == 6
    assert pages_read == [0, 1]


def test_add_limit_can_count_rows_instead_of_yields() -> None:
    @resource
    def pages():
        for page in range(100):
            yield [{"page": page, "row": r} for r in range(3)]

    assert len(list(pages().add_limit(4, count_rows=True))) == 6


def test_add_limit_of_zero_yields_nothing() -> None:
    @resource
    def numbers():
        yield from ({"n": n} for n in range(10))

    assert list(numbers().add_limit(0)) == []


def test_with_name_copies_the_resource_under_a_new_name_and_table() -> None:
    original = resource([{"a": 1}], name="x", primary_key="a")
    renamed = original.with_name("y")
    assert (renamed.name, renamed.table_name) == ("y", "y")
    assert renamed.compute_table_hints()["primary_key"] == ["a"]
    assert list(renamed) == [{"a": 1}]
    assert original.name == "x"
