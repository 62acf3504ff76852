"""Authentication: what each request carries to prove who asks, as dlt's ``rest_client.auth``.

Each class is a ``requests`` auth (it signs a prepared request) and knows its own secret
values, so an error message can name the URL without ever showing a token or a password
(:meth:`AuthConfigBase.secret_values`).
"""

from __future__ import annotations

import time
from typing import Any

import requests
from requests.auth import AuthBase, HTTPBasicAuth

from loadstone.exceptions import AuthError

API_KEY_LOCATIONS = ("header", "query", "param", "cookie")


class AuthConfigBase(AuthBase):
    """The base of every auth: sign a request; list the secrets that must never be shown."""

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        return request

    def secret_values(self) -> list[str]:
        """Values to hide from error messages and logs."""
        return []

    def query_param_names(self) -> list[str]:
        """Query parameters this auth adds (their values are hidden in messages)."""
        return []


def _required(owner: str, **values: object) -> None:
    for name, value in values.items():
        if value in (None, ""):
            raise AuthError(f"{owner} needs {name}: pass it, or read it from configuration")


class BearerTokenAuth(AuthConfigBase):
    """``Authorization: Bearer <token>``."""

    def __init__(self, token: str | None = None) -> None:
        _required("BearerTokenAuth", token=token)
        self.token = str(token)

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        request.headers["Authorization"] = f"Bearer {self.token}"
        return request

    def secret_values(self) -> list[str]:
        return [self.token]


class APIKeyAuth(AuthConfigBase):
    """An API key in a header (``location="header"``), the query (``"query"``) or a cookie."""

    def __init__(
        self, name: str = "Authorization", api_key: str | None = None, location: str = "header"
    ) -> None:
        _required("APIKeyAuth", api_key=api_key)
        if location not in API_KEY_LOCATIONS:
            raise AuthError(f"APIKeyAuth location {location!r}: use one of {API_KEY_LOCATIONS}")
        self.name = name
        self.api_key = str(api_key)
        self.location = location

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        if self.location == "header":
            request.headers[self.name] = self.api_key
        elif self.location == "cookie":
            request.prepare_cookies({self.name: self.api_key})
        else:
            request.prepare_url(str(request.url), {self.name: self.api_key})
        return request

    def secret_values(self) -> list[str]:
        return [self.api_key]

    def query_param_names(self) -> list[str]:
        return [self.name] if self.location in ("query", "param") else []


class HttpBasicAuth(AuthConfigBase):
    """HTTP basic auth: ``Authorization: Basic base64(username:password)``."""

    def __init__(self, username: str | None = None, password: str | None = None) -> None:
        _required("HttpBasicAuth", username=username)
        self.username = str(username)
        self.password = "" if password is None else str(password)

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        signed: requests.PreparedRequest = HTTPBasicAuth(self.username, self.password)(request)
        return signed

    def secret_values(self) -> list[str]:
        return [self.password] if self.password else []


class OAuth2ClientCredentials(AuthConfigBase):
    """OAuth2's client-credentials flow: a token from ``access_token_url``, kept until it
    expires (``expires_in`` of the answer, else ``default_token_expiration`` seconds), then
    sent as a bearer token."""

    def __init__(
        self,
        access_token_url: str | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        access_token_request_data: dict[str, object] | None = None,
        default_token_expiration: int = 3600,
        session: requests.Session | None = None,
    ) -> None:
        _required(
            "OAuth2ClientCredentials",
            access_token_url=access_token_url,
            client_id=client_id,
            client_secret=client_secret,
        )
        self.access_token_url = str(access_token_url)
        self.client_id = str(client_id)
        self.client_secret = str(client_secret)
        self.access_token_request_data = dict(access_token_request_data or {})
        self.default_token_expiration = default_token_expiration
        self.session = session
        self.access_token: str | None = None
        self.token_expiry = 0.0

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        if self.access_token is None or time.monotonic() >= self.token_expiry:
            self.obtain_token()
        request.headers["Authorization"] = f"Bearer {self.access_token}"
        return request

    def build_access_token_request(self) -> dict[str, Any]:
        """The form the token endpoint gets (override for APIs that want it otherwise): the
        keyword arguments of ``requests.post``, whatever types those take."""
        return {
            "data": {
                "grant_type": "client_credentials",
                "client_id": self.client_id,
                "client_secret": self.client_secret,
                **self.access_token_request_data,
            }
        }

    def obtain_token(self) -> None:
        session = self.session or requests.Session()
        response = session.post(self.access_token_url, **self.build_access_token_request())
        if not response.ok:
            raise AuthError(
                f"OAuth2 token request to {self.access_token_url} failed: "
                f"{response.status_code} {response.reason}"
            )
        answer = response.json()
        self.access_token = answer.get("access_token")
        if not self.access_token:
            raise AuthError(f"OAuth2 token endpoint {self.access_token_url} sent no access_token")
        lifetime = answer.get("expires_in") or self.default_token_expiration
        self.token_expiry = time.monotonic() + float(lifetime)

    def secret_values(self) -> list[str]:
        return [v for v in (self.client_secret, self.access_token) if v]
