"""The configs and response shapes run under both dlt (tests/fixtures/rest_api/record_dlt.py)
and loadstone (the tests): one definition, so the comparison is of the same programs."""

from __future__ import annotations

from typing import Any

#: first responses whose records and pagination dlt guesses (the second page is empty)
DETECTION_CASES: list[dict[str, Any]] = [
    {"body": [{"id": 1}]},
    {"body": {"data": [{"id": 1}]}},
    {"body": {"foo": [{"id": 1}], "data": [{"id": 2}]}},
    {"body": {"items": [{"id": 1}], "data": [{"id": 2}]}},
    {"body": {"foo": [{"id": 1}], "results": [{"id": 2}]}},
    {"body": {"foo": [{"id": 1}], "hits": [{"id": 2}]}},
    {"body": {"meta": {"n": 1}, "foo": [{"id": 1}]}},
    {"body": {"response": {"data": [{"id": 1}]}}},
    {"body": {"a": {"b": {"c": [{"id": 1}]}}}},
    {"body": {"a": {"b": {"c": {"d": [{"id": 1}]}}}}},
    {"body": {"data": {"id": 1}}},
    {"body": {"id": 1, "name": "x"}},
    {"body": {"id": 1, "tags": ["a"]}},
    {"body": {"data": [{"id": 1}], "next": "/x?page=2"}},
    {"body": {"data": [{"id": 1}], "links": {"next": "/x?page=2"}}},
    {"body": {"data": [{"id": 1}], "_links": {"next": {"href": "/x?page=2"}}}},
    {"body": {"data": [{"id": 1}], "next": "abc"}},
    {"body": {"data": [{"id": 1}], "next": None}},
    {"body": {"data": [{"id": 1}], "next_cursor": "abc"}},
    {"body": {"data": [{"id": 1}], "nextPageToken": "abc"}},
    {"body": {"data": [{"id": 1}], "cursors": {"next": "abc"}}},
    {"body": {"data": [{"id": 1}], "next_page": 2}},
    {"body": {"data": [{"id": 1}], "after": "abc"}},
    {"body": {"data": [{"id": 1}], "cursor": "abc"}},
    {"body": {"data": [{"id": 1}], "total_pages": 3}},
    {"body": {"data": [{"id": 1}], "totalPages": 3}},
    {"body": {"data": [{"id": 1}], "meta": {"pages": 3}}},
    {"body": {"data": [{"id": 1}], "page_count": 3}},
    {"body": {"data": [{"id": 1}], "total": 3, "offset": 0, "limit": 1}},
    {"body": {"data": [{"id": 1}], "has_more": True}},
    {"body": {"data": [{"id": 1}], "total_pages": 3, "next": "/x?page=2"}},
    {"body": {"data": [{"id": 1}]}, "headers": {"Link": '</x?page=2>; rel="next"'}},
    {"body": {"data": [], "total": 5}},
    {"body": None},
]

#: name -> (route of the tests' server, the client's paginator)
PAGINATOR_CASES: dict[str, tuple[str, Any]] = {
    "page_number_base0": (
        "page_number/posts",
        {"type": "page_number", "total_path": "total_pages"},
    ),
    "page_number_base1": (
        "page_number/posts",
        {"type": "page_number", "base_page": 1, "total_path": "total_pages"},
    ),
    "page_number_no_total": (
        "page_number/posts",
        {"type": "page_number", "base_page": 1, "total_path": None},
    ),
    "page_number_maximum": (
        "page_number/posts",
        {"type": "page_number", "base_page": 1, "total_path": None, "maximum_page": 3},
    ),
    "offset": ("offset/posts", {"type": "offset", "limit": 3}),
    "offset_no_total": ("offset/posts", {"type": "offset", "limit": 4, "total_path": None}),
    "offset_maximum": (
        "offset/posts",
        {"type": "offset", "limit": 4, "total_path": None, "maximum_offset": 5},
    ),
    "cursor": (
        "cursor/posts",
        {"type": "cursor", "cursor_path": "cursors.next", "cursor_param": "cursor"},
    ),
    "cursor_by_name": ("cursor/posts", "cursor"),
    "json_link": ("json_link/posts", {"type": "json_link", "next_url_path": "next"}),
    "json_link_by_name": ("json_link/posts", "json_link"),
    "header_link": ("header_link/posts", "header_link"),
    "single_page": ("page_number/posts", "single_page"),
    "auto_page_number": ("page_number/posts", "auto"),
    "auto_header_link": ("header_link/posts", "auto"),
    "auto_json_link": ("json_link/posts", None),
    "auto_cursor": ("cursor/posts", None),
    "auto_offset_is_one_page": ("offset/posts", None),
}


def BLOG_CONFIG(url: str) -> dict[str, Any]:
    """Posts (paged), their comments and their details: a parent with two children."""
    return {
        "client": {
            "base_url": url,
            "paginator": {"type": "page_number", "base_page": 1, "total_path": "total_pages"},
        },
        "resource_defaults": {
            "primary_key": "id",
            "write_disposition": "merge",
            "endpoint": {"params": {"per_page": 3}},
        },
        "resources": [
            {"name": "posts", "endpoint": {"path": "page_number/posts"}},
            {
                "name": "comments",
                "endpoint": {
                    "path": "posts/{resources.posts.id}/comments",
                    "paginator": "single_page",
                },
                "include_from_parent": ["title", "updated_at"],
                "write_disposition": "append",
            },
            {
                "name": "post_detail",
                "endpoint": {
                    "path": "posts/{post_id}",
                    "params": {"post_id": {"type": "resolve", "resource": "posts", "field": "id"}},
                    "data_selector": "post",
                    "paginator": "single_page",
                },
                "include_from_parent": ["title"],
            },
        ],
    }


def blog_steps(config: dict[str, Any]) -> dict[str, Any]:
    """The posts keep ids 1..4 and get upper-case titles (steps are code, not JSON)."""
    config["resources"][0]["processing_steps"] = [
        {"filter": lambda post: post["id"] <= 4},
        {"map": lambda post: {**post, "title": post["title"].upper()}},
    ]
    return config


def events_config(url: str) -> dict[str, Any]:
    """Events since the cursor's start value, two per page."""
    return {
        "client": {"base_url": url},
        "resources": [
            {
                "name": "events",
                "primary_key": "id",
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
                    },
                },
            }
        ],
    }


def boards_config(url: str, incremental: bool, parallelized: bool = False) -> dict[str, Any]:
    """Boards (two per page, changed ``since`` the cursor when ``incremental``), each with its
    cards and members: a parent read once for two children."""
    params: dict[str, Any] = {}
    if incremental:
        params["since"] = {
            "type": "incremental",
            "cursor_path": "updated_at",
            "initial_value": "2024-03-01T00:00:00Z",
        }
    child = {"paginator": "single_page"}
    return {
        "client": {"base_url": url},
        "resources": [
            {
                "name": "boards",
                "primary_key": "id",
                "endpoint": {
                    "path": "boards",
                    "params": params,
                    "data_selector": "data",
                    "paginator": {
                        "type": "page_number",
                        "base_page": 1,
                        "total_path": "total_pages",
                    },
                },
            },
            {
                "name": "cards",
                "parallelized": parallelized,
                "endpoint": {"path": "boards/{resources.boards.id}/cards", **child},
                "include_from_parent": ["id"],
            },
            {
                "name": "members",
                "parallelized": parallelized,
                "endpoint": {"path": "boards/{resources.boards.id}/members", **child},
            },
        ],
    }
