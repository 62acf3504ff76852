"""One way to reach files wherever they are: a local folder, ``file://`` or an ``s3://`` bucket.

Load packages on executors (the cluster issue) and the filesystem destination both need to
read and write files on storage that is not necessarily the driver's disk. They share this
layer so that a URL and its credentials mean the same thing everywhere, with dlt's keys:

* :func:`open_filesystem` turns ``(url, credentials)`` into an fsspec filesystem and the path
  inside it (no protocol), so callers use one API (``fs.open``, ``fs.ls``, ``fs.rm``...).
  An ``s3://`` one is s3fs's, its botocore session sharing the process's data loader
  (:mod:`loadstone.storage.s3_sessions`: botocore's JSON files read once per process).
* :class:`FilesystemCredentials` holds dlt's credential keys (``aws_access_key_id``,
  ``aws_secret_access_key``, ``aws_session_token``, ``region_name``, ``endpoint_url``,
  ``profile_name``); :func:`configured_credentials` reads them through the one resolver
  (``[destination.filesystem.credentials]`` in a TOML file, or env
  ``DESTINATION__FILESYSTEM__CREDENTIALS__AWS_ACCESS_KEY_ID`` ...).
* :func:`write_bytes_atomic` writes a file that readers see whole or not at all: an object
  store's PUT is atomic already; a local file is written beside and renamed.

fsspec and s3fs come with the ``filesystem`` extra; they are imported when a filesystem is
opened, so importing this module costs nothing.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from loadstone import config
from loadstone.exceptions import FilesystemError

if TYPE_CHECKING:
    import fsspec

#: dlt's credential keys for object storage, in the order dlt documents them
CREDENTIAL_KEYS = (
    "aws_access_key_id",
    "aws_secret_access_key",
    "aws_session_token",
    "profile_name",
    "region_name",
    "endpoint_url",
)

#: protocols that mean "the local disk"
LOCAL_PROTOCOLS = ("", "file", "local")


@attrs.frozen
class FilesystemCredentials:
    """dlt's credentials for object storage; every field is optional (ambient AWS config)."""

    aws_access_key_id: str | None = None
    aws_secret_access_key: str | None = attrs.field(default=None, repr=False)
    aws_session_token: str | None = attrs.field(default=None, repr=False)
    profile_name: str | None = None
    region_name: str | None = None
    endpoint_url: str | None = None

    @classmethod
    def from_mapping(cls, values: Mapping[str, object] | None) -> FilesystemCredentials:
        """Keep dlt's keys of ``values`` (others are refused: a typo must not go unnoticed)."""
        values = dict(values or {})
        unknown = sorted(set(values) - set(CREDENTIAL_KEYS))
        if unknown:
            raise FilesystemError(
                f"unknown filesystem credential key(s) {', '.join(unknown)}; "
                f"known: {', '.join(CREDENTIAL_KEYS)}"
            )
        return cls(**{k: (None if v is None else str(v)) for k, v in values.items()})

    def as_dict(self) -> dict[str, str]:
        """The keys that are set (what a caller passes on to another library)."""
        return {k: v for k, v in attrs.asdict(self).items() if v is not None}

    def s3fs_options(self) -> dict[str, str | dict[str, str]]:
        """Keyword arguments of ``s3fs.S3FileSystem`` for these credentials."""
        options: dict[str, str | dict[str, str]] = {}
        if self.aws_access_key_id:
            options["key"] = self.aws_access_key_id
        if self.aws_secret_access_key:
            options["secret"] = self.aws_secret_access_key
        if self.aws_session_token:
            options["token"] = self.aws_session_token
        if self.profile_name:
            options["profile"] = self.profile_name
        client: dict[str, str] = {}
        if self.region_name:
            client["region_name"] = self.region_name
        if self.endpoint_url:
            client["endpoint_url"] = self.endpoint_url
        if client:
            options["client_kwargs"] = client
        return options


def configured_credentials(
    section: Sequence[str] = ("destination", "filesystem"),
    explicit: Mapping[str, object] | FilesystemCredentials | None = None,
) -> FilesystemCredentials:
    """Credentials from code, else each key from configuration under ``<section>.credentials``.

    One key at a time through :func:`loadstone.config.resolve`, so the environment
    (``DESTINATION__FILESYSTEM__CREDENTIALS__ENDPOINT_URL``) and the TOML files
    (``[destination.filesystem.credentials]``) work as for every other setting.
    """
    if isinstance(explicit, FilesystemCredentials):
        return explicit
    if explicit:
        return FilesystemCredentials.from_mapping(explicit)
    found = {
        key: config.resolve((*section, "credentials", key), default=None) for key in CREDENTIAL_KEYS
    }
    return FilesystemCredentials.from_mapping({k: v for k, v in found.items() if v is not None})


def split_url(url: str) -> tuple[str, str]:
    """``("s3", "bucket/prefix")`` for ``s3://bucket/prefix``; ``("file", "/abs/path")`` for a
    local path or ``file://`` URL (relative paths are made absolute)."""
    text = os.fspath(url)
    if "://" not in text:
        return "file", os.path.abspath(os.path.expanduser(text))
    protocol, _, rest = text.partition("://")
    protocol = protocol.lower()
    if protocol in LOCAL_PROTOCOLS:
        return "file", os.path.abspath(rest or "/")
    return protocol, rest.rstrip("/")


def is_local(url: str) -> bool:
    """True when ``url`` is a path on this machine's disk."""
    return split_url(url)[0] == "file"


def join_url(url: str, *parts: str) -> str:
    """``url`` with ``parts`` appended by ``/`` (local paths stay paths)."""
    protocol, path = split_url(url)
    joined = "/".join([path.rstrip("/"), *(p.strip("/") for p in parts if p)])
    return joined if protocol == "file" else f"{protocol}://{joined}"


def open_filesystem(
    url: str,
    credentials: Mapping[str, object] | FilesystemCredentials | None = None,
    *,
    kwargs: Mapping[str, object] | None = None,
    client_kwargs: Mapping[str, object] | None = None,
) -> tuple[fsspec.AbstractFileSystem, str]:
    """The fsspec filesystem that holds ``url`` and the path inside it (without protocol).

    A plain path or ``file://`` gives the local filesystem (parent folders are created on
    write); ``s3://`` gives s3fs with dlt's credential keys; any other protocol fsspec knows
    is passed the credentials as they are. ``kwargs`` / ``client_kwargs`` are more options of
    a remote filesystem (dlt's ``filesystem(kwargs=, client_kwargs=)``: the constructor's and
    its ``client_kwargs``; a local one ignores them, as dlt's does).
    """
    protocol, path = split_url(url)
    if protocol == "file":
        from fsspec.implementations.local import LocalFileSystem

        return LocalFileSystem(auto_mkdir=True), path
    if protocol in ("s3", "s3a"):
        try:
            from loadstone.storage import s3_sessions
        except ImportError as error:  # the filesystem extra is missing
            raise FilesystemError(
                f"{url}: s3:// needs s3fs; install loadstone[filesystem]"
            ) from error
        creds = (
            credentials
            if isinstance(credentials, FilesystemCredentials)
            else FilesystemCredentials.from_mapping(credentials)
        )
        s3_options = _with_options(creds.s3fs_options(), kwargs, client_kwargs)
        # skip_instance_cache: two buckets with different credentials must not share a client
        return s3_sessions.S3FileSystem(skip_instance_cache=True, **s3_options), path
    import fsspec

    options = _with_options(
        credentials.as_dict()
        if isinstance(credentials, FilesystemCredentials)
        else dict(credentials or {}),
        kwargs,
        client_kwargs,
    )
    try:
        return fsspec.filesystem(protocol, **options), path
    except (ImportError, ValueError) as error:
        raise FilesystemError(f"{url}: cannot open filesystem {protocol!r}: {error}") from error


def _with_options(
    options: Mapping[str, Any],
    kwargs: Mapping[str, object] | None,
    client_kwargs: Mapping[str, object] | None,
) -> dict[str, Any]:
    """Constructor options with the user's ``kwargs`` and ``client_kwargs`` added; a client
    option the credentials set too is refused (``TypeError``, as dlt's s3fs call fails)."""
    merged: dict[str, Any] = {**options, **(kwargs or {})}
    if client_kwargs:
        given = dict(merged.get("client_kwargs") or {})
        doubled = sorted(set(given) & set(client_kwargs))
        if doubled:
            raise TypeError(
                f"client_kwargs sets {', '.join(doubled)}, which the credentials set too"
            )
        merged["client_kwargs"] = {**given, **client_kwargs}
    return merged


def write_bytes_atomic(fs: fsspec.AbstractFileSystem, path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` so that no reader ever sees part of it.

    An object store's PUT replaces the object whole. A local file is written to a hidden
    sibling and renamed over the target (``os.replace`` is atomic on POSIX).
    """
    if not _is_local_fs(fs):
        fs.pipe_file(path, data)
        return
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    temp = os.path.join(folder, f".{os.path.basename(path)}.{uuid.uuid4().hex}.tmp")
    with open(temp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, path)


def put_file_atomic(fs: fsspec.AbstractFileSystem, local_path: str, path: str) -> None:
    """Copy a local file to ``path`` on ``fs``, whole or not at all (see :func:`write_bytes_atomic`).

    The bytes are streamed, never decoded: a Parquet file moves without its rows being read.
    """
    if not _is_local_fs(fs):
        fs.put_file(local_path, path)
        return
    import shutil

    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    temp = os.path.join(folder, f".{os.path.basename(path)}.{uuid.uuid4().hex}.tmp")
    shutil.copyfile(local_path, temp)
    os.replace(temp, path)


def _is_local_fs(fs: fsspec.AbstractFileSystem) -> bool:
    protocol = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
    return protocol in LOCAL_PROTOCOLS
