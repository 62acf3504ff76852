"""The filesystem destination's settings, resolved once per client through the one resolver.

Highest first: the factory's arguments (``loadstone.destinations.filesystem(bucket_url=...,
layout=..., table_format=...)``), then ``[destination.filesystem]`` keys in the environment
(``DESTINATION__FILESYSTEM__BUCKET_URL``) or the TOML files, then the defaults below. The
credentials are dlt's keys (:mod:`loadstone.storage.filesystem`). A package's own table hints
(``loader_file_format=`` and ``table_format=`` given to ``run``) beat the destination's default.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import attrs

from loadstone import config
from loadstone.destinations.contract import Destination
from loadstone.exceptions import FilesystemConfigError
from loadstone.storage.filesystem import FilesystemCredentials, configured_credentials

#: dlt 1.31's default layout
DEFAULT_LAYOUT = "{table_name}/{load_id}.{file_id}.{ext}"
FILE_FORMATS = ("parquet", "jsonl", "csv")
TABLE_FORMATS = ("delta", "iceberg")
#: pyiceberg catalog used when none is configured: SQLite in memory, re-registered from the
#: newest metadata file in the bucket on every load (the bucket is the source of truth)
DEFAULT_ICEBERG_CATALOG: Mapping[str, str] = {"type": "sql", "uri": "sqlite:///:memory:"}


#: dlt's ``quoting`` values of its CSV writer
CSV_QUOTING = ("quote_all", "quote_needed", "quote_none")


@attrs.frozen
class CsvFormat:
    """dlt's CSV settings (``[normalize.data_writer]`` or ``[data_writer]``: ``delimiter``,
    ``include_header``, ``quoting``), read by the writer and by the dataset's reader."""

    delimiter: str = ","
    include_header: bool = True
    quoting: str = "quote_needed"


def _csv_format() -> CsvFormat:
    def keys(key: str) -> list[str]:
        return [f"normalize.data_writer.{key}", f"data_writer.{key}"]

    return CsvFormat(
        delimiter=config.get_str(keys("delimiter"), ","),
        include_header=config.get_bool(keys("include_header"), True),
        quoting=config.get_choice(keys("quoting"), CSV_QUOTING, "quote_needed"),
    )


@attrs.frozen
class FilesystemConfiguration:
    """Where and how the destination writes; see the module docstring for the sources."""

    bucket_url: str
    credentials: FilesystemCredentials = attrs.field(factory=FilesystemCredentials)
    layout: str = DEFAULT_LAYOUT
    extra_placeholders: Mapping[str, Any] = attrs.field(factory=dict)
    loader_file_format: str = "parquet"
    table_format: str | None = None
    #: gzip JSONL and CSV files (dlt's default); Parquet is compressed inside
    compress: bool = True
    csv_format: CsvFormat = attrs.field(factory=CsvFormat)
    iceberg_catalog_name: str = "default"
    iceberg_catalog: Mapping[str, Any] = attrs.field(factory=lambda: dict(DEFAULT_ICEBERG_CATALOG))


def _setting(destination: Destination, key: str, default: Any = None) -> Any:
    return config.resolve(
        ("destination", destination.name, key),
        ("destination", "filesystem", key),
        explicit=destination.config.get(key),
        default=default,
    )


def _flag(destination: Destination, key: str, default: bool, *also: str) -> bool:
    """A boolean setting parsed by the config accessor (``"False"`` from the environment is
    false); ``also``: further keys tried after the destination's own."""
    return config.get_bool(
        [f"destination.{destination.name}.{key}", f"destination.filesystem.{key}", *also],
        default,
        explicit=destination.config.get(key),
    )


def resolve_configuration(destination: Destination) -> FilesystemConfiguration:
    """The configuration of ``destination`` (its factory arguments, then configuration)."""
    explicit_credentials = destination.config.get("credentials")
    bucket_url = destination.config.get("bucket_url")
    if isinstance(explicit_credentials, str) and bucket_url is None:
        # ``filesystem("s3://bucket")``: the factory's first argument is the bucket, as in dlt
        bucket_url, explicit_credentials = explicit_credentials, None
    bucket_url = (
        _setting(destination, "bucket_url", default=None) if bucket_url is None else bucket_url
    )
    if not bucket_url:
        raise FilesystemConfigError(
            "the filesystem destination needs a bucket_url: "
            "loadstone.destinations.filesystem(bucket_url=...), "
            "env DESTINATION__FILESYSTEM__BUCKET_URL or [destination.filesystem] bucket_url"
        )
    file_format = str(_setting(destination, "loader_file_format", default="parquet"))
    table_format = _setting(destination, "table_format", default=None)
    check_formats(file_format, table_format)
    section = ("destination", destination.name)
    return FilesystemConfiguration(
        bucket_url=str(bucket_url),
        credentials=configured_credentials(
            section,
            cast("Mapping[str, object] | FilesystemCredentials | None", explicit_credentials),
        ),
        layout=str(_setting(destination, "layout", default=DEFAULT_LAYOUT)),
        extra_placeholders=dict(_setting(destination, "extra_placeholders", default={}) or {}),
        loader_file_format=file_format,
        table_format=table_format or None,
        # dlt's own keys for it: [normalize.data_writer] / DATA_WRITER__DISABLE_COMPRESSION
        compress=not _flag(
            destination,
            "disable_compression",
            False,
            "normalize.data_writer.disable_compression",
            "data_writer.disable_compression",
        ),
        csv_format=_csv_format(),
        iceberg_catalog_name=str(_setting(destination, "iceberg_catalog_name", default="default")),
        iceberg_catalog=dict(
            _setting(destination, "iceberg_catalog", default=None) or DEFAULT_ICEBERG_CATALOG
        ),
    )


def check_formats(file_format: str | None, table_format: str | None) -> None:
    """Refuse an unknown file or table format before any file is written."""
    if file_format is not None and file_format not in FILE_FORMATS:
        raise FilesystemConfigError(
            f"loader_file_format {file_format!r} is not supported by the filesystem "
            f"destination; use one of {', '.join(FILE_FORMATS)}"
        )
    if table_format is not None and table_format not in TABLE_FORMATS:
        raise FilesystemConfigError(
            f"table_format {table_format!r} is not supported; use one of {', '.join(TABLE_FORMATS)}"
        )
