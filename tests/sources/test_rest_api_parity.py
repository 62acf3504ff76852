"""The rest_api features loadstone once refused (issue 36) behave as dlt 1.31's: the same
records and requests, or the same exception class, for the configs of rest_api_parity_cases
(dlt's outcomes: tests/fixtures/rest_api/parity_dlt.json, record_dlt_parity.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import requests
import rest_api_app as A
import rest_api_parity_cases as C
from rest_api_app import App
from rest_api_support import api_fixture  # noqa: F401 - the fixture "api"

import loadstone as dlt
from loadstone.exceptions import JSONPathError, ResourceExtractionError
from loadstone.sources.helpers.rest_client.jsonpath import find_values
from loadstone.sources.helpers.rest_client.paginators import HeaderCursorPaginator
from loadstone.sources.rest_api import rest_api_source

RECORDED: dict[str, Any] = json.loads(
    (Path(__file__).parent.parent / "fixtures" / "rest_api" / "parity_dlt.json").read_text()
)
#: dlt's child of a parent with a yield_map step fails inside dlt ('str' object has no
#: attribute 'keys'); loadstone asks for each record the step yields (docs: Differences)
DIFFERENT_ON_PURPOSE = {"child_sees_yield_map"}


def asked(api: App) -> list[dict[str, Any]]:
    return [
        {
            "path": r["path"],
            "query": r["query"],
            "headers": {k: v for k, v in r["headers"].items() if k.startswith("X-")},
            "body": r["body"],
        }
        for r in api.requests
    ]


def outcome(api: App, case: C.Case) -> dict[str, Any]:
    api.requests.clear()
    config, name = case(api.url)
    try:
        source = rest_api_source(config)
    except Exception as error:
        return {"raises": type(error).__name__, "when": "config"}
    return {"records": list(source.resources[name]), "requests": asked(api)}


@pytest.mark.parametrize("name", sorted(set(C.CASES) - DIFFERENT_ON_PURPOSE))
def test_a_config_dlt_accepts_asks_and_reads_as_dlt_or_fails_as_dlt(api: App, name: str) -> None:
    assert outcome(api, C.CASES[name]) == RECORDED[name]


def test_two_parents_are_refused_with_dlts_value_error_before_any_request(api: App) -> None:
    config, _ = C.CASES["two_parents_by_placeholders"](api.url)
    with pytest.raises(ValueError, match="'child' takes values from several parents"):
        rest_api_source(config)
    assert api.requests == []


def test_a_child_of_a_yield_map_step_asks_for_each_record_it_yields(api: App) -> None:
    config, name = C.CASES["child_sees_yield_map"](api.url)
    records = list(rest_api_source(config).resources[name])
    assert [r["path"] for r in api.requests] == [
        "/single/posts",
        "/posts/1/comments",
        "/posts/6/comments",
        "/posts/2/comments",
        "/posts/7/comments",
    ]
    assert [r["_posts_post_id"] for r in records] == [1, 1, 1, 1, 2, 2, 2, 2]


def test_the_header_cursor_paginator_has_dlts_class_and_arguments() -> None:
    paginator = HeaderCursorPaginator()
    assert (paginator.cursor_key, paginator.cursor_param) == ("next", "cursor")


@pytest.mark.parametrize("form", C.LAG_FORMS)
def test_an_incremental_lag_asks_again_from_lag_before_the_last_value(
    api: App, tmp_path: Path, form: str
) -> None:
    pipe = dlt.pipeline(
        "events_lag_" + form,
        destination="duckdb",
        pipelines_dir=str(tmp_path / "pipelines"),
        dataset_name="d",
    )
    api.events = A.make_events()
    for run, expected in enumerate(RECORDED["lag_runs"][form]):
        if run == 1:
            api.events += C.new_events()
        api.requests.clear()
        pipe.run(rest_api_source(C.events_lag_config(api.url, form)))
        with pipe.sql_client() as client:
            rows = client.execute_sql("SELECT id, kind, updated_at FROM events ORDER BY id, kind")
            got = [[i, k, u.isoformat()] for i, k, u in rows]
        cursor = pipe.state["sources"]["rest_api"]["resources"]["events"]["incremental"][
            "updated_at"
        ]
        assert (api.asked("/events"), got, cursor["last_value"]) == (
            expected["asked"],
            expected["rows"],
            expected["last_value"],
        )


def test_references_and_nested_hints_reach_the_schema_as_in_dlt(api: App, tmp_path: Path) -> None:
    pipe = dlt.pipeline(
        "hints", destination="duckdb", pipelines_dir=str(tmp_path / "p"), dataset_name="d"
    )
    pipe.run(rest_api_source(C.hints_config(api.url)))
    got = {
        name: {
            "references": pipe.default_schema.tables[name].get("references") or [],
            "primary_key": [
                c.name for c in pipe.default_schema.tables[name].columns.values() if c.primary_key
            ],
            "write_disposition": pipe.default_schema.tables[name].write_disposition,
        }
        for name in RECORDED["hints"]
    }
    assert got == RECORDED["hints"]


def test_parent_table_name_is_refused_with_dlts_type_error_naming_it(api: App) -> None:
    config, _ = C.CASES["parent_table_name_refused"](api.url)
    with pytest.raises(TypeError, match="parent_table_name"):
        rest_api_source(config)


@pytest.mark.parametrize("token", sorted(RECORDED["oauth_access_token"]))
def test_an_oauth2_access_token_in_the_config_is_taken_and_a_token_fetched_as_dlt_does(
    api: App, token: str
) -> None:
    source = rest_api_source(C.oauth_with_access_token(api.url, token))
    rows = len(list(source.resources["oauthed/posts"]))
    asked = [[r["method"], r["path"], r["headers"].get("Authorization")] for r in api.requests]
    assert {"rows": rows, "requests": asked} == RECORDED["oauth_access_token"][token]


def test_the_source_holds_parents_before_children_in_dlts_order() -> None:
    assert list(rest_api_source(C.ORDER_CONFIG).resources) == RECORDED["order"]


def test_a_resource_of_ones_own_in_the_config_is_loaded_and_may_be_a_parent(api: App) -> None:
    source = rest_api_source(C.own_resource_config(api.url, dlt))
    records = {name: list(source.resources[name]) for name in source.resources}
    assert {"order": list(source.resources), "records": records, "requests": asked(api)} == (
        RECORDED["own_resource"]
    )


@pytest.mark.parametrize("case", sorted(C.AUTH_BY_NAME))
def test_an_auth_named_by_type_reads_its_fields_from_configuration_as_dlt_does(
    api: App, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    route, env, kwargs = C.AUTH_BY_NAME[case]
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    kind = case.removesuffix("_named_source").removesuffix("_missing")
    config = {"client": {"base_url": api.url, "auth": kind}, "resources": [route]}
    try:
        got = {"rows": len(list(rest_api_source(config, **kwargs).resources[route]))}
    except Exception as error:
        got = {"raises": type(error).__name__}
    assert got == RECORDED["auth_by_name"][case]


def test_a_parent_field_missing_is_a_value_error_as_dlts_cause_is(api: App) -> None:
    config, name = C.CASES["one_parent_everywhere"](api.url)
    config["resources"][2]["endpoint"]["path"] = "posts/{resources.posts.nope}/comments"
    with pytest.raises(ResourceExtractionError, match="needs field 'nope' of its parent") as err:
        list(rest_api_source(config).resources[name])
    assert isinstance(err.value.__cause__, ValueError)  # dlt's: its cause is a ValueError


JSONPATH_CASES = [(doc, path) for doc, paths in C.JSONPATH_PATHS.items() for path in paths]


@pytest.mark.parametrize(("doc", "path"), JSONPATH_CASES)
def test_a_json_path_selects_what_dlt_selects_or_is_refused_as_by_dlt(doc: str, path: str) -> None:
    try:
        got: Any = find_values(path, C.JSONPATH_DOCS[doc])
    except JSONPathError:
        got = "refused"
    assert got == RECORDED["jsonpaths"][f"{doc} {path}"]


def test_a_response_action_of_another_name_does_nothing_as_in_dlt(api: App) -> None:
    """dlt 1.31 answers a 404 ruled {"action": "retry"} with its usual 404 error."""
    config = {
        "client": {"base_url": api.url},
        "resources": [
            {
                "name": "r",
                "endpoint": {
                    "path": "nothing",
                    "response_actions": [{"status_code": 404, "action": "retry"}],
                },
            }
        ],
    }
    with pytest.raises(ResourceExtractionError, match="404 Not Found") as failed:
        list(rest_api_source(config).resources["r"])
    assert isinstance(failed.value.__cause__, requests.HTTPError)


def test_include_from_parent_names_a_key_not_a_path_as_in_dlt(api: App) -> None:
    """dlt 1.31 fails ("Resource expects a field `post.id`"): the parent has a key post."""
    config, name = C.CASES["include_from_parent_keys"](api.url)
    config["resources"][1]["include_from_parent"] = ["post.id"]
    with pytest.raises(
        ResourceExtractionError, match=r"needs field 'post\.id' of its parent"
    ) as err:
        list(rest_api_source(config).resources[name])
    assert isinstance(err.value.__cause__, ValueError)
