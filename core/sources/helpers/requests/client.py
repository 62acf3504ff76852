"""dlt's ``requests`` helper: a ``requests.Session`` that retries and raises for status.

``Session`` adds a default timeout and ``raise_for_status`` to every response; ``Client``
owns one such session and sends each request again on a retryable status (429 and 5xx), a
refused or dropped connection, a timeout or the user's ``retry_condition``, with exponential
backoff (``request_backoff_factor * 2 ** (attempt - 1)`` seconds, at most
``request_max_retry_delay``; a ``Retry-After`` header in seconds wins). When the attempts are
used up the last answer stands: an error status raises ``requests.HTTPError`` (unless
``raise_for_status=False``), a connection error is raised as ``requests`` raised it.
Unset arguments come from the ``runtime.request_*`` settings, as dlt's do.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

import requests
from requests.adapters import HTTPAdapter

from loadstone import config

#: dlt's retryable statuses: too many requests and every server error
DEFAULT_RETRY_STATUS = (429, *range(500, 600))
#: dlt's retryable exceptions
DEFAULT_RETRY_EXCEPTIONS: tuple[type[Exception], ...] = (
    requests.ConnectionError,
    requests.Timeout,
    requests.exceptions.ChunkedEncodingError,
)

Seconds = int | float | timedelta
TimeoutArg = Seconds | tuple[Seconds, Seconds] | None
RetryCondition = Callable[[requests.Response | None, BaseException | None], bool]


def _seconds(value: Seconds) -> float:
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


def _timeout(value: TimeoutArg) -> float | tuple[float, float] | None:
    if isinstance(value, tuple):
        return (_seconds(value[0]), _seconds(value[1]))
    return None if value is None else _seconds(value)


class Session(requests.Session):
    """A ``requests.Session`` with a default ``timeout`` that raises for an error status."""

    def __init__(self, timeout: TimeoutArg = 60, raise_for_status: bool = True) -> None:
        super().__init__()
        self.timeout = _timeout(timeout)
        self.raise_for_status = raise_for_status

    def request(self, method: str, url: str | bytes, *args: Any, **kwargs: Any) -> Any:
        """``requests.Session.request`` with the session's timeout when none is given."""
        if len(args) < 10:  # timeout is request()'s 11th positional argument
            kwargs.setdefault("timeout", self.timeout)
        response = super().request(method, url, *args, **kwargs)
        if self.raise_for_status:
            response.raise_for_status()
        return response


class _RetryingSession(Session):
    """The client's session: each request is retried by its client's policy."""

    def __init__(self, client: Client, timeout: TimeoutArg, raise_for_status: bool) -> None:
        super().__init__(timeout=timeout, raise_for_status=raise_for_status)
        self._client = client

    def request(self, method: str, url: str | bytes, *args: Any, **kwargs: Any) -> Any:
        """Send, then send again while the client says the answer is worth retrying."""
        send = super(Session, self).request  # requests' own, without raising for status
        if len(args) < 10:
            kwargs.setdefault("timeout", self.timeout)
        response = self._client._with_retries(lambda: send(method, url, *args, **kwargs))
        if self.raise_for_status:
            response.raise_for_status()
        return response


class Client:
    """dlt's retrying HTTP client: ``client.get(url)``, or its ``session`` for libraries."""

    def __init__(
        self,
        request_timeout: TimeoutArg | None = None,
        max_connections: int = 50,
        raise_for_status: bool = True,
        status_codes: Sequence[int] = DEFAULT_RETRY_STATUS,
        exceptions: Sequence[type[Exception]] = DEFAULT_RETRY_EXCEPTIONS,
        request_max_attempts: int | None = None,
        retry_condition: RetryCondition | Sequence[RetryCondition] | None = None,
        request_backoff_factor: float | None = None,
        request_max_retry_delay: Seconds | None = None,
        respect_retry_after_header: bool = True,
        session_attrs: dict[str, Any] | None = None,
    ) -> None:
        setting = config.get_float
        timeout = request_timeout
        if timeout is None:
            timeout = setting("runtime.request_timeout", 60.0, minimum=0)
        self.max_attempts = request_max_attempts or config.get_int(
            "runtime.request_max_attempts", 5, minimum=1
        )
        self.backoff_factor = (
            setting("runtime.request_backoff_factor", 1.0, minimum=0)
            if request_backoff_factor is None
            else float(request_backoff_factor)
        )
        self.max_delay = (
            setting("runtime.request_max_retry_delay", 300.0, minimum=0)
            if request_max_retry_delay is None
            else _seconds(request_max_retry_delay)
        )
        self.status_codes = frozenset(status_codes)
        self.exceptions = tuple(exceptions)
        if retry_condition is None:
            self.retry_conditions: tuple[RetryCondition, ...] = ()
        elif callable(retry_condition):
            self.retry_conditions = (retry_condition,)
        else:
            self.retry_conditions = tuple(retry_condition)
        self.respect_retry_after_header = respect_retry_after_header
        self.session = self._new_session(timeout, raise_for_status, max_connections)
        for name, value in (session_attrs or {}).items():
            setattr(self.session, name, value)

    def _new_session(
        self, timeout: TimeoutArg, raise_for_status: bool, max_connections: int
    ) -> Session:
        session = _RetryingSession(self, timeout, raise_for_status)
        adapter = HTTPAdapter(pool_connections=max_connections, pool_maxsize=max_connections)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        return session

    def _worth_retrying(
        self, response: requests.Response | None, error: BaseException | None
    ) -> bool:
        if error is not None and isinstance(error, self.exceptions):
            return True
        if response is not None and response.status_code in self.status_codes:
            return True
        return any(condition(response, error) for condition in self.retry_conditions)

    def _delay(self, attempt: int, response: requests.Response | None) -> float:
        after = None if response is None else response.headers.get("Retry-After")
        if (
            self.respect_retry_after_header
            and after
            and after.strip().replace(".", "", 1).isdigit()
        ):
            return min(float(after), self.max_delay)
        return float(min(self.backoff_factor * 2 ** (attempt - 1), self.max_delay))

    def _with_retries(self, send: Callable[[], requests.Response]) -> requests.Response:
        """``send()``'s answer, sent again up to ``max_attempts`` times while worth it."""
        attempt = 0
        while True:
            attempt += 1
            try:
                response: requests.Response | None = send()
                error: BaseException | None = None
            except Exception as raised:  # the user's retry_condition may name any error
                response, error = None, raised
            if attempt >= self.max_attempts or not self._worth_retrying(response, error):
                if error is not None:
                    raise error
                assert response is not None  # a send without an error answered
                return response
            time.sleep(self._delay(attempt, response))

    def request(self, method: str, url: str, *args: Any, **kwargs: Any) -> requests.Response:
        response: requests.Response = self.session.request(method, url, *args, **kwargs)
        return response

    def get(self, url: str, *args: Any, **kwargs: Any) -> requests.Response:
        return self.session.get(url, *args, **kwargs)

    def post(self, url: str, *args: Any, **kwargs: Any) -> requests.Response:
        return self.session.post(url, *args, **kwargs)

    def put(self, url: str, *args: Any, **kwargs: Any) -> requests.Response:
        return self.session.put(url, *args, **kwargs)

    def patch(self, url: str, *args: Any, **kwargs: Any) -> requests.Response:
        return self.session.patch(url, *args, **kwargs)

    def delete(self, url: str, *args: Any, **kwargs: Any) -> requests.Response:
        return self.session.delete(url, *args, **kwargs)

    def head(self, url: str, *args: Any, **kwargs: Any) -> requests.Response:
        return self.session.head(url, *args, **kwargs)

    def options(self, url: str, *args: Any, **kwargs: Any) -> requests.Response:
        return self.session.options(url, *args, **kwargs)
