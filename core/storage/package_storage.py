"""Where load packages keep their data files: ``packages.storage_url``.

A package's metadata (``package.json``, hints, schema) always stays in the pipeline's
working folder, where its state switches are atomic renames. Its *data* files (extracted
input, normalized Parquet, quarantined lines) go to ``packages.storage_url`` when set (env
``PACKAGES__STORAGE_URL``): storage every Spark executor mounts at the same path, so tasks
on other machines read the input and write their output there. Default: inside the
package folder, as on one machine.

The URL is a local path or ``file://`` URL: a shared mount (NFS, a cluster file system,
a FUSE-mounted bucket). Object stores without a mount (``s3://``) are not read directly yet.
An input file that already lies under the storage is read there by the executors, not
copied into the package (its size and mtime are checked before normalize).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

from loadstone import config
from loadstone.errors import LoadstoneError

#: The setting naming the storage.
STORAGE_URL_KEY = "packages.storage_url"


class PackageStorageError(LoadstoneError):
    """``packages.storage_url`` names storage loadstone cannot use."""


def storage_root(url: str) -> Path:
    """The local folder of a storage URL (a path or ``file://``)."""
    parsed = urlparse(url)
    if parsed.scheme in ("", "file"):
        path = Path(unquote(parsed.path) if parsed.scheme else url).expanduser()
        if not path.is_absolute():
            path = path.absolute()
        return path
    raise PackageStorageError(
        f"{STORAGE_URL_KEY} = {url!r}: only a path or file:// URL (a mount every executor "
        "shares) is supported for package data files"
    )


def is_shared(path: Path) -> bool:
    """Whether an input file already lies on the package storage (read there, not copied)."""
    url = config.get(STORAGE_URL_KEY, None)
    if not url:
        return False
    return Path(path).absolute().is_relative_to(storage_root(str(url)))


def data_dir(pipeline_name: str) -> Path | None:
    """The folder for the data files of ``pipeline_name``'s packages, or None (default)."""
    url = config.get(STORAGE_URL_KEY, None)
    if not url:
        return None
    root = storage_root(str(url))
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PackageStorageError(f"{STORAGE_URL_KEY} = {url!r} cannot be created: {exc}") from None
    return root / pipeline_name
