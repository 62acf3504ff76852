"""s3fs filesystems whose botocore sessions share one data loader and TLS context per process.

s3fs gives each filesystem a botocore session of its own, and a new session reads botocore's
data files again: the endpoint and partition tables, the S3 service model and its endpoint
rules, about 1.5 MB of JSON, ~0.1-0.15 s of CPU. That was most of what a new ``s3://``
filesystem cost (a new one and its first request: ~0.2 s of CPU, ~0.08 s with the loader
shared), and a run opens several (the package storage per process, each destination client,
each listing of a glob).

The loader is read-only data cached by file name, the very object one botocore session shares
between all of its clients; here every session of the process shares it. Likewise the TLS
context a client's connections verify the endpoint with: aiobotocore builds one per client,
loading the CA bundle (~40 ms of CPU, even for an ``http://`` endpoint); here one per CA
bundle (``verify``) serves every client of the process, as aiohttp shares its default one.
A client certificate or a proxy still gets contexts of its own. Everything else stays as
s3fs makes it, one per filesystem: the session (credentials resolved from the environment or
a profile, configuration files), the client and its connections. Imported only when an
``s3://`` filesystem is opened (it imports s3fs).
"""

from __future__ import annotations

from typing import Any

import aiobotocore.session  # type: ignore[import-untyped] # aiobotocore ships no types
import s3fs
from aiobotocore.httpsession import (  # type: ignore[import-untyped] # aiobotocore ships no types
    AIOHTTPSession,
)
from fsspec.asyn import sync_wrapper

#: botocore's data loader per data path, built by the first session that needs it (read-only
#: data without connections or locks: a forked worker uses its parent's, nothing to read again)
_LOADERS: dict[str, Any] = {}


def new_session(options: dict[str, Any]) -> Any:
    """A new botocore session as s3fs makes it (``AioSession(**options)``) whose data loader is
    the process's shared one."""
    made = aiobotocore.session.AioSession(**options)
    key = str(made.get_config_variable("data_path"))
    loader = _LOADERS.get(key)
    if loader is None:
        _LOADERS[key] = made.get_component("data_loader")
    else:
        made.register_component("data_loader", loader)
    return made


#: the endpoint's TLS context per CA bundle (aiobotocore's ``verify``: True, False or a path)
_CONTEXTS: dict[object, Any] = {}


class SharedTLSSession(AIOHTTPSession):
    """aiobotocore's HTTP session; the endpoint's TLS context is the process's one for its
    ``verify``, unless a client certificate or a proxy asks for contexts of their own."""

    def _build_ssl_contexts(self, proxy_url: str | None) -> tuple[Any, Any]:
        if proxy_url or getattr(self, "_cert_file", None):
            contexts: tuple[Any, Any] = super()._build_ssl_contexts(proxy_url)
            return contexts
        verify = self._verify
        context = _CONTEXTS.get(verify)
        if context is None:
            context = _CONTEXTS[verify] = super()._build_ssl_contexts(None)[0]
        return context, None


class S3FileSystem(s3fs.S3FileSystem):
    """s3fs's filesystem; its session (made at first use, as s3fs does) shares the loader."""

    session: Any  # s3fs's attribute: the botocore session, None until the first request

    async def set_session(self, refresh: bool = False, kwargs: dict[str, Any] | None = None) -> Any:
        if self.session is None:
            self.session = new_session(self.kwargs)
        return await super().set_session(refresh=refresh, kwargs=kwargs or {})

    def _prepare_config_kwargs(self) -> dict[str, Any]:
        """s3fs's client configuration; the HTTP session class is :class:`SharedTLSSession`
        unless the options name one."""
        options: dict[str, Any] = super()._prepare_config_kwargs()
        options.setdefault("http_session_cls", SharedTLSSession)
        return options

    _connect = set_session
    connect = sync_wrapper(set_session)
