"""The dlt API surface of loadstone: what is refused by name, and rules checked on many inputs.

Behaviour compared with dlt 1.31 lives in ``tests/pipelines/test_compat_dlt.py``; these tests pin what
the compatibility suite cannot record from dlt: arguments loadstone refuses instead of
ignoring, and properties of incremental loading over generated data.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import loadstone as dlt
from loadstone.extract.incremental import Incremental


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (
            lambda: dlt.resource([{"a": 1}], name="r", nested_hints={"x": {"no_such": "k"}}),
            "no_such",
        ),
        (lambda: dlt.mark.make_nested_hints(no_such="k"), "no_such"),
        (lambda: dlt.pipeline("p", no_such=1), "no_such"),
        (lambda: dlt.resource([1], name="r", no_such=1), "no_such"),
        (lambda: dlt.sources.incremental("ts", lag="3 days"), "lag"),
    ],
)
def test_unsupported_arguments_raise_type_error_naming_them(call: Any, name: str) -> None:
    with pytest.raises(TypeError, match=name):
        call()


def test_run_refuses_staging_and_an_unknown_refresh_mode() -> None:
    from loadstone.exceptions.destinations import DestinationLoadingViaStagingNotSupported

    pipe = dlt.pipeline("refuse", destination="duckdb")
    with pytest.raises(DestinationLoadingViaStagingNotSupported, match="staging"):
        pipe.run([{"a": 1}], table_name="t", staging="filesystem")  # as dlt 1.31 refuses it
    with pytest.raises(ValueError, match="drop_sources"):
        pipe.run([{"a": 1}], table_name="t", refresh="drop_everything")


def test_attach_without_a_local_pipeline_names_it() -> None:
    with pytest.raises(dlt.LoadstoneError, match="never_ran"):
        dlt.attach("never_ran")


def test_step_failure_is_also_the_cause_class(tmp_path: Path) -> None:
    from loadstone.exceptions import BadRecordError

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": 1}\n{not json\n', encoding="utf-8")
    pipe = dlt.pipeline("bad", destination="duckdb")
    with pytest.raises(dlt.PipelineStepFailed) as caught:
        pipe.run(str(bad), table_name="t")
    assert isinstance(caught.value, BadRecordError)
    assert caught.value.step == "normalize" and caught.value.load_id


def test_secrets_read_configuration_by_key() -> None:
    os.environ["MY_API__TOKEN"] = "abc"
    try:
        assert dlt.secrets["my_api.token"] == "abc"
        assert dlt.secrets.get("my_api.nothing") is None
    finally:
        del os.environ["MY_API__TOKEN"]


def test_nested_hints_type_a_nested_column() -> None:
    rows = [{"id": 1, "lines": [{"qty": 2}, {"qty": 3}]}]
    res = dlt.resource(
        rows,
        name="orders",
        nested_hints={
            "lines": dlt.mark.make_nested_hints(columns={"qty": {"data_type": "double"}})
        },
    )
    pipe = dlt.pipeline("nested_typed", destination="duckdb")
    pipe.run(res)
    assert pipe.default_schema.get_table("orders__lines").columns["qty"].data_type == "double"
    assert sorted(pipe.dataset()["orders__lines"].select("qty").fetchall()) == [(2.0,), (3.0,)]


def test_loadstone_config_wins_over_dlt_config(tmp_path: Path) -> None:
    for folder, value in ((".dlt", "dlt"), (".loadstone", "loadstone")):
        (Path.cwd() / folder).mkdir(exist_ok=True)
        (Path.cwd() / folder / "config.toml").write_text(
            f'[x]\nwho = "{value}"\nonly_{value} = 1\n'
        )
    assert dlt.config.get("x.who") == "loadstone"
    assert dlt.config.get("x.only_dlt") == 1


# -- incremental rules ---------------------------------------------------------------------------
def _run_incremental(batches: list[list[int]], initial: int) -> list[int]:
    """Items of each batch (cursor value = the int) through one cursor kept across runs."""
    state: dict[str, Any] = {}
    cursor = Incremental("v", initial_value=initial)
    kept: list[int] = []
    for number, batch in enumerate(batches):
        bound = cursor.bind("r", state)
        items = [{"v": v, "n": f"{v}-{i}"} for i, v in enumerate(batch)]
        pages = bound.filter_pages(iter(items), lambda p: (p, lambda d: d))
        kept += [item["v"] for item in pages]
        assert number >= 0
    return kept


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    values=st.lists(st.integers(0, 20), min_size=1, max_size=30),
    cuts=st.lists(st.integers(0, 30), max_size=3),
    initial=st.integers(0, 10),
)
def test_replaying_growing_batches_loads_each_row_once(
    values: list[int], cuts: list[int], initial: int
) -> None:
    """Each run sees everything so far (an API listing all rows): rows are loaded once."""
    rows = sorted(values)
    batches = [rows[:c] for c in sorted(cuts)] + [rows]
    kept = _run_incremental(batches, initial)
    assert sorted(kept) == [v for v in rows if v >= initial]


def test_steps_called_one_by_one_raise_pipeline_step_failed() -> None:
    @dlt.resource
    def broken():
        yield {"a": 1}
        raise RuntimeError("gone")

    pipe = dlt.pipeline("by_step", destination="duckdb")
    with pytest.raises(dlt.PipelineStepFailed) as caught:
        pipe.extract(broken())
    assert caught.value.step == "extract" and "gone" in str(caught.value)
