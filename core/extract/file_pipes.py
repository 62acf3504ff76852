"""``filesystem(...) | read_jsonl()`` without the rows passing through this process.

dlt's reader transformers parse every file here, row by row. When a listing of files is
piped straight into a reader whose rows need no Python (``read_jsonl``, ``read_parquet`` with
``use_pyarrow=True``), with no step or cursor of its own in between, loadstone records the
files in the package instead, as ``loadstone run FILE`` does: an object on the package storage
is read where it lies by the normalize step's workers (or Spark executors); a local file is
copied by the kernel (Parquet) or read in place / copied (JSON lines). The tables, types and
rows are the same as the reader's: the normalizer reads JSON lines as it reads dicts.

The listing itself still runs here (its incremental cursor moves as usual); if any listed
file cannot be read in place, the reader runs as in dlt for all of them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from loadstone.extract.file_inputs import extract_file, extract_tabular, object_in_place
from loadstone.extract.resource import Resource
from loadstone.storage import package_storage
from loadstone.typing import TDataItem

if TYPE_CHECKING:
    from loadstone.extract.writers import PackageWriter

#: set on a reader's function: the file kind it reads (``"jsonl"`` or ``"parquet"``)
READS_FILES = "__loadstone_reads_files__"
#: set on a listing's function: it yields file items (``file_url``, ...)
LISTS_FILES = "__loadstone_lists_files__"

_JSONL = (".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz")


def reads_in_place(res: Resource) -> str | None:
    """The kind of file ``res`` reads when it is a reader piped straight from a listing."""
    kind = getattr(res.data, READS_FILES, None)
    parent = res._parent
    if kind is None or not res.is_transformer or parent is None:
        return None
    if res._steps or res._incremental is not None or res._incremental_argument()[1]:
        return None
    if not getattr(parent.data, LISTS_FILES, False):
        return None
    if kind == "parquet" and not res._call_kwargs.get("use_pyarrow"):
        return None  # dlt's read_parquet yields dicts: the rows get dlt's row columns
    return str(kind)


def extract_in_place(
    writer: PackageWriter,
    res: Resource,
    kind: str,
    target: str,
    items: list[TDataItem],
    read_normally: Callable[[Resource], None],
) -> None:
    """The listed files (``items``, the listing's) into the package as files; the reader as
    in dlt, over the same items, when one cannot be."""
    placed = [_placeable(writer, item, kind) for item in items]
    if not items or any(p is None for p in placed):
        listed = Resource(iter([items]), "listing", args_bound=True)
        reader = res._clone()
        reader._parent = listed
        read_normally(reader)
        return
    for url in placed:
        assert url is not None
        _add(writer, url, kind, target)


def _placeable(writer: PackageWriter, item: TDataItem, kind: str) -> str | None:
    """The file's path or object URL when it can be recorded as it is, else None."""
    url = str(item.get("file_url", "")) if isinstance(item, dict) else ""
    suffixes = _JSONL if kind == "jsonl" else (".parquet",)
    if not url.lower().endswith(suffixes):
        return None
    local = item.local_file_path if hasattr(item, "local_file_path") else None
    if local:
        return str(local)
    remote = writer.package.remote
    if kind != "jsonl" or remote is None:
        return None  # Parquet is read here; an object elsewhere is read by the reader
    try:
        remote.fingerprint(remote.name_of(url))
    except Exception:  # another store, or no access with the package storage's credentials
        return None
    return url


def _add(writer: PackageWriter, url: str, kind: str, target: str) -> None:
    if package_storage.is_remote_url(url):
        writer.add_files([object_in_place(writer.package, url, target)])
    elif kind == "jsonl":
        extract_file(writer, Path(url), target)
    else:
        extract_tabular(writer, Path(url), target, "parquet")
