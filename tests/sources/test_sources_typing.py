"""The built-in sources' typed surface: dlt's TypedDict names where dlt exports them, and the
config checks that read their keys from those TypedDicts."""

from __future__ import annotations

import typing

import pytest

import loadstone.sources.rest_api as rest_api
from loadstone.sources.rest_api import config_setup
from loadstone.sources.rest_api import typing as t

#: the TypedDicts (and unions of them) ``dlt.sources.rest_api`` exports in dlt 1.31
DLT_REST_API_TYPES = (
    "AuthConfig",
    "ClientConfig",
    "Endpoint",
    "EndpointResource",
    "EndpointResourceBase",
    "IncrementalParamConfig",
    "ProcessingSteps",
    "RESTAPIConfig",
    "ResolveParamConfig",
)


@pytest.mark.parametrize("name", DLT_REST_API_TYPES)
def test_rest_api_exports_dlts_config_types_under_dlts_names(name: str) -> None:
    assert name in rest_api.__all__
    assert getattr(rest_api, name) is getattr(t, name)


def test_the_config_dicts_are_typed_dicts() -> None:
    for name in DLT_REST_API_TYPES:
        value = getattr(t, name)
        members = typing.get_args(value) or (value,)
        assert any(typing.is_typeddict(m) for m in members), name


def test_paginator_and_auth_options_are_the_keys_of_their_config_dicts() -> None:
    """The options each ``type`` takes (what a config is checked against) are unchanged."""
    assert config_setup.PAGINATOR_KEYS == {
        "json_link": {"next_url_path"},
        "json_response": {"next_url_path"},
        "header_link": {"links_next_key"},
        "header_cursor": {"cursor_key", "cursor_param"},
        "offset": {
            "limit",
            "offset",
            "offset_param",
            "limit_param",
            "offset_body_path",
            "limit_body_path",
            "total_path",
            "maximum_offset",
            "stop_after_empty_page",
            "has_more_path",
        },
        "page_number": {
            "base_page",
            "page",
            "page_param",
            "page_body_path",
            "total_path",
            "maximum_page",
            "stop_after_empty_page",
            "has_more_path",
        },
        "cursor": {
            "cursor_path",
            "cursor_param",
            "cursor_body_path",
            "stop_after_empty_page",
            "has_more_path",
        },
        "single_page": set(),
        "auto": set(),
    }
    assert config_setup.AUTH_KEYS == {
        "bearer": {"token"},
        "api_key": {"name", "api_key", "location"},
        "http_basic": {"username", "password"},
        "oauth2_client_credentials": {
            "access_token_url",
            "client_id",
            "client_secret",
            "access_token_request_data",
            "default_token_expiration",
            "session",
            "access_token",
        },
    }


def test_an_unknown_paginator_option_is_refused_naming_it() -> None:
    with pytest.raises(TypeError, match="unknown option 'page_size'"):
        config_setup.make_paginator({"type": "offset", "limit": 10, "page_size": 5}, "client")  # type: ignore[arg-type]  # the mistake under test
