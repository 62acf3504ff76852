"""A ``rest_api`` config checked and turned into objects: paginators, auth, incremental cursors.

Every dict of the config is checked against the keys of its TypedDict (:mod:`.typing`): an
unknown key or paginator/auth type (each one dlt 1.31 refuses too) raises ``TypeError`` naming
it, before any request. ``resource_defaults`` are merged under each resource here (the
``endpoint`` and its ``params``/``json``/``headers`` per key, the rest replaced), so the
resource builder sees one complete dict per resource.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from requests.auth import AuthBase

from loadstone.extract.incremental import Incremental
from loadstone.sources.helpers.rest_client import auth as auths
from loadstone.sources.helpers.rest_client import paginators as pg
from loadstone.sources.rest_api import typing as t
from loadstone.sources.rest_api.credentials import Scope, configured_auth
from loadstone.typing import TDataItem

#: the options of a class chosen by the config's ``type``, as its keyword arguments: each
#: value has the type that class's parameter takes
KwArgs = dict[str, Any]


class TypedDictClass(Protocol):
    """A ``TypedDict`` class: its keys are what a config dict of that kind may hold."""

    __required_keys__: frozenset[str]
    __optional_keys__: frozenset[str]


def keys_of(typed_dict: TypedDictClass) -> frozenset[str]:
    return frozenset(typed_dict.__required_keys__ | typed_dict.__optional_keys__)


def _options(typed_dict: TypedDictClass) -> frozenset[str]:
    """The options of a paginator or auth config: its keys but ``type``."""
    return keys_of(typed_dict) - {"type"}


PAGINATORS: dict[str, type[pg.BasePaginator]] = {
    "json_link": pg.JSONLinkPaginator,
    "json_response": pg.JSONLinkPaginator,
    "header_link": pg.HeaderLinkPaginator,
    "header_cursor": pg.HeaderCursorPaginator,
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
#: paginator keys each type takes (dlt's names), from the type's config dict
PAGINATOR_KEYS: dict[str, frozenset[str]] = {
    "json_link": _options(t.JSONLinkPaginatorConfig),
    "json_response": _options(t.JSONLinkPaginatorConfig),
    "header_link": _options(t.HeaderLinkPaginatorConfig),
    "header_cursor": _options(t.HeaderCursorPaginatorConfig),
    "offset": _options(t.OffsetPaginatorConfig),
    "page_number": _options(t.PageNumberPaginatorConfig),
    "cursor": _options(t.JSONResponseCursorPaginatorConfig),
    "single_page": _options(t.PaginatorTypeConfig),
    "auto": _options(t.PaginatorTypeConfig),
}
AUTH_KEYS: dict[str, frozenset[str]] = {
    "bearer": _options(t.BearerTokenAuthConfig),
    "api_key": _options(t.ApiKeyAuthConfig),
    "http_basic": _options(t.HttpBasicAuthConfig),
    "oauth2_client_credentials": _options(t.OAuth2ClientCredentialsConfig),
}
INCREMENTAL_ARGS = frozenset(t.IncrementalArgs.__optional_keys__) - {"convert"}


def known_keys(where: str, given: Mapping[str, object], allowed: frozenset[str] | set[str]) -> None:
    """``TypeError`` naming the first key of ``given`` loadstone does not support."""
    unknown = sorted(set(given) - set(allowed))
    if unknown:
        raise TypeError(
            f"rest_api {where}: unknown option {unknown[0]!r}, which dlt 1.31 refuses too "
            f"(known: {', '.join(sorted(allowed))})"
        )


def check_config(config: t.RESTAPIConfig) -> None:
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
    resource: str | t.EndpointResource, defaults: t.EndpointResourceBase
) -> t.EndpointResource:
    """One resource's complete dict: a name becomes ``{"name": n, "endpoint": {"path": n}}``."""
    known_keys("resource_defaults", defaults, keys_of(t.EndpointResourceBase))
    own = (
        t.EndpointResource(name=resource)
        if isinstance(resource, str)
        else t.EndpointResource(**resource)
    )
    if "parent_table_name" in own or "parent_table_name" in defaults:
        raise TypeError(
            f"rest_api resource {own.get('name')!r}: parent_table_name is refused, as dlt 1.31 "
            "refuses it here (its resource() takes no parent_table_name): set it with "
            "apply_hints on the resource"
        )
    known_keys(f"resource {own.get('name')!r}", own, keys_of(t.EndpointResource))
    name = own.get("name")
    if not name:
        raise TypeError(f"rest_api resource needs a 'name': {resource!r}")
    endpoint = _merged_endpoint(
        _endpoint_dict(defaults.get("endpoint"), None), _endpoint_dict(own.get("endpoint"), name)
    )
    known_keys(f"resource {name!r} endpoint", endpoint, keys_of(t.Endpoint))
    merged: t.EndpointResource = {**defaults, **own, "endpoint": endpoint}
    return merged


def _merged_endpoint(default: t.Endpoint, own: t.Endpoint) -> t.Endpoint:
    """``own`` over ``default``; ``params``, ``json`` and ``headers`` merged key by key."""
    merged: t.Endpoint = {**default, **own}
    if "params" in default and "params" in own:
        merged["params"] = {**default["params"], **own["params"]}
    if "json" in default and "json" in own:
        merged["json"] = {**default["json"], **own["json"]}
    if "headers" in default and "headers" in own:
        merged["headers"] = {**default["headers"], **own["headers"]}
    return merged


def _endpoint_dict(endpoint: str | t.Endpoint | None, name: str | None) -> t.Endpoint:
    if endpoint is None:
        return t.Endpoint(path=name) if name is not None else t.Endpoint()
    if isinstance(endpoint, str):
        return t.Endpoint(path=endpoint)
    return t.Endpoint(**endpoint)


def make_paginator(value: t.PaginatorConfig | None, where: str) -> pg.BasePaginator | None:
    """A paginator instance, a name (``"offset"``) or a dict with ``type``; None: detect."""
    if value is None or isinstance(value, pg.BasePaginator):
        return value
    if not isinstance(value, (str, Mapping)):
        raise TypeError(f"rest_api {where}: paginator must be a name, a dict or a paginator")
    options: KwArgs = {"type": value} if isinstance(value, str) else dict(value)
    kind = options.pop("type", None)
    if kind not in PAGINATOR_KEYS:
        raise TypeError(
            f"rest_api {where}: unknown paginator type {kind!r}, which dlt 1.31 refuses too "
            f"(known: {', '.join(PAGINATOR_KEYS)})"
        )
    known_keys(f"{where} paginator {kind!r}", options, PAGINATOR_KEYS[kind])
    if kind == "auto":
        return None
    return PAGINATORS[kind](**options)


def make_auth(
    value: t.AuthConfig | t.AuthType | None, where: str, scope: Scope | None = None
) -> AuthBase | None:
    """An auth instance, a dict with ``type`` (``bearer`` when only a ``token`` is given), or
    a type's name alone, its fields read from configuration (:mod:`.credentials`)."""
    if value is None or isinstance(value, AuthBase):
        return value
    if isinstance(value, str) and value in AUTH_KEYS:
        return AUTHS[value](**configured_auth(value, scope or Scope()))
    if not isinstance(value, Mapping):
        raise TypeError(
            f"rest_api {where}: auth must be a dict, an auth instance or one of "
            f"{', '.join(AUTH_KEYS)}"
        )
    options: KwArgs = dict(value)
    kind = options.pop("type", "bearer" if "token" in options else None)
    if kind not in AUTH_KEYS:
        raise TypeError(
            f"rest_api {where}: unknown auth type {kind!r}, which dlt 1.31 refuses too "
            f"(known: {', '.join(AUTH_KEYS)})"
        )
    known_keys(f"{where} auth {kind!r}", options, AUTH_KEYS[kind])
    if kind == "oauth2_client_credentials":  # dlt fetches a token even when one is given
        options.pop("access_token", None)
    made: AuthBase = AUTHS[kind](**options)
    return made


#: a placeholder in the path's last segment (``users/{resources.users.id}``, ``{id}.json``)
_LAST_SEGMENT_PLACEHOLDER = re.compile(r"\{[^{}/]+\}[^{}/]*/?$")


def single_entity_path(path: str) -> bool:
    """Whether ``path`` names one object, as dlt 1.31 tells it: its last segment (before any
    query) holds a placeholder. dlt then reads the whole body as the one record on a single
    page, unless the endpoint names its ``data_selector`` / ``paginator``."""
    return bool(_LAST_SEGMENT_PLACEHOLDER.search(path.split("?", 1)[0]))


def make_incremental(
    value: t.IncrementalConfig | t.IncrementalParamConfig, where: str
) -> tuple[Incremental, Callable[[TDataItem], TDataItem] | None]:
    """An ``Incremental`` from an incremental dict (its ``convert`` apart)."""
    options: KwArgs = {
        k: v for k, v in value.items() if k not in ("type", "start_param", "end_param")
    }
    convert = options.pop("convert", None)
    known_keys(f"{where} incremental", options, INCREMENTAL_ARGS)
    return Incremental(**options), convert
