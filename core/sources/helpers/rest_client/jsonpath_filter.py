"""JSONPath filter expressions (``[?(@.id > 2 & @.kind == 'push')]``), as dlt 1.31 reads them.

A filter keeps the elements (or an object's values) for which its expression holds. The
expression compares a field of the element (``@.a.b``, ``@['a']``; on the left a bare name is
a field too: ``[?id > 8]``) with a literal (a number, a quoted string, ``true`` / ``false`` /
``null``; a bare word on the right is a string), or tests that a field exists (``@.x``,
``!@.x``); ``&`` / ``&&`` bind tighter than ``||``; parentheses group. Recorded against dlt in
tests/fixtures/rest_api/parity_dlt.json.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from typing import Any

import attrs

from loadstone.exceptions import JSONPathError
from loadstone.typing import TDataItem

_TOKEN = re.compile(
    r"""\s*(?:
    (?P<field>@(?:\.[^.\s\[\]()=!<>&|~]+|\[[^\]]*\])*)
    |(?P<string>'[^']*'|"[^"]*")
    |(?P<number>-?\d+(?:\.\d+)?(?![\w.]))
    |(?P<op>==|!=|<=|>=|=~|<|>|&&|&|\|\||!|\(|\))
    |(?P<word>[A-Za-z_][\w.\-]*)
    )""",
    re.VERBOSE,
)
_MISSING = object()
#: the operators: a field's value (any JSON value) against a literal; unlike types raise
#: TypeError, which the comparison reads as false
_COMPARE: dict[str, Callable[[Any, Any], object]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "=~": lambda value, pattern: isinstance(value, str) and re.search(str(pattern), value),
}
_LITERALS: dict[str, object] = {"true": True, "false": False, "null": None}

#: an expression of one element: is it kept
Test = Callable[[TDataItem], bool]


@attrs.frozen
class Filter:
    """A compiled ``[?...]``: ``passes(element)``."""

    text: str
    test: Test

    def passes(self, element: TDataItem) -> bool:
        return self.test(element)


def parse_filter(text: str, path: str, find: Find) -> Filter:
    """``(@.id > 2)`` or ``id > 2`` (the text after ``?``) compiled; ``find`` reads fields."""
    tokens = _tokens(text, path)
    parser = _Parser(tokens, path, find)
    test = parser.disjunction()
    if parser.at < len(tokens):
        raise JSONPathError(
            f"JSON path {path!r}: cannot read the filter at {tokens[parser.at][1]!r}"
        )
    return Filter(text, test)


def _tokens(text: str, path: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    at = 0
    while at < len(text.rstrip()):
        match = _TOKEN.match(text, at)
        if match is None or match.end() == at:
            raise JSONPathError(f"JSON path {path!r}: cannot read the filter at {text[at:]!r}")
        kind = str(match.lastgroup)
        out.append((kind, match.group(kind)))
        at = match.end()
    return out


#: the values a path selects in a document (jsonpath's ``find_values``, given to the parser:
#: a filter's fields are paths themselves)
Find = Callable[[str, TDataItem], list[TDataItem]]


class _Parser:
    """Recursive descent over the tokens: or of ands of (negated) comparisons."""

    def __init__(self, tokens: list[tuple[str, str]], path: str, find: Find) -> None:
        self.tokens, self.path, self.find, self.at = tokens, path, find, 0

    def _peek(self) -> tuple[str, str]:
        return self.tokens[self.at] if self.at < len(self.tokens) else ("end", "")

    def _take(self) -> tuple[str, str]:
        token = self._peek()
        if token[0] == "end":
            raise JSONPathError(f"JSON path {self.path!r}: the filter ends too soon")
        self.at += 1
        return token

    def disjunction(self) -> Test:
        parts = [self.conjunction()]
        while self._peek() == ("op", "||"):
            self._take()
            parts.append(self.conjunction())
        return parts[0] if len(parts) == 1 else lambda e: any(p(e) for p in parts)

    def conjunction(self) -> Test:
        parts = [self.unary()]
        while self._peek() in (("op", "&"), ("op", "&&")):
            self._take()
            parts.append(self.unary())
        return parts[0] if len(parts) == 1 else lambda e: all(p(e) for p in parts)

    def unary(self) -> Test:
        if self._peek() == ("op", "!"):
            self._take()
            inner = self.unary()
            return lambda e: not inner(e)
        if self._peek() == ("op", "("):
            self._take()
            inner = self.disjunction()
            if self._take() != ("op", ")"):
                raise JSONPathError(f"JSON path {self.path!r}: a ( of the filter is not closed")
            return inner
        return self.comparison()

    def comparison(self) -> Test:
        kind, text = self._take()
        if kind not in ("field", "word"):
            raise JSONPathError(f"JSON path {self.path!r}: a filter compares a field, not {text!r}")
        field = text[1:] if kind == "field" else "." + text
        op_kind, op = self._peek()
        if op_kind != "op" or op not in _COMPARE:
            return lambda e: bool(self.find("$" + field, e))
        self._take()
        literal = self._literal()
        compare = _COMPARE[op]

        def test(element: TDataItem) -> bool:
            values = self.find("$" + field, element)
            if not values:
                return op == "!="
            try:
                return bool(compare(values[0], literal))
            except TypeError:  # unlike types compare false, as in dlt
                return False

        return test

    def _literal(self) -> object:
        kind, text = self._take()
        if kind == "string":
            return text[1:-1]
        if kind == "number":
            return float(text) if "." in text else int(text)
        if kind == "word":
            return _LITERALS.get(text, text)
        raise JSONPathError(
            f"JSON path {self.path!r}: a filter compares with a value, not {text!r}"
        )
