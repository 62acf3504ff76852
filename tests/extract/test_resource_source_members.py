"""dlt 1.31's public resource and source members, answered as dlt answers them.

Each expectation was observed by running the same program under dlt 1.31 (a black box):
``columns``/``schema_contract``/``table_format`` are read-only views of the hints (``{}`` and
``None`` when not given); ``requires_args`` is true for a function with unbound required
parameters and always for a transformer; ``args_bound`` is true once the function was called
(and for plain data); ``explicit_args`` raises ``TypeError`` before that, is ``None`` for plain
data; ``set_incremental`` returns the cursor it set; ``state`` raises
``PipelineStateNotAvailable`` with no active pipeline, reads a copy of the saved state
outside a run and the live state inside one; ``source.clone`` copies resources and schema
(``with_name`` renames both); ``source.run`` runs the active pipeline on the source.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import loadstone as dlt
from loadstone import current
from loadstone.exceptions import PipelineStateNotAvailable
from loadstone.extract.resource import Resource
from loadstone.extract.source import Source
from loadstone.pipelines.pipeline import Pipeline


@pytest.fixture(autouse=True)
def no_active_pipeline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with no active pipeline and leaves none behind."""
    monkeypatch.setattr(current, "_active", [])


def _pipeline(tmp_path: Path, name: str = "members") -> Pipeline:
    made = dlt.pipeline(
        name, destination="duckdb", dataset_name="ds", pipelines_dir=str(tmp_path / "pl")
    )
    current.activate(made)  # dlt.pipeline() activates the pipeline it makes
    return made


def _hinted() -> Resource:
    @dlt.resource(
        primary_key="id",
        columns={"a": {"data_type": "text"}},
        schema_contract="freeze",
        table_format="delta",
    )
    def hinted(x: int = 1):
        yield {"id": x}

    return hinted


def test_columns_contract_and_table_format_read_the_hints() -> None:
    hinted = _hinted()

    @dlt.resource
    def plain():
        yield 1

    assert hinted.columns == {"a": {"data_type": "text", "name": "a"}}
    assert (hinted.schema_contract, hinted.table_format) == ("freeze", "delta")
    assert (plain.columns, plain.schema_contract, plain.table_format) == ({}, None, None)
    plain.apply_hints(columns={"z": {"data_type": "bigint"}})
    assert plain.columns == {"z": {"data_type": "bigint", "name": "z"}}


@pytest.mark.parametrize("member", ["columns", "schema_contract", "table_format"])
def test_the_hint_views_cannot_be_assigned(member: str) -> None:
    with pytest.raises(AttributeError):
        setattr(_hinted(), member, {})


def test_requires_args_and_args_bound_follow_dlt() -> None:
    @dlt.resource
    def needs(x: int):
        yield x

    @dlt.transformer
    def detail(item: int, y: int = 2):
        yield item

    listed = dlt.resource([1, 2], name="listed")
    hinted = _hinted()
    expected = {
        "hinted": (False, False),
        "needs": (True, False),
        "listed": (False, True),
        "detail": (True, False),
    }
    got = {r.name: (r.requires_args, r.args_bound) for r in (hinted, needs, listed, detail)}
    assert got == expected
    bound = needs(5)
    assert (bound.requires_args, bound.args_bound, bound.explicit_args) == (False, True, {"x": 5})
    assert list(bound) == [5]
    piped = (listed | detail)(y=4)
    assert (piped.requires_args, piped.args_bound, piped.explicit_args) == (True, True, {"y": 4})


def test_explicit_args_before_binding_raise_and_plain_data_has_none() -> None:
    with pytest.raises(TypeError, match="not yet parametrized"):
        _ = _hinted().explicit_args
    assert dlt.resource([1], name="listed").explicit_args is None
    assert _hinted()(x=3).explicit_args == {"x": 3}


def test_has_dynamic_table_name_and_parallelize() -> None:
    @dlt.resource(table_name=lambda item: f"t_{item['k']}")
    def dynamic():
        yield {"k": 1}

    assert dynamic.has_dynamic_table_name
    assert not _hinted().has_dynamic_table_name
    assert dynamic.parallelize() is dynamic


def test_set_incremental_sets_returns_and_removes_the_cursor() -> None:
    hinted = _hinted()
    cursor = dlt.sources.incremental("id", initial_value=0)
    assert hinted.set_incremental(cursor) is cursor
    assert hinted.incremental is cursor
    assert hinted.set_incremental(None) is None
    assert hinted.incremental is None


def test_set_incremental_filters_the_next_extract(tmp_path: Path) -> None:
    @dlt.resource
    def rows():
        yield [{"id": 1}, {"id": 2}, {"id": 3}]

    rows.set_incremental(dlt.sources.incremental("id", initial_value=2))
    assert [row["id"] for row in rows] == [2, 3]


def test_state_without_an_active_pipeline_raises_dlts_error() -> None:
    @dlt.source
    def src():
        return _hinted()

    with pytest.raises(PipelineStateNotAvailable):
        _ = _hinted().state
    with pytest.raises(PipelineStateNotAvailable):
        _ = src().state


def test_state_outside_a_run_is_a_copy_of_what_the_pipeline_saved(tmp_path: Path) -> None:
    @dlt.resource
    def counted():
        dlt.current.resource_state()["seen"] = 1
        yield {"id": 1}

    @dlt.source
    def src():
        return counted

    pipeline = _pipeline(tmp_path)
    assert (counted.state, src().state) == ({}, {})
    pipeline.run(src())
    made = src()
    assert made.state == {"resources": {"counted": {"seen": 1}}}
    assert counted.state == {"seen": 1}
    made.state["x"] = 1
    counted.state["y"] = 1
    assert pipeline.state["sources"] == {"src": {"resources": {"counted": {"seen": 1}}}}


def test_state_inside_a_run_is_live_and_saved(tmp_path: Path) -> None:
    @dlt.resource
    def counted():
        yield {"id": 1}

    @dlt.source
    def src():
        return counted

    pipeline = _pipeline(tmp_path)
    made = src()

    @dlt.resource
    def peek():
        made.state["peeked"] = True
        yield {"a": 1}

    pipeline.run(made)
    pipeline.run(peek)
    assert pipeline.state["sources"]["src"].get("peeked") is True


def test_clone_copies_resources_and_schema() -> None:
    @dlt.resource
    def plain():
        yield 1

    @dlt.source
    def src():
        return _hinted(), plain

    made = src()
    clone = made.clone()
    assert isinstance(clone, Source) and clone is not made
    assert (clone.name, list(clone.resources)) == ("src", ["hinted", "plain"])
    assert clone.resources["hinted"] is not made.resources["hinted"]
    assert clone.schema is not made.schema and clone.schema.name == "src"
    clone.resources["plain"].selected = False
    clone.resources["hinted"].apply_hints(columns={"n": {"data_type": "bigint"}})
    assert list(made.selected_resources) == ["hinted", "plain"]
    assert sorted(made.resources["hinted"].columns) == ["a"]
    assert sorted(clone.resources["hinted"].columns) == ["a", "n"]
    renamed = made.clone(with_name="other")
    assert (renamed.name, renamed.schema.name) == ("other", "other")


def test_clone_keeps_a_transformer_piped_from_its_own_resource() -> None:
    @dlt.resource
    def users():
        yield [{"id": 1}, {"id": 2}]

    @dlt.transformer
    def doubled(page: list[dict[str, int]]):
        yield [{"id": u["id"] * 2} for u in page]

    @dlt.source
    def src():
        return users

    made = src()
    made.resources.add(made.users | doubled)
    clone = made.clone()
    clone.resources["users"].add_filter(lambda user: user["id"] == 1)
    assert list(clone.resources["doubled"]) == [{"id": 2}]
    assert list(made.resources["doubled"]) == [{"id": 2}, {"id": 4}]


def test_run_runs_the_active_pipeline_on_the_source(tmp_path: Path) -> None:
    @dlt.resource
    def users():
        yield [{"id": 1}, {"id": 2}]

    @dlt.source
    def src():
        return users

    pipeline = _pipeline(tmp_path, "run_member")
    info = src().run()
    assert len(info.loads_ids) == 1
    src().run(write_disposition="replace")
    with pipeline.sql_client() as client:
        assert client.execute_sql("select count(*) from users") == [(2,)]


def test_resources_add_takes_a_transformer_and_runs_it(tmp_path: Path) -> None:
    @dlt.resource
    def users():
        yield [{"id": 1}, {"id": 2}]

    @dlt.transformer(data_from=users)
    def details(page: list[dict[str, int]]):
        yield [{"id": u["id"], "d": u["id"] * 10} for u in page]

    @dlt.transformer
    def extra(page: list[dict[str, int]]):
        yield [{"id": u["id"], "e": 1} for u in page]

    @dlt.source
    def src():
        return users

    made = src()
    made.resources.add(details)
    made.resources.add(made.users | extra)
    assert list(made.selected_resources) == ["users", "details", "extra"]
    pipeline = _pipeline(tmp_path, "add_member")
    pipeline.run(made)
    with pipeline.sql_client() as client:
        assert client.execute_sql("select id, d from details order by id") == [(1, 10), (2, 20)]
        assert client.execute_sql("select id, e from extra order by id") == [(1, 1), (2, 1)]


def test_a_source_holds_copies_of_its_resources_named_by_it() -> None:
    @dlt.resource
    def users(x: int = 1):
        """Users of the shop."""
        yield {"id": x}

    @dlt.source
    def shop():
        return users

    made = shop()
    held = made.resources["users"]
    assert held is not users
    assert (held.source_name, users.source_name) == ("shop", None)
    assert (held.__name__, held.__doc__) == ("users", "Users of the shop.")
    held.apply_hints(primary_key="id")
    assert users.compute_table_schema()["columns"] == {}
    assert held.compute_table_schema()["columns"]["id"]["primary_key"] is True
    assert (made.resources.source_name, made.resources.source_section) == (
        "shop",
        __name__.rsplit(".", 1)[-1],  # the module's last name, as dlt's section
    )


def test_bind_binds_in_place_and_returns_the_resource() -> None:
    @dlt.resource
    def needs(x: int):
        yield {"n": x}

    assert needs.bind(7) is needs
    assert (list(needs), needs.args_bound) == ([{"n": 7}], True)


def test_from_data_makes_a_resource() -> None:
    made = Resource.from_data([1, 2], name="fd")
    assert (type(made), made.name, list(made)) == (Resource, "fd", [1, 2])
    assert Resource.from_data(made) is made


def test_exhausted_tells_a_generator_that_was_run_to_its_end() -> None:
    def gen():
        yield {"a": 1}

    items = gen()

    @dlt.source
    def once():
        return dlt.resource(items, name="g")

    made = once()
    assert not made.exhausted
    list(made.resources["g"])
    assert made.exhausted
    assert made.parallelize() is made


def test_merge_hints_takes_make_hints_and_merges_columns() -> None:
    listed = dlt.resource([1], name="m", primary_key="id")
    listed.merge_hints(
        dlt.mark.make_hints(columns={"z": {"data_type": "text"}}, write_disposition="merge")
    )
    table = listed.compute_table_schema()
    assert table["write_disposition"] == "merge"
    assert table["columns"] == {
        "z": {"data_type": "text", "name": "z"},
        "id": {"name": "id", "nullable": False, "primary_key": True},
    }


def test_nested_hints_by_field_and_no_parent_table_name() -> None:
    @dlt.resource(
        nested_hints={
            "lines": dlt.mark.make_nested_hints(columns=[{"name": "q", "data_type": "bigint"}])
        }
    )
    def orders():
        yield {"id": 1, "lines": [{"q": 1}]}

    assert orders.nested_hints == {
        "lines": {"columns": {"q": {"name": "q", "data_type": "bigint"}}}
    }
    assert _hinted().nested_hints is None
    assert orders.parent_table_name is None


def test_a_resource_key_replaces_the_key_flags_of_column_hints() -> None:
    @dlt.resource(
        merge_key="sensor",
        columns={"batch": {"merge_key": True, "primary_key": True, "nullable": False}},
    )
    def readings():
        yield {"sensor": "a", "batch": 1}

    assert readings.compute_table_schema()["columns"] == {
        "batch": {"primary_key": True, "nullable": False, "name": "batch"},
        "sensor": {"name": "sensor", "nullable": False, "merge_key": True},
    }
    listed = dlt.resource([1], name="q", columns={"batch": {"primary_key": True}})
    listed.apply_hints(primary_key="sensor")
    assert listed.compute_table_schema()["columns"] == {
        "batch": {"name": "batch"},
        "sensor": {"name": "sensor", "nullable": False, "primary_key": True},
    }
    listed.apply_hints(primary_key=[])
    assert listed.compute_table_schema()["columns"] == {"batch": {"name": "batch"}}


def test_select_tables_keeps_the_items_of_the_named_tables() -> None:
    @dlt.resource(table_name=lambda item: item["kind"])
    def events():
        yield [{"kind": "a", "n": 1}, {"kind": "b", "n": 2}, {"kind": "c", "n": 3}]
        yield dlt.mark.with_table_name({"kind": "x", "n": 4}, "b")
        yield {"kind": "a", "n": 5}

    assert events.select_tables("a", "b") is events
    assert [item["n"] for item in events] == [1, 2, 4, 5]

    @dlt.resource
    def static():
        yield {"n": 1}

    assert list(static.select_tables("static")) == []  # as dlt: only dynamic names select


def test_a_transformer_takes_nested_hints() -> None:
    @dlt.transformer(
        nested_hints={"lines": dlt.mark.make_nested_hints(columns={"q": {"data_type": "bigint"}})}
    )
    def detail(item: dict[str, object]):
        yield item

    assert detail.nested_hints == {
        "lines": {"columns": {"q": {"data_type": "bigint", "name": "q"}}}
    }


def test_discover_schema_adds_the_tables_the_resources_declare() -> None:
    @dlt.resource(
        primary_key="id", write_disposition="merge", columns={"CamelCol": {"data_type": "text"}}
    )
    def orders():
        yield {"id": 1}

    @dlt.resource(table_name=lambda item: item["k"])
    def dynamic():
        yield {"k": "t1"}

    @dlt.source
    def shop():
        return orders, dynamic

    made = shop()
    discovered = made.discover_schema()
    assert discovered is not made.schema and "orders" not in made.schema.tables
    assert sorted(discovered.tables) == ["_dlt_loads", "_dlt_version", "orders"]
    assert discovered.tables["orders"]["write_disposition"] == "merge"
    assert sorted(discovered.tables["orders"]["columns"]) == ["camel_col", "id"]
    assert "t2" in made.discover_schema(item={"k": "t2"}).tables


def test_source_from_data_groups_resources_under_the_schema() -> None:
    schema = dlt.Schema("myschema")

    @dlt.resource
    def users():
        yield {"id": 1}

    made = Source.from_data(schema, "sec", users)
    assert (made.name, made.section, list(made.resources)) == ("myschema", "sec", ["users"])
    assert made.schema is schema and made.resources["users"] is not users
    rows = Source.from_data(schema, "sec", [dlt.resource([{"a": 1}], name="rows")])
    assert list(rows.resources["rows"]) == [{"a": 1}]
    assert Source.from_data(schema, "sec", made) is made


def test_the_resources_of_a_source_built_without_the_decorator_know_it() -> None:
    listed = dlt.resource([1], name="listed")
    made = Source("built", dlt.Schema("built"), [listed])  # as the built-in sources build theirs
    assert made.resources["listed"].source_name == "built"


def test_write_disposition_reads_back_as_given() -> None:
    """dlt 1.31 gives the dict back when a merge strategy was given (p215), the name else."""
    given = {"disposition": "merge", "strategy": "upsert"}
    res = dlt.resource([{"id": 1}], name="t", write_disposition=given)
    assert res.write_disposition == given
    res.apply_hints(write_disposition="replace")
    assert res.write_disposition == "replace"
