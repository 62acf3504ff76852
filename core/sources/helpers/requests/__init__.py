"""``from loadstone.sources.helpers import requests``: dlt's drop-in for ``requests``.

``requests.get(url)`` (and ``post``, ``put``, ``patch``, ``delete``, ``head``, ``options``,
``request``) go through one shared :class:`Client` that retries a busy or unreachable server
and raises ``requests.HTTPError`` for an error status; ``Session`` and ``Client`` make one's
own. The exception and model classes are ``requests``' own, so ``except
requests.HTTPError`` catches what plain ``requests`` raises too. Needs the ``rest_api`` extra.
"""

from __future__ import annotations

from typing import Any

from requests import (
    ConnectionError,  # shadows the builtin on purpose: requests' name, as dlt's helper has it
    ConnectTimeout,
    FileModeWarning,
    HTTPError,
    ReadTimeout,
    Request,
    RequestException,
    Response,
    Timeout,
    TooManyRedirects,
    URLRequired,
)
from requests.exceptions import ChunkedEncodingError, RetryError

from loadstone.sources.helpers.requests.client import Client, Session

__all__ = [
    "ChunkedEncodingError",
    "Client",
    "ConnectTimeout",
    "ConnectionError",
    "FileModeWarning",
    "HTTPError",
    "ReadTimeout",
    "Request",
    "RequestException",
    "Response",
    "RetryError",
    "Session",
    "Timeout",
    "TooManyRedirects",
    "URLRequired",
    "client",
    "delete",
    "get",
    "head",
    "options",
    "patch",
    "post",
    "put",
    "request",
]

#: the shared client of the module's functions (settings are read when it is made, at import)
client = Client()


def request(method: str, url: str, *args: Any, **kwargs: Any) -> Response:
    return client.request(method, url, *args, **kwargs)


def get(url: str, *args: Any, **kwargs: Any) -> Response:
    return client.get(url, *args, **kwargs)


def post(url: str, *args: Any, **kwargs: Any) -> Response:
    return client.post(url, *args, **kwargs)


def put(url: str, *args: Any, **kwargs: Any) -> Response:
    return client.put(url, *args, **kwargs)


def patch(url: str, *args: Any, **kwargs: Any) -> Response:
    return client.patch(url, *args, **kwargs)


def delete(url: str, *args: Any, **kwargs: Any) -> Response:
    return client.delete(url, *args, **kwargs)


def head(url: str, *args: Any, **kwargs: Any) -> Response:
    return client.head(url, *args, **kwargs)


def options(url: str, *args: Any, **kwargs: Any) -> Response:
    return client.options(url, *args, **kwargs)
