"""``loadstone.current`` answers as ``dlt.current`` does, inside and outside a run.

Observed on dlt 1.31 with the same program: outside a run ``resource_name()`` raises
``ResourceNameNotAvailable``, ``source_state()`` / ``state()`` / ``resource_state()``
``SourceSectionNotAvailable``, ``source()`` ``CurrentSourceNotAvailable``,
``source_schema()`` ``CurrentSourceSchemaNotAvailable``; inside a resource that a pipeline
extracts, ``resource_name()`` is its name, ``state()`` the source state (with
``resources.<name>``), and writes to both states are saved as
``{'src': {'resources': {'users': {'x': 1}}, 'y': 2, 'z': 3}}``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import loadstone as dlt
from loadstone import current
from loadstone.exceptions import (
    CurrentSourceNotAvailable,
    CurrentSourceSchemaNotAvailable,
    NoActiveContext,
    ResourceNameNotAvailable,
    SourceSectionNotAvailable,
)


def test_outside_a_run_each_call_raises_dlts_error() -> None:
    expected = {
        current.resource_name: ResourceNameNotAvailable,
        current.source_state: SourceSectionNotAvailable,
        current.state: SourceSectionNotAvailable,
        current.resource_state: SourceSectionNotAvailable,
        current.source: CurrentSourceNotAvailable,
        current.source_schema: CurrentSourceSchemaNotAvailable,
    }
    for call, error in expected.items():
        with pytest.raises(error):
            call()
        assert issubclass(error, NoActiveContext)


def test_inside_a_resource_the_names_and_states_are_dlts(tmp_path: Path) -> None:
    seen: dict[str, object] = {}

    @dlt.source(name="src")
    def src() -> object:
        seen["body_schema"] = type(current.source_schema()).__name__

        @dlt.resource(name="users")
        def users() -> object:
            seen["resource_name"] = current.resource_name()
            seen["resource_state"] = dict(current.resource_state())
            current.resource_state()["x"] = 1
            current.source_state()["y"] = 2
            current.state()["z"] = 3
            seen["state"] = current.state() is current.source_state()
            seen["pipeline"] = current.pipeline().pipeline_name
            yield {"id": 1}

        return users

    pipeline = dlt.pipeline(
        "cur", destination="duckdb", dataset_name="ds", pipelines_dir=str(tmp_path / "pl")
    )
    pipeline.extract(src())
    assert seen == {
        "body_schema": "Schema",
        "resource_name": "users",
        "resource_state": {},
        "state": True,
        "pipeline": "cur",
    }
    assert pipeline.state["sources"]["src"] == {"resources": {"users": {"x": 1}}, "y": 2, "z": 3}
    with pytest.raises(ResourceNameNotAvailable):
        current.resource_name()
    assert current.pipeline() is pipeline  # dlt: the pipeline stays active after its run


def test_source_and_its_schema_while_a_source_is_extracted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    @dlt.source(name="shop")
    def shop() -> object:
        return dlt.resource([{"id": 1}], name="orders")

    source = shop()
    state: dict[str, object] = {}
    owner = dlt.pipeline("owner", destination="duckdb", dataset_name="ds")
    with current.extract_context(owner, state, source):
        assert current.source() is source
        assert current.source_schema() is source.schema
        assert current.source_state() is state
        with current.resource_context("orders"):
            assert current.resource_name() == "orders"
            assert current.resource_state() == {}
        # dlt: inside a source but outside a resource, resource_state() names the resource
        with pytest.raises(ResourceNameNotAvailable):
            current.resource_state()
    with pytest.raises(CurrentSourceNotAvailable):
        current.source()


def test_pipeline_outside_a_run_is_the_active_one(tmp_path: Path) -> None:
    made = dlt.pipeline(
        "active_one", destination="duckdb", dataset_name="ds", pipelines_dir=str(tmp_path)
    )
    current.activate(made)
    assert current.pipeline() is made
    assert current.active() is made
    current.deactivate()
    assert current.active() is None


def test_in_a_source_body_the_state_is_a_copy_of_the_saved_one(tmp_path: Path) -> None:
    # dlt 1.31: the body reads the source's saved state; what it writes there is not kept
    seen: list[dict[str, object]] = []

    @dlt.source(name="counted")
    def counted() -> object:
        body_state = current.source_state()
        seen.append(dict(body_state))
        body_state["from_body"] = True

        @dlt.resource(name="rows")
        def rows() -> object:
            current.resource_state()["runs"] = current.resource_state().get("runs", 0) + 1
            yield {"id": 1}

        return rows

    pipeline = dlt.pipeline(
        "counted", destination="duckdb", dataset_name="ds", pipelines_dir=str(tmp_path / "pl")
    )
    current.activate(pipeline)  # what dlt.pipeline() does (the pipeline's own hook)
    pipeline.extract(counted())
    pipeline.extract(counted())
    assert seen == [{}, {"resources": {"rows": {"runs": 1}}}]
    assert pipeline.state["sources"]["counted"] == {"resources": {"rows": {"runs": 2}}}
    with pytest.raises(ResourceNameNotAvailable):  # dlt: in the body, no resource runs

        @dlt.source(name="counted")
        def asks_for_a_resource_state() -> object:
            current.resource_state()
            return dlt.resource([1], name="r")

        asks_for_a_resource_state()


def test_a_resource_iterated_outside_a_run_reads_a_copy_of_its_saved_state(
    tmp_path: Path,
) -> None:
    """``list(resource)`` with an active pipeline: ``resource_state()`` reads what the pipeline
    saved for the resource's source (a standalone resource: the pipeline's own entry; a
    source of another name: nothing), and nothing it writes is kept. dlt 1.31 printed
    [{'c': 5}], [{'c': 2}], [{'c': 2}], [{'c': 1}] (differential programs p1047, p1050;
    here it raised SourceSectionNotAvailable)."""

    @dlt.resource
    def r():  # type: ignore[no-untyped-def]
        st = current.resource_state()
        st["calls"] = st.get("calls", 0) + 1
        yield {"c": st["calls"]}

    @dlt.source
    def src():  # type: ignore[no-untyped-def]
        return r

    @dlt.source(name="named")
    def other():  # type: ignore[no-untyped-def]
        return r

    duck = dlt.destinations.duckdb(str(tmp_path / "pst.duckdb"))
    pipe = dlt.pipeline("pst", destination=duck, pipelines_dir=str(tmp_path / "p"))
    for _ in range(4):
        pipe.run(r())
    pipe.run(src())
    saved = pipe.state["sources"]
    assert [list(r()), list(src().r), list(src()), list(other())] == [
        [{"c": 5}], [{"c": 2}], [{"c": 2}], [{"c": 1}]
    ]  # fmt: skip
    assert (
        pipe.state["sources"]
        == saved
        == {
            "pst": {"resources": {"r": {"calls": 4}}},
            "src": {"resources": {"r": {"calls": 1}}},
        }
    )


def test_resources_run_without_a_source_see_one_named_after_the_schema(tmp_path: Path) -> None:
    """A resource given to run() alone: ``current.source()`` is the source dlt 1.31 makes of
    the run's resources, named after the run's schema, its schema ``source_schema()``
    (differential programs p1057, p1058; here both raised)."""
    seen: list[tuple[str, str, bool, list[str]]] = []

    @dlt.resource
    def peek():  # type: ignore[no-untyped-def]
        source = current.source()
        schema = current.source_schema()
        seen.append((source.name, schema.name, schema is source.schema, sorted(source.resources)))
        yield {"x": 1}

    @dlt.resource
    def other():  # type: ignore[no-untyped-def]
        yield {"o": 1}

    duck = dlt.destinations.duckdb(str(tmp_path / "peek.duckdb"))
    pipe = dlt.pipeline("peeks", destination=duck, pipelines_dir=str(tmp_path / "p"))
    pipe.run(peek())
    pipe.run([peek(), other()])
    pipe.run(peek(), schema=dlt.Schema("custom"))
    assert seen == [
        ("peeks", "peeks", True, ["peek"]),
        ("peeks", "peeks", True, ["other", "peek"]),
        ("custom", "custom", True, ["peek"]),
    ]
