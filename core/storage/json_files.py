"""Reading and writing the small JSON files a pipeline keeps (state, schemas, package.json ...).

Every file loadstone reads back may have been cut by a crash of another tool, a full disk or a
hand edit. Reading one therefore never ends in a raw ``JSONDecodeError``: the error names the
file and says how to repair it. Writing is all or nothing: a temp file beside the target,
fsync, rename; on any failure (disk full included) the temp file is removed and the error
names the file, so no half-written file and no ``.tmp`` debris is left behind.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from loadstone.exceptions import CorruptFileError, StorageError
from loadstone.exceptions.base import os_error_text

#: The UTF-8 byte order mark some editors put in front of JSON; accepted wherever JSON is.
BOM = b"\xef\xbb\xbf"


def read_json(path: Path, *, repair: str) -> Any:
    """The JSON held by ``path``; a damaged file raises :class:`CorruptFileError`.

    ``repair`` completes the message: what the user can do about this file (delete it, drop
    the package, restore it from the destination ...). A leading BOM is accepted.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise CorruptFileError(path, os_error_text(error), repair) from None
    if raw.startswith(BOM):
        raw = raw[len(BOM) :]
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as error:
        reason = "empty file" if not raw.strip() else f"not valid JSON: {error}"
        raise CorruptFileError(path, reason, repair) from None


def read_json_object(path: Path, *, repair: str, required: tuple[str, ...] = ()) -> dict[str, Any]:
    """Like :func:`read_json` for a file that must hold an object with ``required`` keys."""
    data = read_json(path, repair=repair)
    if not isinstance(data, dict):
        raise CorruptFileError(path, f"holds a {type(data).__name__}, not an object", repair)
    missing = [key for key in required if key not in data]
    if missing:
        raise CorruptFileError(path, f"lacks {', '.join(missing)}", repair)
    return data


def write_json_atomic(path: Path, payload: object) -> None:
    """Write JSON to ``path`` through a temp file + fsync + rename (all or nothing).

    The payload is serialized before the temp file is opened, so a value that cannot be
    written never leaves an empty file; an OSError (disk full) removes the temp file and
    becomes a :class:`StorageError` naming ``path``.
    """
    path = Path(path)
    text = json.dumps(payload, indent=1, default=str)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as error:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise StorageError(f"cannot write {path}: {os_error_text(error)}") from None
