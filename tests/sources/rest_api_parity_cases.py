"""Configs of the rest_api features loadstone once refused (issue 36), run under both dlt
(tests/fixtures/rest_api/record_dlt_parity.py) and loadstone (test_rest_api_parity.py): one
definition, so the comparison is of the same programs.

Each case is a function of the server's URL returning ``(config, resource to read)``; what is
recorded is the resource's records and the requests made, or the exception class raised when
the source is made.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

Case = Callable[[str], tuple[dict[str, Any], str]]


def _one(endpoint: dict[str, Any], **client: Any) -> Case:
    def case(url: str) -> tuple[dict[str, Any], str]:
        config = {
            "client": {"base_url": url, **client},
            "resources": [{"name": "p", "endpoint": endpoint}],
        }
        return config, "p"

    return case


def _with_parents(child: dict[str, Any], **hints: Any) -> Case:
    """Posts and boards, and a ``child`` endpoint taking values from them."""

    def case(url: str) -> tuple[dict[str, Any], str]:
        config = {
            "client": {"base_url": url, "paginator": "single_page"},
            "resources": [
                {"name": "posts", "endpoint": {"path": "single/posts"}},
                {"name": "boards", "endpoint": {"path": "boards", "data_selector": "data"}},
                {"name": "child", "endpoint": child, **hints},
            ],
        }
        return config, "child"

    return case


_POSTS = {"name": "posts", "endpoint": {"path": "single/posts", "paginator": "single_page"}}


def _SINCE(value: str) -> dict[str, Any]:
    return {"type": "incremental", "cursor_path": "updated_at", "initial_value": value}


def _resources(*resources: dict[str, Any]) -> Case:
    """A config of ``resources``; the last one is read."""

    def case(url: str) -> tuple[dict[str, Any], str]:
        config = {"client": {"base_url": url}, "resources": list(resources)}
        return config, resources[-1]["name"]

    return case


def _wrapped_parent(include: list[str]) -> Case:
    """Post 1 reshaped ({"post": {"id"}, "Title X"}), its comments including ``include``."""

    def case(url: str) -> tuple[dict[str, Any], str]:
        steps = [
            {"filter": lambda p: p["id"] == 1},
            {"map": lambda p: {"post": {"id": p["id"]}, "Title X": p["title"]}},
        ]
        config = {
            "client": {"base_url": url, "paginator": "single_page"},
            "resources": [
                {"name": "wrapped", "endpoint": "single/posts", "processing_steps": steps},
                {
                    "name": "c",
                    "endpoint": "posts/{resources.wrapped.post.id}/comments",
                    "include_from_parent": include,
                },
            ],
        }
        return config, "c"

    return case


def _selector(selector: str) -> Case:
    return _one({"path": "single/posts", "data_selector": selector, "paginator": "single_page"})


def _nested(selector: str, paginator: Any) -> Case:
    return _one({"path": "nested/posts", "data_selector": selector, "paginator": paginator})


def _two_each(post: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """A yield_map step: two records of each post (ids of posts still: a child asks for them)."""
    for n in (0, 1):
        yield {"id": post["id"] + 5 * n, "post_id": post["id"]}


def _steps(steps: list[dict[str, Any]], child: bool = False) -> Case:
    def case(url: str) -> tuple[dict[str, Any], str]:
        resources: list[dict[str, Any]] = [
            {"name": "posts", "endpoint": {"path": "single/posts"}, "processing_steps": steps}
        ]
        if child:
            resources.append(
                {
                    "name": "comments",
                    "endpoint": {"path": "posts/{resources.posts.id}/comments"},
                    "include_from_parent": ["post_id"],
                }
            )
        config = {"client": {"base_url": url, "paginator": "single_page"}, "resources": resources}
        return config, "comments" if child else "posts"

    return case


CASES: dict[str, Case] = {
    # the header_cursor paginator, by name and with its options
    "header_cursor_by_name": _one({"path": "header_cursor/posts", "paginator": "header_cursor"}),
    "header_cursor_options": _one(
        {
            "path": "header_cursor/posts",
            "paginator": {
                "type": "header_cursor",
                "cursor_key": "X-Next-Cursor",
                "cursor_param": "cursor",
            },
        }
    ),
    "header_cursor_missing_header": _one(
        {
            "path": "header_cursor/posts",
            "paginator": {"type": "header_cursor", "cursor_key": "Nope"},
        }
    ),
    # parents: two of them (refused), one parent in every place a placeholder may stand
    "two_parents_by_placeholders": _with_parents(
        {"path": "posts/{resources.posts.id}/comments", "params": {"b": "{resources.boards.id}"}}
    ),
    "two_parents_in_json": _with_parents(
        {"path": "posts/{resources.posts.id}/comments", "json": {"b": "{resources.boards.id}"}}
    ),
    "two_parents_in_headers": _with_parents(
        {"path": "posts/{resources.posts.id}/comments", "headers": {"X-B": "{resources.boards.id}"}}
    ),
    "two_parents_by_resolve_params": _with_parents(
        {
            "path": "posts/{p}/comments/{b}",
            "params": {
                "p": {"type": "resolve", "resource": "posts", "field": "id"},
                "b": {"type": "resolve", "resource": "boards", "field": "id"},
            },
        }
    ),
    "resolve_param_not_in_path": _with_parents(
        {
            "path": "search/posts",
            "params": {"ids": {"type": "resolve", "resource": "posts", "field": "id"}},
        }
    ),
    "one_parent_everywhere": _with_parents(
        {
            "path": "posts/{resources.posts.id}/comments",
            "params": {"t": "{resources.posts.title}", "u": "x-{resources.posts.id}"},
            "headers": {"X-Post": "{resources.posts.id}"},
        }
    ),
    "one_parent_in_bodies": _with_parents(
        {
            "path": "posts/{resources.posts.id}/comments",
            "method": "POST",
            "data": {"b": "{resources.posts.id}"},
        }
    ),
    "one_parent_in_json": _with_parents(
        {
            "path": "posts/{resources.posts.id}/comments",
            "method": "POST",
            "json": {
                "b": "{resources.posts.id}",
                "t": "x{resources.posts.title}",
                "n": ["{resources.posts.id}"],
            },
        }
    ),
    # include_from_parent names keys (a path in a placeholder)
    "include_from_parent_keys": _wrapped_parent(["Title X", "post"]),
    # JSONPath filters and recursive descent in data_selector and paginator paths
    "filter_greater": _selector("data[?(@.id > 8)]"),
    "filter_equal_text": _selector("$.data[?(@.title == 'post 3')]"),
    "filter_and": _selector("$.data[?(@.id > 2 & @.id < 5)]"),
    "filter_or": _selector("$.data[?(@.id == 1 || @.id == 10)]"),
    "filter_regex": _selector("$.data[?(@.title =~ '1$')]"),
    "filter_no_parentheses": _selector("data[?id > 8]"),
    "filter_exists_not": _selector("$.data[?(!@.missing)].id"),
    "descent_values": _selector("$..id"),
    "descent_list": _selector("$..data"),
    "descent_nested_records": _nested("$..posts[*]", "single_page"),
    "descent_paths_in_paginators": _nested(
        "$..posts[*]",
        {"type": "page_number", "base_page": 1, "total_path": "$..total_pages"},
    ),
    "filter_in_next_url_path": _nested(
        "result.groups[?(@.kind == 'even')].posts[*]",
        {"type": "json_link", "next_url_path": "meta.links[?(@.rel == 'next')].href"},
    ),
    # paginator options that write into a POST body, a cursor's stopping rules
    "page_number_in_body": _one(
        {
            "path": "page_number/posts",
            "method": "POST",
            "json": {"q": "x"},
            "paginator": {
                "type": "page_number",
                "base_page": 1,
                "page_body_path": "page",
                "total_path": "total_pages",
            },
        }
    ),
    "offset_in_body": _one(
        {
            "path": "offset/posts",
            "method": "POST",
            "json": {"q": "x"},
            "paginator": {
                "type": "offset",
                "limit": 4,
                "offset_body_path": "offset",
                "limit_body_path": "limit",
            },
        }
    ),
    "cursor_has_more": _one(
        {
            "path": "has_more/posts",
            "paginator": {"type": "cursor", "cursor_path": "cursor", "has_more_path": "has_more"},
        }
    ),
    "cursor_stop_after_empty_page": _one(
        {
            "path": "has_more/posts",
            "paginator": {"type": "cursor", "cursor_path": "cursor", "stop_after_empty_page": True},
        }
    ),
    # dlt's rest_api hands parent_table_name to its resource(), which refuses it
    "parent_table_name_refused": _with_parents(
        {"path": "posts/{resources.posts.id}/comments"}, parent_table_name="posts"
    ),
    # what dlt refuses in a config, and what it takes that loadstone once refused
    "resource_named_twice": _resources(_POSTS, _POSTS),
    "parent_not_in_config": _resources({"name": "c", "endpoint": "posts/{resources.nope.id}/x"}),
    "parents_in_a_cycle": _resources(
        {"name": "a", "endpoint": "x/{resources.b.id}"},
        {"name": "b", "endpoint": "x/{resources.a.id}"},
    ),
    "include_from_parent_without_parent": _resources({**_POSTS, "include_from_parent": ["id"]}),
    "resolve_param_with_another_key": _resources(
        _POSTS,
        {
            "name": "c",
            "endpoint": {
                "path": "posts/{p}/comments",
                "params": {"p": {"type": "resolve", "resource": "posts", "field": "id", "x": 1}},
            },
        },
    ),
    "two_incremental_params": _resources(
        {
            "name": "c",
            "endpoint": {
                "path": "events",
                "params": {"since": _SINCE("2024-02-04T00:00:00Z"), "s2": _SINCE("2024-02-03")},
            },
        }
    ),
    "incremental_param_beside_endpoint_incremental": _resources(
        {
            "name": "c",
            "endpoint": {
                "path": "events",
                "paginator": "single_page",
                "params": {"since": _SINCE("2024-02-04T00:00:00Z")},
                "incremental": {
                    "start_param": "since2",
                    "cursor_path": "updated_at",
                    "initial_value": "2024-02-03T00:00:00Z",
                },
            },
        }
    ),
    # processing steps
    "yield_map": _steps([{"yield_map": _two_each}]),
    "filter_yield_map_map": _steps(
        [
            {"filter": lambda p: p["id"] <= 2},
            {"yield_map": _two_each},
            {"map": lambda r: {**r, "tag": "t"}},
        ]
    ),
    "child_sees_yield_map": _steps(
        [{"filter": lambda p: p["id"] <= 2}, {"yield_map": _two_each}], child=True
    ),
}

#: an incremental cursor with ``lag`` (a day, on ISO timestamps), run twice with new events
LAG_RUNS = 2
#: where the cursor's start goes: a start param, a ``{incremental.start_value}`` placeholder,
#: a ``{"type": "incremental"}`` param
LAG_FORMS = ("start_param", "placeholder", "incremental_param")


def events_lag_config(url: str, form: str = "start_param") -> dict[str, Any]:
    config = _events_lag_config(url)
    endpoint = config["resources"][0]["endpoint"]
    if form != "start_param":
        cursor = endpoint.pop("incremental")
        cursor.pop("start_param")
        if form == "placeholder":
            endpoint["incremental"] = cursor
            endpoint["params"] = {"since": "{incremental.start_value}"}
        else:
            endpoint["params"] = {"since": {"type": "incremental", **cursor}}
    return config


def _events_lag_config(url: str) -> dict[str, Any]:
    return {
        "client": {"base_url": url},
        "resources": [
            {
                "name": "events",
                "primary_key": "id",
                "write_disposition": "append",
                "endpoint": {
                    "path": "events",
                    "paginator": {
                        "type": "page_number",
                        "base_page": 1,
                        "total_path": "total_pages",
                    },
                    "incremental": {
                        "start_param": "since",
                        "cursor_path": "updated_at",
                        "initial_value": "2024-02-02T00:00:00Z",
                        "lag": 86400,
                    },
                },
            }
        ],
    }


def new_events() -> list[dict[str, Any]]:
    """Added before the second run: one late event inside the lag, one new."""
    return [
        {"id": 7, "kind": "late", "updated_at": "2024-02-04T12:00:00Z"},
        {"id": 6, "kind": "pull", "updated_at": "2024-02-06T00:00:00Z"},
    ]


#: children listed before their parents: dlt builds the source in graphlib's static order
ORDER_CONFIG: dict[str, Any] = {
    "client": {"base_url": "http://127.0.0.1:9"},
    "resources": [
        {"name": "c", "endpoint": "x/{resources.p.id}"},
        {"name": "z", "endpoint": "z"},
        {"name": "p", "endpoint": "p"},
        {"name": "gc", "endpoint": "y/{resources.c.id}"},
        {"name": "a", "endpoint": "a"},
    ],
}


def own_resource_config(url: str, dlt: Any) -> dict[str, Any]:
    """A resource of one's own (made with ``dlt``, either library) as a child's parent."""

    @dlt.resource(name="ids")
    def ids() -> Iterator[list[dict[str, int]]]:
        yield [{"id": 1}, {"id": 2}]

    comments = {
        "name": "comments",
        "endpoint": {"path": "posts/{resources.ids.id}/comments"},
        "include_from_parent": ["id"],
    }
    return {
        "client": {"base_url": url, "paginator": "single_page"},
        "resources": [ids(), comments, {"name": "posts", "endpoint": "single/posts"}],
    }


#: auths named by type alone, their fields in the environment: (route, env, source kwargs)
AUTH_BY_NAME: dict[str, tuple[str, dict[str, str], dict[str, str]]] = {
    "bearer": ("bearer/posts", {"SOURCES__REST_API__CREDENTIALS__TOKEN": "s3cr3t-token"}, {}),
    "bearer_named_source": (
        "bearer/posts",
        {"SOURCES__SEC__BLOG__CREDENTIALS__TOKEN": "s3cr3t-token"},
        {"name": "blog", "section": "sec"},
    ),
    "api_key": (
        "apikey/posts",
        {"CREDENTIALS__API_KEY": "k3y-123", "CREDENTIALS__NAME": "X-API-Key"},
        {},
    ),
    "http_basic": (
        "basic/posts",
        {"SOURCES__CREDENTIALS__USERNAME": "ann", "SOURCES__CREDENTIALS__PASSWORD": "pa55"},
        {},
    ),
    "bearer_missing": ("bearer/posts", {}, {}),
}


def oauth_with_access_token(url: str, token: str) -> dict[str, Any]:
    """OAuth2 client credentials given an ``access_token`` as well (the right one or not)."""
    auth = {
        "type": "oauth2_client_credentials",
        "access_token_url": f"{url}/oauth/token",
        "client_id": "client-1",
        "client_secret": "client-secret-1",
        "access_token": token,
    }
    return {"client": {"base_url": url, "auth": auth}, "resources": ["oauthed/posts"]}


def hints_config(url: str) -> dict[str, Any]:
    """Groups of posts (a nested list) with a table reference and a nested table's key."""
    return {
        "client": {"base_url": url, "paginator": "single_page"},
        "resources": [
            {
                "name": "groups",
                "endpoint": {"path": "nested/posts", "data_selector": "result.groups"},
                "primary_key": "kind",
                "references": [
                    {
                        "columns": ["kind"],
                        "referenced_table": "kinds",
                        "referenced_columns": ["name"],
                    }
                ],
                "nested_hints": {"posts": {"primary_key": "id"}},
            }
        ],
    }


#: documents and the JSON paths asked of them (recorded: dlt's answers or that it refused)
JSONPATH_DOCS: dict[str, Any] = {
    "records": {
        "id": 0,
        "a": {"id": 1, "b": {"id": 2}},
        "c": [
            {"id": 3, "k": "x", "n": None, "t": True, "m": {"v": 5}},
            {"id": 4, "k": "y", "t": False, "m": {"v": 6}},
            {"id": 5},
        ],
        "d": {"p": {"id": 6}, "q": {"id": 7}},
    },
    "mixed": {
        "c": [{"id": 3, "k": "xy"}, {"id": 4, "k": "y"}, {"id": 5}],
        "d": {"p": {"id": 6}, "q": {"id": 7}},
        "n": [[1, 2], [3]],
    },
    "names": {
        "@odata.nextLink": "u1",
        "odata": {"nextLink": "u2"},
        "data-items": [1],
        "a b": 2,
        "x": {"y-z": 3},
        "$ref": 4,
        "n1": {"2": 5},
        "list": [[1, 2], [3]],
        "k": {"*": 6},
    },
}
JSONPATH_PATHS: dict[str, list[str]] = {
    "records": [
        "$..id",
        "..id",
        "$..c[*].id",
        "c..id",
        "$.c[?(@.k)]",
        "$.c[?(@.k == 'x')].id",
        "$.c[?(@.k != 'x')].id",
        "$.c[?(@.id >= 4)].id",
        "$.c[?(@.id > 3 & @.id < 5)].id",
        "$.c[?(@.t == true)].id",
        "$.c[?(@.t == True)].id",
        "$.c[?(@.n == null)].id",
        "$.c[?(@.m.v == 6)].id",
        "$.c[?(@.k =~ 'x|y')].id",
        "$.c[?(@.id > 3 and @.id < 5)].id",
        "$.c[?(@.id == 3 | @.id == 5)].id",
        "$.c[?(@.id == 3 || @.id == 5)].id",
        "$.c[?(@.id == 3 && @.k == 'x')].id",
        "$.d[?(@.id == 7)]",
        "$.d[?(@.p)]",
        "$.c[1:3].id",
        "$.c[-1].id",
        "$..*",
        "$.d.*.id",
        "$..m.v",
        "$.c[?(@.id == '3')].id",
        '$.c[?(@.k == "y")].id',
        "$.c[?k == 'x'].id",
        "$.c[?(!@.k)].id",
        "$.c[?(@.id in [3,4])].id",
        "c[0]",
        "$..[?(@.id == 2)]",
        "$['c'][0]['id']",
        "$.c[?(@.id > 3.5)].id",
    ],
    "mixed": [
        "$.c.*",
        "$.d[*]",
        "$.c[?(@.k =~ 'y')].id",
        "$.c[?(@.k =~ '^y')].id",
        "$.c[?(@.k =~ 'x')].id",
        "$.c[?(@.missing < 3)].id",
        "$.c[?(@.k > 3)].id",
        "$.c[?(@.id == 3 || @.id == 4 && @.k == 'q')].id",
        "$.c[?(@.id == 3 && @.k == 'q' || @.id == 4)].id",
        "$.c[::2].id",
        "$..c",
        "$.n[*]",
        "$.n..*",
        "$.c[?(@.id != 3)].id",
        "$.c[?(@.id < 4)]",
        "$.c[?(@.id == 3.0)].id",
        "$.c[?(@.id == -1)].id",
        "$.c[?( @.id==4 )].id",
        "$.c[?(@.id == 4)].k",
        "$.c[?(@.id)]",
        "$.c[?(@.id == 4)][k]",
        "$.c[?(@['k'] == 'y')].id",
        "$.c[?(@.k == y)].id",
        "$.d[p]",
        "$.c[?(@.k == 'y')].*",
        "$..k",
    ],
    "names": [
        "@odata.nextLink",
        "['@odata.nextLink']",
        "$['@odata.nextLink']",
        '"@odata.nextLink"',
        "data-items",
        "x.y-z",
        "$ref",
        "n1.2",
        "list[0][1]",
        "list[*][0]",
        "$.list[*][*]",
        "k.*",
        "a b",
        "$.'a b'",
        "`this`",
        "odata.nextLink",
        "$.odata['nextLink']",
        "odata.*",
        "data-items[0]",
        "$[odata]",
    ],
}
