"""``loadstone.sources.filesystem``: dlt's built-in ``filesystem`` source.

A dlt program ports by changing its import::

    from loadstone.sources.filesystem import filesystem, read_csv

    files = filesystem(bucket_url="s3://bucket/landing", file_glob="**/*.csv")
    files.apply_hints(incremental=loadstone.sources.incremental("modification_date"))
    pipeline.run((files | read_csv()).with_name("orders"))

:func:`filesystem` lists the files of a local folder, a ``file://`` URL or an ``s3://`` bucket
as file items (:mod:`.files`); the readers (:mod:`.readers`) are transformers that turn
them into rows; :func:`readers` is a source holding one resource per reader. docs/sources/
filesystem.md documents every argument.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from loadstone import config
from loadstone.exceptions import FileReadError
from loadstone.extract.decorators import resource, transformer
from loadstone.extract.file_pipes import LISTS_FILES, READS_FILES
from loadstone.extract.incremental import Incremental
from loadstone.extract.resource import Resource
from loadstone.extract.source import Source
from loadstone.sources.configured import configured
from loadstone.sources.filesystem.files import (
    FileItem,
    FileItemDict,
    glob_files,
    guess_mime_type,
)
from loadstone.sources.filesystem.readers import (
    read_csv_duckdb_items,
    read_csv_items,
    read_jsonl_items,
    read_parquet_items,
)
from loadstone.storage.filesystem import FilesystemCredentials, configured_credentials, is_local
from loadstone.typing import TDataItem

if TYPE_CHECKING:
    import fsspec

__all__ = [
    "FileItem",
    "FileItemDict",
    "FileReadError",
    "filesystem",
    "fsspec_filesystem",
    "glob_files",
    "guess_mime_type",
    "read_csv",
    "read_csv_duckdb",
    "read_jsonl",
    "read_parquet",
    "readers",
]

#: where ``bucket_url`` / ``credentials`` are configured when not passed (dlt's keys)
CONFIG_SECTION = ("sources", "filesystem")

Credentials = Mapping[str, object] | FilesystemCredentials


def fsspec_filesystem(
    bucket_url: str,
    credentials: Credentials | fsspec.AbstractFileSystem | None = None,
    kwargs: Mapping[str, object] | None = None,
    client_kwargs: Mapping[str, object] | None = None,
) -> fsspec.AbstractFileSystem:
    """The fsspec filesystem for ``bucket_url``: ``credentials`` as given (a filesystem
    instance is used as it is), else ``sources.filesystem.credentials`` from configuration;
    ``kwargs`` / ``client_kwargs`` go to a remote filesystem's constructor (dlt's)."""
    from fsspec import AbstractFileSystem

    from loadstone.storage.filesystem import open_filesystem

    if isinstance(credentials, AbstractFileSystem):
        return credentials
    if is_local(bucket_url):
        return open_filesystem(bucket_url)[0]
    creds = configured_credentials(CONFIG_SECTION, explicit=credentials)
    return open_filesystem(bucket_url, creds, kwargs=kwargs, client_kwargs=client_kwargs)[0]


def _bucket_url(bucket_url: str | None) -> str:
    if bucket_url is not None and bucket_url is not config.value:
        return str(bucket_url)
    found = config.resolve(("sources", "filesystem", "bucket_url"), ("bucket_url",), default=None)
    if found is None:
        raise TypeError(
            "filesystem() needs bucket_url: pass it, or set sources.filesystem.bucket_url "
            "(env SOURCES__FILESYSTEM__BUCKET_URL)"
        )
    return str(found)


@configured(lambda passed: "filesystem", own=("bucket_url", "credentials"))
def filesystem(
    bucket_url: str | None = config.value,
    credentials: Credentials | fsspec.AbstractFileSystem | None = None,
    file_glob: str = "*",
    files_per_page: int = 100,
    extract_content: bool = False,
    kwargs: dict[str, object] | None = None,
    client_kwargs: dict[str, object] | None = None,
    incremental: Incremental | None = None,
    fetch_file_info: bool = False,
) -> Resource:
    """A resource named ``filesystem`` yielding the files under ``bucket_url`` as file items.

    ``bucket_url``: a folder, ``file://`` URL or ``s3://bucket/prefix`` (default: config
    ``sources.filesystem.bucket_url``). ``credentials``: dlt's keys (``aws_access_key_id``,
    ``aws_secret_access_key``, ``aws_session_token``, ``profile_name``, ``region_name``,
    ``endpoint_url``) as a dict or :class:`FilesystemCredentials`, or an fsspec filesystem
    (default: config ``sources.filesystem.credentials.*``). ``file_glob``: relative to the
    bucket, ``**`` for subfolders. ``files_per_page``: items per yielded page.
    ``extract_content``: add the raw bytes as ``file_content``. ``incremental``: a cursor
    over the items (usually ``modification_date``). ``fetch_file_info``: accepted; listing
    always carries size and modification date. ``kwargs`` / ``client_kwargs``: more options
    of a bucket's fsspec filesystem (its constructor's, its ``client_kwargs``; e.g.
    ``client_kwargs={"endpoint_url": ...}``), ignored for a local folder, as in dlt.
    ``file_url`` is the table's primary key, as in dlt.
    """
    if files_per_page < 1:
        raise ValueError(f"files_per_page must be at least 1, got {files_per_page}")
    url = _bucket_url(bucket_url)
    fs = fsspec_filesystem(url, credentials, kwargs, client_kwargs)

    def list_files() -> Iterator[list[FileItemDict]]:
        page: list[FileItemDict] = []
        for found in glob_files(fs, url, file_glob):
            item = FileItemDict(found, fs)
            if extract_content:
                item["file_content"] = item.read_bytes()
            page.append(item)
            if len(page) >= files_per_page:
                yield page
                page = []
        if page:
            yield page

    setattr(list_files, LISTS_FILES, True)  # a marker read by file_pipes
    made: Resource = resource(
        list_files, name="filesystem", primary_key="file_url", incremental=incremental
    )
    made.section = "filesystem"
    return made


def _read_csv(
    items: Iterator[FileItemDict], chunksize: int = 10000, **pandas_kwargs: object
) -> Iterator[list[dict[str, TDataItem]]]:
    """Rows of CSV files: pandas ``read_csv`` in ``chunksize``-row pages; ``pandas_kwargs``
    go to ``pandas.read_csv`` (``sep``, ``dtype``, ``usecols``...)."""
    yield from read_csv_items(items, chunksize, **pandas_kwargs)


def _read_jsonl(items: Iterator[FileItemDict], chunksize: int = 1000) -> Iterator[list[TDataItem]]:
    """Objects of JSON lines files (``.jsonl.gz`` decompressed), ``chunksize`` per page."""
    yield from read_jsonl_items(items, chunksize)


def _read_parquet(
    items: Iterator[FileItemDict], chunksize: int = 1000, use_pyarrow: bool = False
) -> Iterator[TDataItem]:
    """Rows of Parquet files in ``chunksize``-row pages: dicts, or Arrow tables with
    ``use_pyarrow=True`` (loaded column by column, without ``_dlt_id``, as in dlt)."""
    yield from read_parquet_items(items, chunksize, use_pyarrow)


def _read_csv_duckdb(
    items: Iterator[FileItemDict],
    chunk_size: int | None = 5000,
    use_pyarrow: bool = False,
    **duckdb_kwargs: Any,
) -> Iterator[TDataItem]:
    """Rows of CSV files parsed by DuckDB (``duckdb_kwargs`` go to its ``read_csv``), in
    ``chunk_size``-row pages: dicts, or Arrow tables with ``use_pyarrow=True``."""
    yield from read_csv_duckdb_items(items, chunk_size, use_pyarrow, **duckdb_kwargs)


# JSON lines and Arrow-read Parquet piped straight from a listing are recorded in the package
# and read where they lie (loadstone.extract.file_pipes), not parsed here row by row
setattr(_read_jsonl, READS_FILES, "jsonl")  # a marker read by file_pipes
setattr(_read_parquet, READS_FILES, "parquet")  # a marker read by file_pipes

#: the reader transformers, named as dlt names them (``filesystem() | read_csv()`` makes a
#: table ``_read_csv`` unless renamed with ``.with_name(...)``)
read_csv: Resource = transformer(_read_csv, name="_read_csv")
read_jsonl: Resource = transformer(_read_jsonl, name="_read_jsonl")
read_parquet: Resource = transformer(_read_parquet, name="_read_parquet")
read_csv_duckdb: Resource = transformer(_read_csv_duckdb, name="_read_csv_duckdb")

_READERS = {
    "read_csv": read_csv,
    "read_jsonl": read_jsonl,
    "read_parquet": read_parquet,
    "read_csv_duckdb": read_csv_duckdb,
}


@configured(lambda passed: "readers", own=("bucket_url", "credentials"))
def readers(
    bucket_url: str | None = config.value,
    credentials: Credentials | fsspec.AbstractFileSystem | None = None,
    file_glob: str = "*",
    kwargs: dict[str, object] | None = None,
    client_kwargs: dict[str, object] | None = None,
    incremental: Incremental | None = None,
) -> Source:
    """A source named ``readers`` with the resources ``read_csv``, ``read_jsonl``,
    ``read_parquet`` and ``read_csv_duckdb``: each reads the files ``file_glob`` matches.

    Select one (``readers(...).read_csv``, ``.with_resources("read_jsonl")``), or call it
    with the reader's arguments (``readers(...).read_csv(chunksize=100)``, as dlt's docs do);
    the arguments mean what they mean for :func:`filesystem`.
    """
    from loadstone.schema.schema import Schema

    resources = [
        (
            filesystem(
                bucket_url,
                credentials,
                file_glob=file_glob,
                kwargs=kwargs,
                client_kwargs=client_kwargs,
                incremental=incremental,
            )
            | reader
        ).with_name(name)
        for name, reader in _READERS.items()
    ]
    return Source("readers", Schema("readers"), resources, section="filesystem")
