"""Sending a request again when the server is busy or away, as dlt's HTTP client does.

A 429, a 5xx answer, a refused or dropped connection and a timeout are retried with
exponential backoff (``backoff_factor * 2 ** (attempt - 1)`` seconds, at most
``max_delay``; a ``Retry-After`` header in seconds wins). Every other 4xx is final at once.
When the attempts are used up the error is one line naming the method and URL, with secret
query values masked: never a token. The settings are dlt's, read through the one resolver::

    runtime.request_max_attempts (5), runtime.request_backoff_factor (1),
    runtime.request_max_retry_delay (300), runtime.request_timeout (60)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import attrs
import requests

from loadstone import config
from loadstone.exceptions.rest_client import HTTPStatusError, RequestFailed

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


@attrs.frozen
class RetryPolicy:
    """How often and how patiently a request is retried."""

    max_attempts: int = 5
    backoff_factor: float = 1.0
    max_delay: float = 300.0
    timeout: float = 60.0

    @classmethod
    def from_config(cls) -> RetryPolicy:
        """The ``runtime.request_*`` settings (env ``RUNTIME__REQUEST_MAX_ATTEMPTS`` ...)."""
        return cls(
            max_attempts=config.get_int("runtime.request_max_attempts", 5, minimum=1),
            backoff_factor=config.get_float("runtime.request_backoff_factor", 1.0, minimum=0),
            max_delay=config.get_float("runtime.request_max_retry_delay", 300.0, minimum=0),
            timeout=config.get_float("runtime.request_timeout", 60.0, minimum=0),
        )

    def delay(self, attempt: int, response: requests.Response | None) -> float:
        """Seconds to wait before attempt ``attempt + 1``."""
        after = response.headers.get("Retry-After") if response is not None else None
        if after is not None and after.strip().replace(".", "", 1).isdigit():
            return min(float(after), self.max_delay)
        return float(min(self.backoff_factor * 2 ** (attempt - 1), self.max_delay))


def masked_url(url: str, secret_params: Sequence[str] = (), secrets: Sequence[str] = ()) -> str:
    """``url`` with user info dropped and secret query values shown as ``***``."""
    parts = urlsplit(url)
    netloc = parts.netloc.rsplit("@", 1)[-1]
    query = [
        (k, "***" if k in secret_params or (v and v in secrets) else v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
    ]
    return urlunsplit((parts.scheme, netloc, parts.path, urlencode(query, safe="*,:"), ""))


def send(
    session: requests.Session,
    prepared: requests.PreparedRequest,
    policy: RetryPolicy,
    describe: Callable[[str], str],
    sleep: Callable[[float], None] = time.sleep,
    *,
    options: Mapping[str, Any] | None = None,
) -> requests.Response:
    """The response to ``prepared``, retried by ``policy``; ``describe(url)`` masks the URL;
    ``options`` are ``Session.send``'s (``timeout`` over the policy's, ``allow_redirects``,
    ``verify`` ...).

    A 4xx other than 429 is returned as it is: the caller decides (response actions may
    ignore a 404) and raises :class:`HTTPStatusError` itself.
    """
    attempt = 0
    while True:
        attempt += 1
        response: requests.Response | None = None
        try:
            response = session.send(prepared, **{"timeout": policy.timeout, **(options or {})})
        except (requests.ConnectionError, requests.Timeout) as error:
            if attempt >= policy.max_attempts:
                reason = _reason(error)
                raise RequestFailed(
                    f"{prepared.method} {describe(str(prepared.url))} failed after {attempt} "
                    f"attempt(s): {reason}"
                ) from None
        else:
            if response.status_code not in RETRY_STATUSES or attempt >= policy.max_attempts:
                return response
        sleep(policy.delay(attempt, response))


def raise_for_status(response: requests.Response, describe: Callable[[str], str]) -> None:
    """One line for an error status: code, reason, method and the masked URL."""
    if response.status_code < 400:
        return
    method = response.request.method if response.request is not None else "GET"
    error = HTTPStatusError(
        f"{response.status_code} {response.reason} for {method} {describe(str(response.url))}",
        response=response,
    )
    raise error


def _reason(error: Exception) -> str:
    """The root cause of a connection error in a few words (urllib3 nests it deeply)."""
    text = str(error)
    for marker in ("Connection refused", "Connection reset", "Remote end closed", "timed out"):
        if marker.lower() in text.lower():
            return marker.lower()
    if "Connection aborted" in text:
        return "connection aborted"
    return type(error).__name__
