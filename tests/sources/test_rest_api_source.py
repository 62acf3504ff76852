"""``loadstone.sources.rest_api``: a dlt rest_api config ported by one import loads the same
tables and rows, and asks the same requests, as dlt 1.31 did against the tests' server
(tests/fixtures/rest_api/*_dlt.json); plus auth, secrets, failures and refused options."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import rest_api_app as A
from rest_api_app import App
from rest_api_cases import BLOG_CONFIG, PAGINATOR_CASES, blog_steps, events_config
from rest_api_support import api_fixture  # noqa: F401 - the fixture "api"

import loadstone as dlt
from loadstone.exceptions import ResourceExtractionError
from loadstone.sources.rest_api import rest_api_resources, rest_api_source

FIXTURES = Path(__file__).parent.parent / "fixtures" / "rest_api"


def recorded(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def one_resource(url: str, endpoint: Any, **client: Any) -> dict[str, Any]:
    return {
        "client": {"base_url": url, **client},
        "resources": [{"name": "posts", "endpoint": endpoint}],
    }


def pipeline(tmp_path: Path, name: str) -> Any:
    return dlt.pipeline(
        name, destination="duckdb", pipelines_dir=str(tmp_path / "pipelines"), dataset_name="d"
    )


def rows(pipe: Any, sql: str) -> list[tuple[Any, ...]]:
    with pipe.sql_client() as client:
        return [tuple(row) for row in client.execute_sql(sql)]


@pytest.mark.parametrize("case", sorted(PAGINATOR_CASES))
def test_paginators_by_name_ask_and_read_as_dlt(api: App, case: str) -> None:
    route, paginator = PAGINATOR_CASES[case]
    config = one_resource(api.url, {"path": route}, paginator=paginator)
    got = [r["id"] for r in rest_api_source(config).resources["posts"]]
    expected = recorded("paginators_dlt.json")[case]
    assert (got, api.asked("/" + route)) == (expected["ids"], expected["requests"])


@pytest.mark.parametrize(
    ("route", "auth"),
    [
        ("bearer/posts", {"type": "bearer", "token": A.TOKEN}),
        ("bearer/posts", {"token": A.TOKEN}),
        ("apikey/posts", {"type": "api_key", "name": "X-API-Key", "api_key": A.API_KEY}),
        (
            "apikeyquery/posts",
            {"type": "api_key", "name": "api_key", "api_key": A.API_KEY, "location": "query"},
        ),
        ("basic/posts", {"type": "http_basic", "username": A.USER, "password": A.PASSWORD}),
    ],
)
def test_auth_dicts_sign_every_request(api: App, route: str, auth: dict[str, Any]) -> None:
    source = rest_api_source({"client": {"base_url": api.url, "auth": auth}, "resources": [route]})
    assert [r["id"] for r in source.resources[route]] == list(range(1, 11))


def test_oauth2_client_credentials_dict(api: App) -> None:
    auth = {
        "type": "oauth2_client_credentials",
        "access_token_url": f"{api.url}/oauth/token",
        "client_id": A.CLIENT_ID,
        "client_secret": A.CLIENT_SECRET,
    }
    source = rest_api_source(
        {"client": {"base_url": api.url, "auth": auth}, "resources": ["oauthed/posts"]}
    )
    assert len(list(source.resources["oauthed/posts"])) == 10
    assert [r["method"] for r in api.requests] == ["POST", "GET"]


def test_secrets_come_from_configuration_under_the_sources_name(
    api: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCES__BLOG__ACCESS_TOKEN", A.TOKEN)

    @dlt.source
    def blog(access_token: str = dlt.secrets.value) -> Any:
        auth = {"type": "bearer", "token": access_token}
        return rest_api_resources(
            {"client": {"base_url": api.url, "auth": auth}, "resources": ["bearer/posts"]}
        )

    assert len(list(blog())) == 10


def test_parent_and_children_load_the_tables_dlt_loads(api: App, tmp_path: Path) -> None:
    pipe = pipeline(tmp_path, "blog")
    info = pipe.run(rest_api_source(blog_steps(BLOG_CONFIG(api.url)), name="blog"))
    expected = recorded("blog_dlt.json")
    assert info.row_counts == {"posts": 4, "comments": 8, "post_detail": 4}
    assert pipe.default_schema.name == expected["schema"]
    for name, table in expected["tables"].items():
        schema_table = pipe.default_schema.tables[name]
        columns = {
            c.name: c.data_type
            for c in schema_table.columns.values()
            if not c.name.startswith("_dlt")
        }
        assert columns == table["columns"], name
        assert list(columns) == list(table["columns"]), name
        got = rows(pipe, f"SELECT {', '.join(columns)} FROM {name} ORDER BY 1")
        assert [
            [v.isoformat() if hasattr(v, "isoformat") else v for v in row] for row in got
        ] == table["rows"]
        assert schema_table.write_disposition == table["write_disposition"]
        assert [c.name for c in schema_table.columns.values() if c.primary_key] == table[
            "primary_key"
        ]
    asked = {
        r["path"] + "?" + "&".join(f"{k}={v[0]}" for k, v in sorted(r["query"].items()))
        for r in api.requests
    }
    assert sorted(asked) == expected["requests"]


def test_incremental_second_run_asks_only_for_newer_records(api: App, tmp_path: Path) -> None:
    pipe = pipeline(tmp_path, "events")
    for run, expected in enumerate(recorded("incremental_dlt.json")):
        if run == 1:
            api.events += [
                {"id": i, "kind": "pull", "updated_at": f"2024-02-{i:02d}T00:00:00Z"}
                for i in (6, 7, 8)
            ]
        api.requests.clear()
        pipe.run(rest_api_source(events_config(api.url)))
        cursor = pipe.state["sources"]["rest_api"]["resources"]["events"]["incremental"][
            "updated_at"
        ]
        assert api.asked("/events") == expected["asked"]
        assert [r[0] for r in rows(pipe, "SELECT id FROM events ORDER BY id")] == expected["ids"]
        assert (cursor["last_value"], cursor["start_value"]) == (
            expected["last_value"],
            expected["start_value"],
        )


def test_incremental_as_a_param_and_as_a_placeholder(api: App) -> None:
    cursor = {
        "type": "incremental",
        "cursor_path": "updated_at",
        "initial_value": "2024-02-04T00:00:00Z",
    }
    by_param = one_resource(
        api.url, {"path": "events", "params": {"since": cursor}, "paginator": "single_page"}
    )
    placeholder = one_resource(
        api.url,
        {
            "path": "events",
            "params": {"since": "{incremental.start_value}"},
            "incremental": {"cursor_path": "updated_at", "initial_value": "2024-02-03T00:00:00Z"},
            "paginator": "single_page",
        },
    )
    assert [r["id"] for r in rest_api_source(by_param).resources["posts"]] == [4, 5]
    assert [r["id"] for r in rest_api_source(placeholder).resources["posts"]] == [3, 4]
    assert [q["since"] for q in api.asked("/events")] == [
        ["2024-02-04T00:00:00Z"],
        ["2024-02-03T00:00:00Z"],
    ]


def test_a_server_dying_mid_run_loads_nothing_and_the_rerun_loads_every_row_once(
    api: App, tmp_path: Path
) -> None:
    pipe = pipeline(tmp_path, "events")
    pipe.run(rest_api_source(events_config(api.url)))
    state_before = json.dumps(pipe.state["sources"], sort_keys=True)
    api.events += [
        {"id": i, "kind": "x", "updated_at": f"2024-02-{i:02d}T00:00:00Z"} for i in range(6, 12)
    ]
    api.die_after = 1
    with pytest.raises(Exception) as failed:
        pipe.run(rest_api_source(events_config(api.url)))
    assert "\n" not in str(failed.value)
    assert (
        f"GET {api.url}/events?since=2024-02-05T00:00:00Z&page=2 failed after 3 attempt(s)"
        in str(failed.value)
    )
    assert [r[0] for r in rows(pipe, "SELECT id FROM events ORDER BY id")] == [2, 3, 4, 5]
    assert json.dumps(pipe.state["sources"], sort_keys=True) == state_before
    api.die_after = None
    api.start()  # the server is back on its port
    pipe.run(rest_api_source(events_config(api.url)))
    assert [r[0] for r in rows(pipe, "SELECT id FROM events ORDER BY id")] == list(range(2, 12))


def test_response_actions_ignore_a_404_and_otherwise_it_fails_naming_the_url(api: App) -> None:
    ignored = one_resource(
        api.url,
        {"path": "nothing/here", "response_actions": [{"status_code": 404, "action": "ignore"}]},
    )
    assert list(rest_api_source(ignored).resources["posts"]) == []
    with pytest.raises(Exception, match=f"404 Not Found for GET {api.url}/nothing/here"):
        list(rest_api_source(one_resource(api.url, "nothing/here")).resources["posts"])


def test_a_missing_parent_field_is_named(api: App) -> None:
    config = BLOG_CONFIG(api.url)
    config["resources"][1]["include_from_parent"] = ["author"]
    with pytest.raises(ResourceExtractionError, match="'comments' needs field 'author'") as err:
        list(rest_api_source(config).resources["comments"])
    assert isinstance(err.value.__cause__, KeyError)  # the resource's error, as dlt wraps it


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda c: c["client"].update(session_timeout=3), "'session_timeout'"),
        (lambda c: c["resources"][0].update(bogus=1), "'bogus'"),
        (lambda c: c["resources"][0]["endpoint"].update(bogus=1), "'bogus'"),
        (
            lambda c: c["resources"][0]["endpoint"].update(
                paginator={"type": "offset", "limit": 2, "x": 1}
            ),
            "'x'",
        ),
        (lambda c: c["client"].update(auth={"type": "oauth2_implicit"}), "'oauth2_implicit'"),
    ],
)
def test_an_option_dlt_refuses_too_raises_type_error_naming_it(
    api: App, change: Any, named: str
) -> None:
    config = one_resource(api.url, {"path": "single/posts"})
    change(config)
    with pytest.raises(TypeError, match=named):
        rest_api_source(config)
