"""The lines of a chunk as items: reading the byte range, parsing JSON, refusing bad lines.

A line that cannot be normalized raises :class:`BadLine` with a one-line cause; what then
happens to it (fail, skip, quarantine) is :mod:`.bad_records`' business. The checks run at
memory speed first (:func:`scan_line`, or its C twin) so that only suspicious lines pay for
a walk of their item.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import re
from collections.abc import Callable, Iterator
from typing import IO, TYPE_CHECKING

import orjson

from loadstone.extract.typed_json import MARK_BYTES, decode_item
from loadstone.plugins.normalizers.relational.worker_memory import READ_BUFFERS
from loadstone.typing import TDataItem

if TYPE_CHECKING:
    from loadstone.plugins.normalizers.relational.task import Chunk
    from loadstone.storage.package_storage import RemoteData

#: a bare JSON integer orjson may parse as a float (losing digits): it is exact from -2^63 to
#: 2^64 - 1, so 20+ digits, or 19 after a minus; such lines go through the json module, which
#: keeps Python's exact int (a positive 19-digit id, common in API data, stays with orjson)
_LONG_INT = re.compile(rb"(?<![\d.\w])(?:-\d{19,}|\d{20,})(?![\d.eE])")
#: cheap pre-check for _LONG_INT (what the C scan finds at memory speed)
_LONG_DIGITS = re.compile(rb"-\d{19}|\d{20}")

#: Lines with more opening brackets than this have their nesting depth measured: deeper items
#: cannot be normalized (recursion in the flattening and the JSON encoders) and are bad
#: records. Counting brackets runs at memory speed; only such lines pay for the walk.
MAX_DEPTH = 400
#: Lines with more keys than this have their widest row measured: a row of more values than
#: this would make a table no destination loads in reasonable time (200,000 columns took
#: DuckDB over ten minutes), so such a line is a bad record. Again counted at memory speed.
MAX_WIDTH = 30_000
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")


class BadLine(ValueError):
    """A line that cannot be normalized; the message is the one-line cause."""


#: one line of a chunk: a view into the chunk's bytes (a gzipped file gives bytes)
Line = bytes | memoryview


def iter_lines(chunk: Chunk, remote: RemoteData | None = None) -> Iterator[tuple[int, Line]]:
    """(1-based line number within the chunk, the line) for each line of the chunk.

    A plain file's chunk is read once and its lines are views into it: copying each line
    out (``bytes.split``) cost 5% of a chunk's CPU on GitHub events. A pool worker reads
    into the buffer of its last chunk (:mod:`.worker_memory`): no line may outlive the
    chunk. ``remote``: the file is an object of that storage.
    """
    if chunk.path.endswith(".gz"):
        with _open(chunk.path, remote) as raw, gzip.open(raw, "rb") as handle:
            for number, line in enumerate(handle, 1):
                yield number, line
        return
    with chunk_bytes(chunk, remote) as (data, size):
        view = memoryview(data)
        find = data.find
        start, number = 0, 1
        while start <= size:
            end = find(b"\n", start, size)
            if end < 0:
                end = size
            yield number, view[start:end]
            start, number = end + 1, number + 1


@contextlib.contextmanager
def chunk_bytes(
    chunk: Chunk, remote: RemoteData | None = None
) -> Iterator[tuple[bytes | bytearray, int]]:
    """The bytes of a plain file's chunk, and how many of them are the chunk's (the buffer may
    be longer): read once into the worker's buffer, given back after (:mod:`.worker_memory`).
    The native core (:mod:`.native_core`) reads its chunks here too."""
    with _open(chunk.path, remote) as handle:
        handle.seek(chunk.start)
        data, size = READ_BUFFERS.read(handle, None if chunk.end < 0 else chunk.end - chunk.start)
    try:
        yield data, size
    finally:
        READ_BUFFERS.give_back(data)  # a pool worker reads its next chunk into it


def is_blank(raw: Line) -> bool:
    """An empty or whitespace-only line: skipped, as a JSONL reader skips it."""
    return not raw or bytes(raw).isspace()


def _open(path: str, remote: RemoteData | None) -> IO[bytes]:
    """The file at ``path``, here or on the package's object store."""
    return open(path, "rb") if remote is None else remote.open_read(path)


#: what :func:`scan_line` finds: (``[`` + ``{``, ``":``, a long integer (:data:`_LONG_INT`), extract's mark)
LineScan = tuple[int, int, bool, bool]


def scan_line(raw: Line) -> LineScan:
    """What :func:`parse_line` checks before parsing: (``[`` + ``{``, ``":``, a long integer,
    extract's type mark).

    The reference of ``_speedups.scan_line``, which finds the same in one pass over the line
    (five passes here cost about a quarter of a chunk's CPU on API data).
    """
    raw = bytes(raw)
    nineteen = _LONG_DIGITS.search(raw) is not None
    return raw.count(b"[") + raw.count(b"{"), raw.count(b'":'), nineteen, MARK_BYTES in raw


def parse_line(raw: Line, scan: Callable[[Line], LineScan] = scan_line) -> TDataItem:
    """One line of JSON as an item, or :class:`BadLine` with a one-line cause.

    orjson first; a line it refuses (an integer beyond 64 bits, a BOM, an escape of an
    unpaired surrogate ...) goes through the json module, which keeps exact integers but is
    made as strict as orjson otherwise: NaN, Infinity and numbers out of a double's range
    are invalid JSON on every line (dlt 1.31 rejects them in files too). Items nested deeper
    than :data:`MAX_DEPTH` are bad records. ``scan`` is :func:`scan_line` or its C twin.
    """
    item: TDataItem
    brackets, keys, nineteen, marked = scan(raw)
    if nineteen and _LONG_INT.search(raw) is not None:
        item = _parse_strict(raw, None)
    else:
        try:
            item = orjson.loads(raw)
        except orjson.JSONDecodeError as error:
            item = _parse_strict(raw, str(error))
    if marked:  # Decimal, date, time or bytes written by extract
        item = decode_item(item)
    if brackets > MAX_DEPTH and _depth(item) > MAX_DEPTH:
        raise BadLine(f"nested deeper than {MAX_DEPTH} levels")
    if keys > MAX_WIDTH and (width := _widest_row(item)) > MAX_WIDTH:
        raise BadLine(f"a row of {width} values: wider than {MAX_WIDTH} columns")
    return item


def _parse_strict(raw: Line, orjson_error: str | None) -> TDataItem:
    raw = bytes(raw)
    try:
        item = json.loads(raw, parse_constant=_reject_constant, parse_float=_finite_float)
    except BadLine:
        raise
    except RecursionError:
        raise BadLine(f"nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as error:
        raise BadLine(orjson_error or str(error)) from None
    if _SURROGATE.search(raw):
        _check_strings(item)
    return item


def _reject_constant(name: str) -> float:
    raise BadLine(f"{name} is not valid JSON (JSON has no NaN or Infinity)")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise BadLine(f"number {text} is out of the range of a double")
    return value


def _depth(item: TDataItem) -> int:
    """Nesting depth of an item, without recursion (an item may be nested past the limit)."""
    deepest = 0
    stack = [(item, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > deepest:
            deepest = depth
        if type(value) is dict:
            stack.extend((v, depth + 1) for v in value.values() if type(v) in (dict, list))
        elif type(value) is list:
            stack.extend((v, depth + 1) for v in value if type(v) in (dict, list))
    return deepest


def _widest_row(item: TDataItem) -> int:
    """The most values one row of the item holds (nested dicts flatten into their row; list
    elements are rows of their own)."""
    widest = 0
    rows = [item]
    while rows:
        width = 0
        stack = [rows.pop()]
        while stack:
            value = stack.pop()
            inner = value.values() if type(value) is dict else value
            for v in inner:
                if type(v) is dict:
                    stack.append(v)
                elif type(v) is list:
                    rows.extend(x for x in v if type(x) in (dict, list))
                    width += 1
                else:
                    width += 1
        widest = max(widest, width)
    return widest


def _check_strings(item: TDataItem) -> None:
    """Every key and string value must be encodable as UTF-8 (no unpaired surrogate)."""
    stack = [item]
    while stack:
        value = stack.pop()
        if type(value) is dict:
            for key, inner in value.items():
                stack.append(key)
                stack.append(inner)
        elif type(value) is list:
            stack.extend(value)
        elif type(value) is str:
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as error:
                bad = value[error.start : error.end]
                raise BadLine(
                    f"unpaired surrogate {bad!r} in a string: not encodable as UTF-8"
                ) from None
