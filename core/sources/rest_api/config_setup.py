"""A ``rest_api`` config checked and turned into objects: paginators, auth, incremental cursors.

Every dict of the config is checked against the keys of its TypedDict (:mod:`.typing`): an
unknown key or a paginator/auth type loadstone does not have raises ``TypeError`` naming it,
before any request. ``resource_defaults`` are merged under each resource here (the
``endpoint`` and its ``params``/``json``/``headers`` per key, the rest replaced), so the
resource builder sees one complete dict per resource.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from requests.auth import AuthBase

from loadstone.extract.incremental import Incremental
from loadstone.sources.helpers.rest_client import auth as auths
from loadstone.sources.helpers.rest_client import paginators as pg
from loadstone.sources.rest_api import typing as t

PAGINATORS: dict[str, type[pg.BasePaginator]] = {
    "json_link": pg.JSONLinkPaginator,
    "json_response": pg.JSONLinkPaginator,
    "header_link": pg.HeaderLinkPaginator,
    "offset": pg.OffsetPaginator,
    "page_number": pg.PageNumberPaginator,
    "cursor": pg.JSONResponseCursorPaginator,
    "single_page": pg.SinglePagePaginator,
}
AUTHS: dict[str, type[auths.AuthConfigBase]] = {
    "bearer": auths.BearerTokenAuth,
    "api_key": auths.APIKeyAuth,
    "http_basic": auths.HttpBasicAuth,
    "oauth2_client_credentials": auths.OAuth2ClientCredentials,
}
#: paginator keys each type takes (dlt's names)
PAGINATOR_KEYS: dict[str, frozenset[str]] = {
    "json_link": frozenset({"next_url_path"}),
    "json_response": frozenset({"next_url_path"}),
    "header_link": frozenset({"links_next_key"}),
    "offset": frozenset(
        {"limit", "offset", "offset_param", "limit_param", "total_path", "maximum_offset"}
        | {"stop_after_empty_page", "has_more_path"}
    ),
    "page_number": frozenset(
        {"base_page", "page", "page_param", "total_path", "maximum_page"}
        | {"stop_after_empty_page", "has_more_path"}
    ),
    "cursor": frozenset({"cursor_path", "cursor_param", "cursor_body_path"}),
    "single_page": frozenset(),
    "auto": frozenset(),
}
AUTH_KEYS: dict[str, frozenset[str]] = {
    "bearer": frozenset({"token"}),
    "api_key": frozenset({"name", "api_key", "location"}),
    "http_basic": frozenset({"username", "password"}),
    "oauth2_client_credentials": frozenset(
        {"access_token_url", "client_id", "client_secret", "access_token_request_data"}
        | {"default_token_expiration"}
    ),
}
INCREMENTAL_ARGS = frozenset(t.IncrementalArgs.__optional_keys__) - {"convert"}
MERGED_ENDPOINT_KEYS = ("params", "json", "headers")


def known_keys(where: str, given: Mapping[str, Any], allowed: frozenset[str] | set[str]) -> None:
    """``TypeError`` naming the first key of ``given`` loadstone does not support."""
    unknown = sorted(set(given) - set(allowed))
    if unknown:
        raise TypeError(
            f"rest_api {where}: option {unknown[0]!r} is not supported by loadstone "
            f"(supported: {', '.join(sorted(allowed))})"
        )


def keys_of(typed_dict: Any) -> frozenset[str]:
    return frozenset(typed_dict.__required_keys__ | typed_dict.__optional_keys__)


def check_config(config: Mapping[str, Any]) -> None:
    """The top level and the client; resources are checked as they are built."""
    if not isinstance(config, Mapping):
        raise TypeError(
            f"rest_api config must be a dict (RESTAPIConfig), got {type(config).__name__}"
        )
    known_keys("config", config, keys_of(t.RESTAPIConfig))
    client = config.get("client")
    if not isinstance(client, Mapping) or not client.get("base_url"):
        raise TypeError("rest_api config needs client={'base_url': ...}")
    known_keys("client", client, keys_of(t.ClientConfig))


def merged_resource(
    resource: str | Mapping[str, Any], defaults: Mapping[str, Any]
) -> dict[str, Any]:
    """One resource's complete dict: a name becomes ``{"name": n, "endpoint": {"path": n}}``."""
    known_keys("resource_defaults", defaults, keys_of(t.EndpointResourceBase))
    own: dict[str, Any] = {"name": resource} if isinstance(resource, str) else dict(resource)
    known_keys(f"resource {own.get('name')!r}", own, keys_of(t.EndpointResource))
    if not own.get("name"):
        raise TypeError(f"rest_api resource needs a 'name': {resource!r}")
    endpoint = _endpoint_dict(own.get("endpoint"), own["name"])
    default_endpoint = _endpoint_dict(defaults.get("endpoint"), None)
    for key in MERGED_ENDPOINT_KEYS:
        if key in default_endpoint and key in endpoint:
            endpoint[key] = {**default_endpoint[key], **endpoint[key]}
    merged = {**defaults, **own, "endpoint": {**default_endpoint, **endpoint}}
    known_keys(f"resource {own['name']!r} endpoint", merged["endpoint"], keys_of(t.Endpoint))
    return merged


def _endpoint_dict(endpoint: Any, name: str | None) -> dict[str, Any]:
    if endpoint is None:
        return {"path": name} if name is not None else {}
    if isinstance(endpoint, str):
        return {"path": endpoint}
    return dict(endpoint)


def make_paginator(value: Any, where: str) -> pg.BasePaginator | None:
    """A paginator instance, a name (``"offset"``) or a dict with ``type``; None: detect."""
    if value is None or isinstance(value, pg.BasePaginator):
        return value
    if isinstance(value, str):
        value = {"type": value}
    if not isinstance(value, Mapping):
        raise TypeError(f"rest_api {where}: paginator must be a name, a dict or a paginator")
    options = dict(value)
    kind = options.pop("type", None)
    if kind not in PAGINATOR_KEYS:
        raise TypeError(
            f"rest_api {where}: paginator type {kind!r} is not supported by loadstone "
            f"(supported: {', '.join(PAGINATOR_KEYS)})"
        )
    known_keys(f"{where} paginator {kind!r}", options, PAGINATOR_KEYS[kind])
    if kind == "auto":
        return None
    return PAGINATORS[kind](**options)


def make_auth(value: Any, where: str) -> AuthBase | None:
    """An auth instance, or a dict with ``type`` (``bearer`` when only a ``token`` is given)."""
    if value is None or isinstance(value, AuthBase):
        return value
    if not isinstance(value, Mapping):
        raise TypeError(f"rest_api {where}: auth must be a dict or an auth instance")
    options = dict(value)
    kind = options.pop("type", "bearer" if "token" in options else None)
    if kind not in AUTH_KEYS:
        raise TypeError(
            f"rest_api {where}: auth type {kind!r} is not supported by loadstone "
            f"(supported: {', '.join(AUTH_KEYS)})"
        )
    known_keys(f"{where} auth {kind!r}", options, AUTH_KEYS[kind])
    made: AuthBase = AUTHS[kind](**options)
    return made


def make_incremental(
    value: Mapping[str, Any], where: str
) -> tuple[Incremental, Callable[[Any], Any] | None]:
    """An ``Incremental`` from an incremental dict (its ``convert`` apart)."""
    options = {k: v for k, v in value.items() if k not in ("type", "start_param", "end_param")}
    convert = options.pop("convert", None)
    known_keys(f"{where} incremental", options, INCREMENTAL_ARGS)
    return Incremental(**options), convert
