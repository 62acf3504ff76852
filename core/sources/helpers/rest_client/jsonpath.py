"""The JSON paths REST configs use, evaluated as dlt 1.31 evaluates them.

dlt takes JSONPath expressions for ``data_selector``, ``total_path``, ``cursor_path``,
``next_url_path`` and parent ``field`` names. Besides dotted names, indexes and ``[*]``
(``data``, ``$.data.items``, ``results[0]``, ``data[*].id``) this reads what dlt's parser
reads: quoted names (``'@odata.nextLink'``, ``$.'a b'``), recursive descent (``$..id``: the
matches at a node, then at each of its children in order), slices (``[1:3]``, ``[-1]``, ``[::2]``) and filters over a list's elements or an
object's values (``[?(@.id > 2 & @.kind == 'push')]``, ``[?id > 2]``, ``||``, ``!@.x``,
``=~`` as a regex search; a missing field compares unequal and fails every other comparison;
a comparison of unlike types is false). The answers were recorded from dlt
(tests/fixtures/rest_api/parity_dlt.json). Paths that write (a cursor in a JSON body) take
dotted names only.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping

from loadstone.exceptions import JSONPathError
from loadstone.sources.helpers.rest_client.jsonpath_filter import Filter, parse_filter
from loadstone.typing import TDataItem

_SEGMENT = re.compile(r"\[['\"]([^'\"]+)['\"]\]|\[(\d+|\*)\]|([^.\[\]]+)")
#: one step of a path: ("name", n) ("wild",) ("this",) ("index", i) ("slice", s) ("filter", f),
#: each wrapped as ("descend", step) after ``..``
Step = tuple[object, ...]


def segments(path: str) -> tuple[str, ...]:
    """``"$.a.b[0]"`` -> ``("a", "b", "0")``: the dotted paths a value is written at."""
    text = path.strip()
    if ".." in text or "?" in text or "(" in text or ":" in text:
        raise JSONPathError(f"JSON path {path!r}: a path to write at takes names and [n] only")
    if text.startswith("$"):
        text = text[1:].lstrip(".")
    return tuple(quoted or index or plain for quoted, index, plain in _SEGMENT.findall(text))


def find_values(path: str, document: TDataItem) -> list[TDataItem]:
    """Every value ``path`` selects in ``document`` (``[]`` when nothing matches)."""
    found = [document]
    for step in compiled(path):
        found = [value for node in found for value in _apply(step, node)]
    return found


def find_first(path: str, document: TDataItem, default: TDataItem = None) -> TDataItem:
    """The first value ``path`` selects, or ``default``."""
    values = find_values(path, document)
    return values[0] if values else default


def set_value(path: str, document: dict[str, TDataItem], value: object) -> None:
    """Put ``value`` at a dotted ``path`` of a JSON body, making the dicts on the way."""
    parts = segments(path)
    target = document
    for part in parts[:-1]:
        target = target.setdefault(part, {})
    target[parts[-1]] = value


@functools.lru_cache(maxsize=256)
def compiled(path: str) -> tuple[Step, ...]:
    """``path`` as steps; a path dlt's parser refuses raises :class:`JSONPathError`."""
    text = path.strip()
    if text.startswith("$"):
        text = text[1:]
        if text[:1] not in ("", ".", "["):
            raise JSONPathError(f"JSON path {path!r}: $ is followed by . or [")
    elif text.startswith("."):
        raise JSONPathError(f"JSON path {path!r}: a path starts with $ or a name")
    steps: list[Step] = []
    at = 0
    while at < len(text):
        descend = text.startswith("..", at)
        if descend:
            at += 2
        elif text[at] == ".":
            at += 1
        step, at = _step(text, at, path)
        steps.append(("descend", step) if descend else step)
    return tuple(steps)


_NAME = re.compile(r"[^.\[\]\s]+")


def _step(text: str, at: int, path: str) -> tuple[Step, int]:
    """The step at ``text[at]``: a name, ``*`` or a bracket; and where the next one starts."""
    if text.startswith("[", at):
        end = _closing(text, at, path)
        return _bracket(text[at + 1 : end].strip(), path), end + 1
    if text[at : at + 1] in ("'", '"'):  # a quoted name: dots and spaces are the name's
        end = text.find(text[at], at + 1)
        if end < 0:
            raise JSONPathError(f"JSON path {path!r}: a quote is not closed")
        return ("name", text[at + 1 : end]), end + 1
    if text.startswith("`this`", at):  # the node itself
        return ("this",), at + len("`this`")
    name = _NAME.match(text, at)
    if name is None:
        raise JSONPathError(f"JSON path {path!r}: nothing to select at position {at}")
    word = name.group()
    return (("wild",) if word == "*" else ("name", word)), name.end()


def _closing(text: str, at: int, path: str) -> int:
    """The ``]`` closing the bracket at ``at`` (quotes and nested brackets skipped)."""
    depth, quote = 0, ""
    for index in range(at, len(text)):
        char = text[index]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                return index
    raise JSONPathError(f"JSON path {path!r}: a [ is not closed")


_SLICE = re.compile(r"(-?\d*):(-?\d*)(?::(-?\d*))?")


def _bracket(inner: str, path: str) -> Step:
    if inner == "*":
        return ("wild",)
    if inner.startswith("?"):
        return ("filter", parse_filter(inner[1:], path, find_values))
    if re.fullmatch(r"-?\d+", inner):
        return ("index", int(inner))
    if len(inner) >= 2 and inner[0] == inner[-1] and inner[0] in "'\"":
        return ("name", inner[1:-1])
    sliced = _SLICE.fullmatch(inner)
    if sliced:
        a, b, c = (int(v) if v else None for v in sliced.groups())
        return ("slice", slice(a, b, c))
    if _NAME.fullmatch(inner):
        return ("name", inner)
    raise JSONPathError(f"JSON path {path!r}: cannot read [{inner}]")


def _apply(step: Step, node: TDataItem) -> list[TDataItem]:
    kind = step[0]
    if kind == "descend":
        inner = step[1]
        assert isinstance(inner, tuple)  # a compiled step always wraps a step
        out = _apply(inner, node)
        for child in _children(node):
            out.extend(_apply(step, child))
        return out
    if kind == "name":
        return _named(node, str(step[1]))
    if kind == "wild":
        return _children(node)
    if kind == "this":
        return [node]
    if kind == "index":
        return _indexed(node, int(str(step[1])))
    if kind == "slice":
        cut = step[1]
        assert isinstance(cut, slice)
        return list(node[cut]) if isinstance(node, list) else []
    test = step[1]
    assert isinstance(test, Filter)  # the only other kind of step
    return [child for child in _children(node) if test.passes(child)]


def _children(node: TDataItem) -> list[TDataItem]:
    if isinstance(node, Mapping):
        return list(node.values())
    return list(node) if isinstance(node, list) else []


def _named(node: TDataItem, name: str) -> list[TDataItem]:
    if isinstance(node, Mapping):
        return [node[name]] if name in node else []
    if isinstance(node, list) and name.isdigit() and int(name) < len(node):
        return [node[int(name)]]
    return []


def _indexed(node: TDataItem, index: int) -> list[TDataItem]:
    if isinstance(node, list):
        return [node[index]] if -len(node) <= index < len(node) else []
    return _named(node, str(index))
