"""Reading and writing the small JSON files a pipeline keeps (state, schemas, package.json ...).

Every file loadstone reads back may have been cut by a crash of another tool, a full disk or a
hand edit. Reading one therefore never ends in a raw ``JSONDecodeError``: the error names the
file and says how to repair it. Writing is all or nothing: a temp file beside the target,
fsync, rename; on any failure (disk full included) the temp file is removed and the error
names the file, so no half-written file and no ``.tmp`` debris is left behind.

orjson writes them: a small run writes about fourteen of these files (schemas, package
metadata, state, trace), and the standard library's indented encoder, which is pure Python,
took 0.4-0.5 ms a file (orjson 11-17 us). What the files hold is the same: values JSON has no
form for (dates, ``Decimal``) are written as their ``str`` either way, and a payload orjson
cannot write (an integer beyond 64 bits) goes through the standard library as before. Only
the layout changes: two-space indents. The standard library reads them: orjson would read an
integer beyond 64 bits as a float.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any, Final

import orjson

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
    try:  # not orjson: it reads an integer beyond 64 bits (a wei cursor) as a float
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
    text = _dumps(payload)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as error:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise StorageError(f"cannot write {path}: {os_error_text(error)}") from None


#: dates and times go to ``default`` (``str``) as with the standard library, not orjson's own
#: ISO form; keys that are not text are written as the standard library writes them
_WRITE_OPTIONS: Final = (
    orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME
)


def _dumps(payload: object) -> bytes:
    """``payload`` as indented JSON, ``str`` for values JSON has no form for."""
    try:
        return orjson.dumps(payload, default=str, option=_WRITE_OPTIONS)
    except TypeError:  # an integer beyond 64 bits: the standard library writes it
        return json.dumps(payload, indent=1, default=str).encode("utf-8")
