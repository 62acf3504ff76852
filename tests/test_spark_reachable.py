"""A configured cluster master must answer before a run does any work (issue 36)."""

from __future__ import annotations

import socket

import pytest

from loadstone.exceptions import SparkTargetError
from loadstone.spark_session import check_reachable


def test_a_master_something_listens_on_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        monkeypatch.setenv("SPARK__MASTER", f"spark://127.0.0.1:{port}")
        check_reachable()


def test_a_standby_master_that_answers_is_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        monkeypatch.setenv("SPARK__MASTER", f"spark://127.0.0.1:1,127.0.0.1:{port}")
        check_reachable()


def test_a_master_nothing_answers_on_is_named_with_its_source(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SPARK__MASTER", "spark://127.0.0.1:1")
    with pytest.raises(SparkTargetError) as caught:
        check_reachable()
    assert str(caught.value).startswith(
        "cannot reach Spark master spark://127.0.0.1:1 (from environment variable SPARK__MASTER)"
    )


def test_a_local_master_is_not_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARK__MASTER", "local[2]")
    check_reachable()
