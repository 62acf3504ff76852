"""Extract as dlt's pipe graph: every resource runs once, its pages reach every transformer
that reads it, concurrently where dlt is concurrent.

The programs in ``pipe_programs.py`` ran under dlt 1.31 (tests/fixtures/pipe_graph/
record_dlt.py recorded what they called, asked and loaded); here they run under loadstone.
"""

from __future__ import annotations

import asyncio
import json
import os
import runpy
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
import rest_api_app as A  # tests/sources, on the path by conftest.py
from pipe_programs import PROGRAMS, rest_boards
from rest_api_cases import boards_config
from rest_api_support import api_fixture  # noqa: F401 - the fixture "api"

import loadstone as dlt
from loadstone.exceptions import PipelineStepFailed, ResourceExtractionError
from loadstone.extract.pipe_graph import mermaid, pipe_graph
from loadstone.sources.rest_api import rest_api_source

RECORDED = json.loads(
    (Path(__file__).parent.parent / "fixtures" / "pipe_graph" / "programs_dlt.json").read_text()
)


def as_recorded(outcome: Any) -> Any:
    """The outcome as the fixture stores it (JSON: tuples become lists)."""
    return json.loads(json.dumps(outcome, default=str))


def pipeline(tmp_path: Path, name: str = "p") -> Any:
    return dlt.pipeline(
        name, destination="duckdb", pipelines_dir=str(tmp_path / "pl"), dataset_name="d"
    )


def rows(pipe: Any, sql: str) -> list[tuple[Any, ...]]:
    with pipe.sql_client() as client:
        return [tuple(row) for row in client.execute_sql(sql)]


# -- the same programs as under dlt --------------------------------------------------------
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_calls_and_loads_what_dlt_does(name: str, tmp_path: Path) -> None:
    assert as_recorded(PROGRAMS[name](dlt, str(tmp_path))) == RECORDED[name]


def test_rest_api_children_of_an_incremental_parent_ask_and_load_what_dlt_does(
    api: A.App, tmp_path: Path
) -> None:
    """Boards with a ``since`` cursor and two children: each page asked once, 15 cards."""
    got = rest_boards(dlt, str(tmp_path), api, boards_config, rest_api_source)
    assert as_recorded(got) == RECORDED["rest_boards"]


def test_parallelized_rest_api_children_ask_at_once_and_load_the_same(
    api: A.App, tmp_path: Path
) -> None:
    """With ``parallelized`` children, two child requests are in flight together (the server
    holds each until a second arrives), and the rows and requests are dlt's."""
    api.rendezvous = threading.Barrier(2, timeout=20)

    def parallel_config(url: str, incremental: bool) -> Any:
        return boards_config(url, incremental, parallelized=True)

    got = rest_boards(dlt, str(tmp_path), api, parallel_config, rest_api_source)
    assert as_recorded(got) == RECORDED["rest_boards"]


# -- one evaluation per resource -----------------------------------------------------------
def test_list_of_a_source_reads_a_shared_parent_once() -> None:
    reads: list[int] = []

    @dlt.resource
    def numbers() -> Any:
        reads.append(1)
        yield [1, 2]

    @dlt.transformer(data_from=numbers)
    def doubled(page: list[int]) -> Any:
        yield [{"n": n * 2} for n in page]

    @dlt.transformer(data_from=numbers)
    def tripled(page: list[int]) -> Any:
        yield [{"n": n * 3} for n in page]

    source = dlt.source(lambda: [numbers, doubled, tripled], name="maths")()
    assert sorted(str(item) for item in source) == sorted(
        ["1", "2", "{'n': 2}", "{'n': 4}", "{'n': 3}", "{'n': 6}"]
    )
    assert reads == [1]


def test_a_parent_piped_into_two_transformers_runs_once(tmp_path: Path) -> None:
    reads: list[int] = []

    @dlt.resource
    def users() -> Any:
        reads.append(1)
        yield [{"id": 1}, {"id": 2}]

    @dlt.transformer
    def profile(page: Any) -> Any:
        yield [{"id": user["id"], "kind": "profile"} for user in page]

    @dlt.transformer
    def settings(page: Any) -> Any:
        yield [{"id": user["id"], "kind": "settings"} for user in page]

    pipe = pipeline(tmp_path)
    pipe.run([users, users | profile, users | settings])
    assert reads == [1]
    assert rows(pipe, "SELECT count(*) FROM d.profile") == [(2,)]
    assert rows(pipe, "SELECT count(*) FROM d.settings") == [(2,)]


@pytest.mark.parametrize("mode", ["fifo", "round_robin"])
def test_pages_flow_through_a_fork_without_being_read_ahead(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Memory stays flat: a transformer gets each page before the parent makes more than
    ``extract.max_parallel_items`` (here 4) others."""
    monkeypatch.setenv("EXTRACT__NEXT_ITEM_MODE", mode)
    monkeypatch.setenv("EXTRACT__MAX_PARALLEL_ITEMS", "4")
    made: list[int] = []
    lead: list[int] = []

    @dlt.resource
    def pages() -> Any:
        for number in range(200):
            made.append(number)
            yield [{"n": number}]

    @dlt.transformer(data_from=pages)
    def first(page: Any) -> Any:
        lead.append(len(made) - page[0]["n"])
        yield page

    @dlt.transformer(data_from=pages)
    def second(page: Any) -> Any:
        yield page

    items = list(dlt.source(lambda: [first, second], name="flow")())
    assert len(items) == 400
    assert max(lead) <= 4 + 1


def test_add_limit_on_a_transformer_has_no_effect_as_in_dlt(
    caplog: pytest.LogCaptureFixture,
) -> None:
    @dlt.resource
    def numbers() -> Any:
        yield from ({"n": n} for n in range(5))

    @dlt.transformer(data_from=numbers)
    def echo(item: Any) -> Any:
        yield item

    echo.add_limit(2)
    assert len(list(echo)) == 5
    assert "has no effect" in caplog.text


def test_the_graph_of_a_source_draws_as_mermaid() -> None:
    @dlt.resource
    def users() -> Any:
        yield {"id": 1}

    @dlt.transformer(data_from=users)
    def orders(user: Any) -> Any:
        yield user

    @dlt.transformer(data_from=orders)
    def lines(order: Any) -> Any:
        yield order

    assert mermaid(pipe_graph([orders, lines])) == "\n".join(
        [
            "flowchart LR",
            '    n0("users")',
            '    n1["orders"]',
            '    n2["lines"]',
            "    n0 --> n1",
            "    n1 --> n2",
        ]
    )


@pytest.mark.parametrize("mode", ["fifo", "round_robin"])
def test_both_item_modes_load_the_same_rows(
    mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EXTRACT__NEXT_ITEM_MODE", mode)
    outcome = as_recorded(PROGRAMS["chain_with_limit"](dlt, str(tmp_path)))
    assert outcome == RECORDED["chain_with_limit"]


def test_a_bad_item_mode_is_refused_before_extract(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EXTRACT__NEXT_ITEM_MODE", "lifo")
    with pytest.raises(Exception, match=r"extract\.next_item_mode"):
        pipeline(tmp_path).run([{"id": 1}], table_name="t")


# -- concurrency ---------------------------------------------------------------------------
def test_parallelized_resources_run_at_the_same_time(tmp_path: Path) -> None:
    """Each waits for the other inside its generator: only threads side by side finish."""
    meet = threading.Barrier(2, timeout=20)

    @dlt.resource(parallelized=True)
    def left() -> Any:
        meet.wait()
        yield {"side": "left"}

    @dlt.resource(parallelized=True)
    def right() -> Any:
        meet.wait()
        yield {"side": "right"}

    pipe = pipeline(tmp_path)
    pipe.run([left, right])
    assert rows(pipe, "SELECT side FROM d.left UNION ALL SELECT side FROM d.right") == [
        ("left",),
        ("right",),
    ]


def test_deferred_calls_run_at_the_same_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXTRACT__WORKERS", "3")
    meet = threading.Barrier(3, timeout=20)

    @dlt.defer
    def fetch(number: int) -> Any:
        meet.wait()
        return {"n": number}

    @dlt.resource
    def numbers() -> Any:
        for number in range(3):
            yield fetch(number)

    assert sorted(item["n"] for item in numbers) == [0, 1, 2]


def test_async_generators_run_concurrently_on_one_loop() -> None:
    """``ping`` waits for what ``pong`` sets and the other way round: read one after the
    other, they would never finish."""
    events: dict[str, asyncio.Event] = {}

    def event(name: str) -> asyncio.Event:
        return events.setdefault(name, asyncio.Event())

    @dlt.resource
    async def ping() -> Any:
        event("ping").set()
        await asyncio.wait_for(event("pong").wait(), 20)
        yield {"who": "ping"}

    @dlt.resource
    async def pong() -> Any:
        event("pong").set()
        await asyncio.wait_for(event("ping").wait(), 20)
        yield {"who": "pong"}

    source = dlt.source(lambda: [ping, pong], name="game")()
    assert sorted(item["who"] for item in source) == ["ping", "pong"]


# -- failures ------------------------------------------------------------------------------
def _cursor_source(fail_child: bool) -> Any:
    @dlt.resource(primary_key="id")
    def users(updated: Any = dlt.sources.incremental("updated", initial_value=0)) -> Any:
        yield [{"id": i, "updated": i} for i in (1, 2, 3)]

    @dlt.transformer(data_from=users)
    def orders(page: Any) -> Any:
        if fail_child:
            raise RuntimeError("orders API is down")
        yield [{"user_id": user["id"]} for user in page]

    return dlt.source(lambda: [users, orders], name="crm")()


def test_a_failing_child_names_its_pipe_and_leaves_the_parent_cursor(tmp_path: Path) -> None:
    pipe = pipeline(tmp_path)
    with pytest.raises(PipelineStepFailed) as failed:
        pipe.run(_cursor_source(fail_child=True))
    cause = failed.value.__cause__
    assert isinstance(cause, ResourceExtractionError)
    assert (cause.pipe_name, cause.resource_name) == ("orders", "orders")
    assert "orders API is down" in str(failed.value)
    assert "incremental" not in str(pipe.state.get("sources", {}).get("crm", {}))
    pipe.run(_cursor_source(fail_child=False))
    assert rows(pipe, "SELECT count(*), count(DISTINCT user_id) FROM d.orders") == [(3, 3)]
    assert rows(pipe, "SELECT count(*) FROM d.users") == [(3,)]


KILLED_RUN = """
import os, signal, sys
import loadstone as dlt

kill_at = int(sys.argv[2])

@dlt.resource(primary_key="id")
def users(updated=dlt.sources.incremental("updated", initial_value=0)):
    for page in range(10):
        yield [{"id": page * 10 + k, "updated": page * 10 + k} for k in range(10)]

@dlt.transformer(data_from=users)
def orders(page):
    for user in page:
        if user["id"] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)  # as the OOM killer: this pid only
        yield {"user_id": user["id"]}

pipe = dlt.pipeline("killed", destination="duckdb", pipelines_dir=sys.argv[1], dataset_name="d")
pipe.run(dlt.source(lambda: [users, orders], name="crm")())
"""


def test_a_kill_during_a_forked_extract_moves_no_state_and_the_rerun_loads_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "killed_run.py"
    script.write_text(textwrap.dedent(KILLED_RUN))
    folder = str(tmp_path / "pl")
    killed = subprocess.run([sys.executable, str(script), folder, "57"], cwd=tmp_path)
    assert killed.returncode == -signal.SIGKILL
    # the same program again, in this process (a process of its own would only add Python's
    # start-up and imports): it finishes what the killed run left
    os.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", [str(script), folder, "-1"])
    runpy.run_path(str(script), run_name="__main__")
    pipe = dlt.pipeline("killed", destination="duckdb", pipelines_dir=folder, dataset_name="d")
    assert rows(pipe, "SELECT count(*), count(DISTINCT user_id) FROM d.orders") == [(100, 100)]
    assert rows(pipe, "SELECT count(*), count(DISTINCT id) FROM d.users") == [(100, 100)]
