"""The Spark catalog destination over Spark Connect, on the suite's loopback Connect server.

The server is the one the normalizer's Connect test uses too (``connect_server``, once per
worker). The
loads run in two client processes (``spark_connect_child.py``): one killed with SIGKILL half
way through a ``merge``, then one that reruns it and loads an ``append`` and a ``replace``
table; each test checks one behaviour against what that process read back through the server.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cluster_support import ConnectServer

pytestmark = pytest.mark.cluster

CHILD = Path(__file__).resolve().with_name("spark_connect_child.py")


def _child(command: str, work: Path, url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CHILD), command, str(work), url],
        cwd=work,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def loaded(
    connect_server: ConnectServer, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """What the client processes did and read (the killed one's exit status too)."""
    work = tmp_path_factory.mktemp("spark_connect")
    crashed = _child("crash", work, connect_server.url)
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr[-3000:]
    done = _child("loads", work, connect_server.url)
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(json.loads((work / "loads.json").read_text(encoding="utf-8")))


@pytest.mark.spark
def test_a_load_killed_mid_way_is_not_recorded_and_shows_no_nested_rows(
    loaded: dict[str, Any],
) -> None:
    """The root table's files were in, the nested table's old ones set aside, no loads row."""
    killed = loaded["killed"]
    assert killed["items"] == [[1], [2], [3]]
    assert killed["items__tags"] == []
    assert len(killed["_dlt_loads"]) == 1


@pytest.mark.spark
def test_the_rerun_finishes_the_killed_merge_exactly_once(loaded: dict[str, Any]) -> None:
    assert loaded["rerun_packages"] == 1
    assert len(loaded["merged_loads"]) == 2
    assert loaded["merged"] == [[1, "c"], [2, "b"], [3, "d"]]


@pytest.mark.spark
def test_merge_replaces_the_nested_rows_of_replaced_parents(loaded: dict[str, Any]) -> None:
    """Key 1's list shrank from a, b, c to z: none of its old elements stays."""
    assert loaded["merged_tags"] == [["q"], ["y"], ["z"]]


@pytest.mark.spark
def test_append_adds_the_second_load_to_the_first(loaded: dict[str, Any]) -> None:
    assert loaded["events"] == [[1], [2], [3]]
    assert loaded["dataset"] == [1, 2, 3]
    assert len(loaded["mixed_loads"]) == 2


@pytest.mark.spark
def test_replace_keeps_only_the_last_load_in_root_and_nested_tables(
    loaded: dict[str, Any],
) -> None:
    """The last load's time of day was rewritten as text by the server's Python workers."""
    assert loaded["stock"] == [["b", "01:02:03.000004"]]
    assert loaded["bins"] == [["z"]]


@pytest.mark.spark
def test_the_servers_in_memory_catalog_is_refused_saying_how_to_start_the_server(
    loaded: dict[str, Any],
) -> None:
    error = loaded["in_memory_error"]
    assert error is not None and error.startswith("InMemoryCatalog: the Spark Connect server")
    assert "--conf spark.sql.catalogImplementation=hive" in error
