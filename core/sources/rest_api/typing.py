"""The shape of a ``rest_api`` config, as dlt's TypedDicts (``RESTAPIConfig`` and its parts).

The keys listed here are dlt 1.31's (but ``parent_table_name``, which dlt's rest_api refuses
with a ``TypeError`` too); :mod:`.config_setup` refuses any other key with a ``TypeError``
naming it, so nothing in a ported config is silently ignored (the
paginator and auth configs list the keys each ``type`` takes, which is what is checked).
Values that only pass through to the API or to the user's functions (query parameters, JSON
bodies, cursor values) are the user's data: :data:`~loadstone.typing.TDataItem`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Literal, TypedDict, Union

from requests import Session
from requests.auth import AuthBase

from loadstone.extract.resource import Resource
from loadstone.sources.helpers.rest_client.client import ResponseHook
from loadstone.sources.helpers.rest_client.paginators import BasePaginator
from loadstone.typing import (
    TAnySchemaColumns,
    TColumnNames,
    TDataItem,
    TLoaderFileFormat,
    TSchemaContract,
    TTableFormat,
    TTableHintTemplate,
    TWriteDispositionConfig,
)

PaginatorType = Literal[
    "json_link",
    "json_response",
    "header_link",
    "header_cursor",
    "auto",
    "single_page",
    "cursor",
    "offset",
    "page_number",
]
AuthType = Literal["bearer", "api_key", "http_basic", "oauth2_client_credentials"]
TApiKeyLocation = Literal["header", "query", "param", "cookie"]
HTTPMethod = Literal["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"]


class PaginatorTypeConfig(TypedDict):
    """``{"type": "single_page"}``: a paginator named by its type, with no options."""

    type: PaginatorType


class _Stopping(PaginatorTypeConfig, total=False):
    total_path: str | None
    stop_after_empty_page: bool
    has_more_path: str


class PageNumberPaginatorConfig(_Stopping, total=False):
    base_page: int
    page: int
    page_param: str
    page_body_path: str
    maximum_page: int


class OffsetPaginatorConfig(_Stopping, total=False):
    limit: int
    offset: int
    offset_param: str
    limit_param: str
    offset_body_path: str
    limit_body_path: str
    maximum_offset: int


class HeaderLinkPaginatorConfig(PaginatorTypeConfig, total=False):
    links_next_key: str


class JSONLinkPaginatorConfig(PaginatorTypeConfig, total=False):
    next_url_path: str


class HeaderCursorPaginatorConfig(PaginatorTypeConfig, total=False):
    cursor_key: str
    cursor_param: str


class JSONResponseCursorPaginatorConfig(PaginatorTypeConfig, total=False):
    cursor_path: str
    cursor_param: str
    cursor_body_path: str
    stop_after_empty_page: bool
    has_more_path: str


#: a paginator: its type's name, a dict with ``type`` and the type's options, or an instance
PaginatorConfig = Union[  # noqa: UP007 (evaluated at import: Python 3.10 has no `|` on these)
    PaginatorType,
    PaginatorTypeConfig,
    PageNumberPaginatorConfig,
    OffsetPaginatorConfig,
    HeaderLinkPaginatorConfig,
    JSONLinkPaginatorConfig,
    JSONResponseCursorPaginatorConfig,
    HeaderCursorPaginatorConfig,
    BasePaginator,
]


class AuthTypeConfig(TypedDict):
    type: AuthType


class BearerTokenAuthConfig(TypedDict, total=False):
    """``{"token": ...}`` (``type`` may be left out: ``bearer`` is the default)."""

    type: AuthType
    token: str


class ApiKeyAuthConfig(AuthTypeConfig, total=False):
    name: str
    api_key: str
    location: TApiKeyLocation


class HttpBasicAuthConfig(AuthTypeConfig, total=False):
    username: str
    password: str


class OAuth2ClientCredentialsConfig(AuthTypeConfig, total=False):
    access_token_url: str
    client_id: str
    client_secret: str
    access_token_request_data: dict[str, object]
    default_token_expiration: int
    session: Session
    #: taken and left unused: dlt 1.31 asks for a token first all the same
    access_token: str


#: an auth: a dict with ``type`` and the type's options, or a ``requests`` auth instance
AuthConfig = Union[  # noqa: UP007 (evaluated at import: Python 3.10 has no `|` on these)
    BearerTokenAuthConfig,
    ApiKeyAuthConfig,
    HttpBasicAuthConfig,
    OAuth2ClientCredentialsConfig,
    AuthBase,
]


class ClientConfig(TypedDict, total=False):
    base_url: str
    headers: dict[str, str]
    #: a dict, an instance, or a type's name (its fields from configuration)
    auth: AuthConfig | AuthType | None
    paginator: PaginatorConfig | None
    session: Session


class ResolveParamConfig(TypedDict, total=False):
    type: Literal["resolve"]
    resource: str
    field: str


class IncrementalArgs(TypedDict, total=False):
    cursor_path: str
    initial_value: TDataItem
    end_value: TDataItem
    last_value_func: Callable[[Sequence[TDataItem]], TDataItem] | Literal["min", "max"]
    row_order: Literal["asc", "desc"]
    on_cursor_value_missing: Literal["raise", "include", "exclude"]
    range_start: Literal["open", "closed"]
    range_end: Literal["open", "closed"]
    primary_key: TColumnNames
    #: how far back each run starts again (seconds for dates, days for a date, else units)
    lag: float
    allow_external_schedulers: bool
    #: the cursor value as the API wants it in the query (a date as text...)
    convert: Callable[[TDataItem], TDataItem]


class IncrementalConfig(IncrementalArgs, total=False):
    start_param: str
    end_param: str


class IncrementalParamConfig(IncrementalArgs, total=False):
    type: Literal["incremental"]


class ResponseActionDict(TypedDict, total=False):
    """``{"status_code": 404, "action": "ignore"}``, ``{"content": "text", "action": hook}``."""

    status_code: int | str | list[int | str]
    content: str
    action: Literal["ignore"] | ResponseHook | list[ResponseHook]


#: a response action: a rule, or a bare hook for every response
ResponseAction = Union[ResponseActionDict, ResponseHook]  # noqa: UP007 (evaluated at import: Python 3.10 has no `|` on these)


class Endpoint(TypedDict, total=False):
    path: str
    method: HTTPMethod
    #: query parameters: the user's values, a resolve param or an incremental param
    params: dict[str, ResolveParamConfig | IncrementalParamConfig | TDataItem]
    json: dict[str, TDataItem]
    data: TDataItem
    headers: dict[str, str]
    paginator: PaginatorConfig | None
    data_selector: str
    response_actions: list[ResponseAction]
    incremental: IncrementalConfig
    auth: AuthConfig | AuthType | None


class ProcessingSteps(TypedDict, total=False):
    filter: Callable[[TDataItem], bool]
    map: Callable[[TDataItem], TDataItem]
    #: a function of one record yielding any number of records
    yield_map: Callable[[TDataItem], Iterator[TDataItem]]


#: loadstone's earlier name of :class:`ProcessingSteps`
ProcessingStep = ProcessingSteps


class ResourceHints(TypedDict, total=False):
    """The table hints a resource config takes (dlt's ``TResourceHintsBase``), passed on to
    ``loadstone.resource`` (which takes a function of the item for ``table_name`` only)."""

    write_disposition: TWriteDispositionConfig
    primary_key: TColumnNames
    merge_key: TColumnNames
    columns: TAnySchemaColumns
    table_name: TTableHintTemplate[str]
    max_table_nesting: int
    schema_contract: TSchemaContract
    table_format: TTableFormat
    file_format: TLoaderFileFormat
    references: object
    nested_hints: Mapping[str | tuple[str, ...], Mapping[str, object]]


class EndpointResourceBase(ResourceHints, total=False):
    endpoint: str | Endpoint
    selected: bool
    parallelized: bool
    include_from_parent: list[str]
    processing_steps: list[ProcessingSteps]


class EndpointResource(EndpointResourceBase, total=False):
    name: str


class RESTAPIConfig(TypedDict, total=False):
    client: ClientConfig
    resource_defaults: EndpointResourceBase
    #: a name, a resource's dict, or a resource of one's own (which may be a parent)
    resources: list[str | EndpointResource | Resource]
