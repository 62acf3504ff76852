"""Errors of the REST client that are also ``requests``' own errors.

dlt code catches ``requests.ConnectionError`` and ``requests.HTTPError``, so these subclass
them. They live in a module of their own, not in :mod:`loadstone.exceptions.sources`, so that
``import loadstone`` does not import ``requests`` (a tenth of a second, and an optional extra):
``loadstone.exceptions`` finds them here on first use.
"""

from __future__ import annotations

import requests

from loadstone.exceptions.sources import RESTClientError

__all__ = ["HTTPStatusError", "RequestFailed"]


class RequestFailed(RESTClientError, requests.ConnectionError):
    """The server could not be reached (or kept failing) after every attempt.

    Also a ``requests.ConnectionError``, so dlt code catching that keeps working."""


class HTTPStatusError(RESTClientError, requests.HTTPError):
    """The server answered with an error status (after retries for 429/5xx).

    Also a ``requests.HTTPError`` (``.response`` is the answer), as dlt raises."""
