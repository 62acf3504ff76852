"""The shape of a ``rest_api`` config, as dlt's TypedDicts (``RESTAPIConfig`` and its parts).

The keys listed here are the ones loadstone honours; :mod:`.config_setup` refuses any other
key with a ``TypeError`` naming it, so nothing in a ported config is silently ignored.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypedDict

from requests import Session
from requests.auth import AuthBase

from loadstone.sources.helpers.rest_client.paginators import BasePaginator

PaginatorType = Literal[
    "json_link",
    "json_response",
    "header_link",
    "auto",
    "single_page",
    "cursor",
    "offset",
    "page_number",
]
AuthType = Literal["bearer", "api_key", "http_basic", "oauth2_client_credentials"]


class PaginatorConfig(TypedDict, total=False):
    type: PaginatorType
    next_url_path: str
    links_next_key: str
    limit: int
    offset: int
    offset_param: str
    limit_param: str
    total_path: str | None
    maximum_offset: int
    base_page: int
    page: int
    page_param: str
    maximum_page: int
    stop_after_empty_page: bool
    has_more_path: str
    cursor_path: str
    cursor_param: str
    cursor_body_path: str


class AuthConfig(TypedDict, total=False):
    type: AuthType
    token: str
    name: str
    api_key: str
    location: Literal["header", "query", "param", "cookie"]
    username: str
    password: str
    access_token_url: str
    client_id: str
    client_secret: str
    access_token_request_data: dict[str, Any]
    default_token_expiration: int


class ClientConfig(TypedDict, total=False):
    base_url: str
    headers: dict[str, str]
    auth: AuthConfig | AuthBase | str | None
    paginator: PaginatorConfig | BasePaginator | PaginatorType | None
    session: Session


class ResolveParamConfig(TypedDict, total=False):
    type: Literal["resolve"]
    resource: str
    field: str


class IncrementalArgs(TypedDict, total=False):
    cursor_path: str
    initial_value: Any
    end_value: Any
    last_value_func: Callable[..., Any]
    row_order: Literal["asc", "desc"]
    on_cursor_value_missing: Literal["raise", "include", "exclude"]
    range_start: Literal["open", "closed"]
    range_end: Literal["open", "closed"]
    primary_key: Any
    convert: Callable[[Any], Any]


class IncrementalConfig(IncrementalArgs, total=False):
    start_param: str
    end_param: str


class IncrementalParamConfig(IncrementalArgs, total=False):
    type: Literal["incremental"]


#: a response action: ``{"status_code": 404, "action": "ignore"}``, ``{"content": "text",
#: "action": hook}``, or a bare hook for every response
ResponseAction = dict[str, Any] | Callable[..., Any]


class Endpoint(TypedDict, total=False):
    path: str
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"]
    params: dict[str, Any]
    json: dict[str, Any]
    data: Any
    headers: dict[str, str]
    paginator: PaginatorConfig | BasePaginator | PaginatorType | None
    data_selector: str
    response_actions: list[ResponseAction]
    incremental: IncrementalConfig
    auth: AuthConfig | AuthBase | None


class ProcessingStep(TypedDict, total=False):
    filter: Callable[[Any], bool]
    map: Callable[[Any], Any]


class EndpointResourceBase(TypedDict, total=False):
    endpoint: str | Endpoint
    write_disposition: Any
    primary_key: Any
    merge_key: Any
    columns: Any
    table_name: str
    max_table_nesting: int
    schema_contract: Any
    table_format: str
    file_format: str
    selected: bool
    parallelized: bool
    include_from_parent: list[str]
    processing_steps: list[ProcessingStep]


class EndpointResource(EndpointResourceBase, total=False):
    name: str


class RESTAPIConfig(TypedDict, total=False):
    client: ClientConfig
    resource_defaults: EndpointResourceBase
    resources: list[str | EndpointResource]
