"""A cursor given as a query param (``{"type": "incremental"}``), refused where dlt 1.31
refuses it when the source is made; the messages are dlt's, observed under dlt 1.31.

No request is sent: the configs are checked before anything is read.
"""

from __future__ import annotations

from typing import Any

import pytest

from loadstone.sources.rest_api import rest_api_source

#: no server listens there: nothing may be requested
BASE_URL = "http://127.0.0.1:9/"


def _source(params: dict[str, Any]) -> Any:
    return rest_api_source(
        {
            "client": {"base_url": BASE_URL},
            "resources": [{"name": "events", "endpoint": {"path": "events", "params": params}}],
        }
    )


def _cursor(**options: Any) -> dict[str, Any]:
    return {"type": "incremental", "cursor_path": "updated", "initial_value": "a", **options}


@pytest.mark.parametrize("option", ["end_value", "end_param"])
def test_an_end_on_a_param_cursor_is_refused(option: str) -> None:
    with pytest.raises(ValueError) as refused:
        _source({"since": _cursor(**{option: "z"})})
    assert str(refused.value) == (
        "Only `start_param` and `initial_value` are allowed in the configuration of param: "
        "`since`. To set `end_value` too use the incremental configuration at the resource "
        "level. See https://dlthub.com/docs/dlt-ecosystem/verified-sources/rest_api/basic"
        "#incremental-loading"
    )


def test_a_start_param_on_a_param_cursor_is_an_unknown_option() -> None:
    with pytest.raises(TypeError, match="'start_param'"):
        _source({"since": _cursor(start_param="from")})


def test_two_param_cursors_are_refused() -> None:
    with pytest.raises(ValueError) as refused:
        _source({"since": _cursor(), "after": _cursor()})
    assert str(refused.value) == (
        "Only a single incremental parameter is allower per endpoint. "
        "Found parameters: `['since', 'after']`"
    )


def test_a_param_cursor_takes_the_other_incremental_options() -> None:
    source = _source({"since": _cursor(lag=1, row_order="asc", on_cursor_value_missing="include")})
    assert list(source.resources) == ["events"]
