"""``loadstone.sources.helpers.rest_client``: dlt's REST client for hand-written resources.

``RESTClient(base_url, headers=, auth=, paginator=, data_selector=)`` and its
``paginate(path, ...)`` (or the module's ``paginate(url, ...)``) yield the records of an
endpoint page by page; paginators are in ``.paginators``, auth in ``.auth``; retries and
their settings in ``.retries``. The ``rest_api`` source is built on it.
"""

from __future__ import annotations

from loadstone.exceptions import IgnoreResponseException, RESTClientError
from loadstone.sources.helpers.rest_client.auth import AuthConfigBase
from loadstone.sources.helpers.rest_client.client import (
    Hooks,
    PageData,
    RESTClient,
    paginate,
)
from loadstone.sources.helpers.rest_client.paginators import BasePaginator
from loadstone.sources.helpers.rest_client.retries import (
    HTTPStatusError,
    RequestFailed,
)

__all__ = [
    "AuthConfigBase",
    "BasePaginator",
    "HTTPStatusError",
    "Hooks",
    "IgnoreResponseException",
    "PageData",
    "RESTClient",
    "RESTClientError",
    "RequestFailed",
    "paginate",
]
