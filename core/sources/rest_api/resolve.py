"""Values a request takes from elsewhere: a parent record's fields and the incremental cursor.

A child endpoint names its parent in two ways dlt accepts::

    "path": "posts/{post_id}/comments",
    "params": {"post_id": {"type": "resolve", "resource": "posts", "field": "id"}}

    "path": "posts/{resources.posts.id}/comments"      (also in params, json, data, headers)

Both become :class:`ParentField` references; :func:`bind_parent` fills them in from one
parent record. As in dlt 1.31, a resource takes values from one parent, and a resolve param
must stand in the path (a query value takes a placeholder): anything else is a
``ValueError`` when the source is made. The placeholders
``{incremental.start_value}`` / ``{incremental.end_value}`` / ``{incremental.last_value}`` are
filled in from the run's cursor by :func:`bind_incremental`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING

import attrs

from loadstone.exceptions import ParentFieldMissing
from loadstone.sources.helpers.rest_client.jsonpath import find_values
from loadstone.sources.rest_api.typing import Endpoint
from loadstone.typing import TDataItem

if TYPE_CHECKING:
    from loadstone.extract.incremental import Incremental

PLACEHOLDER = re.compile(r"\{resources\.([^.{}]+)\.([^{}]+)\}")
INCREMENTAL_PLACEHOLDER = re.compile(r"\{incremental\.(start_value|end_value|last_value)\}")


@attrs.frozen
class ParentField:
    """One value a child request takes from its parent record."""

    resource: str
    field: str
    #: the resolve param's name (legacy form), None for a ``{resources...}`` placeholder
    param: str | None = None


def parent_fields(endpoint: Endpoint) -> list[ParentField]:
    """Every parent reference of an endpoint (resolve params, then placeholders)."""
    found: list[ParentField] = []
    for name, value in (endpoint.get("params") or {}).items():
        if isinstance(value, Mapping) and value.get("type") == "resolve":
            found.append(_resolve_param(name, value))
    texts = _strings(
        endpoint.get("path"),
        endpoint.get("params"),
        endpoint.get("json"),
        endpoint.get("data"),
        endpoint.get("headers"),
    )
    for text in texts:
        for resource, field in PLACEHOLDER.findall(text):
            found.append(ParentField(resource, field))
    return found


def _resolve_param(name: str, value: Mapping[str, object]) -> ParentField:
    """``{"type": "resolve", "resource": ..., "field": ...}`` (other keys are ignored, as dlt
    ignores them)."""
    resource, field = value.get("resource"), value.get("field")
    if not resource or not field:
        raise TypeError(f"rest_api resolve param {name!r} takes resource and field")
    return ParentField(str(resource), str(field), name)


def parent_name(resource: str, fields: list[ParentField], path: str) -> str | None:
    """The one parent of a resource: dlt refuses two (``ValueError``), and a resolve param
    that is not in the path (``ValueError`` too; a placeholder puts a value in the query)."""
    unbound = [f.param for f in fields if f.param is not None and "{" + f.param + "}" not in path]
    if unbound:
        raise ValueError(
            f"rest_api resource {resource!r} defines resolve params {unbound} that are not "
            f"in its path {path!r}: to send a parent's value in the query write "
            "'{resources.<parent>.<field>}' as the param's value"
        )
    parents = sorted({f.resource for f in fields})
    if len(parents) > 1:
        raise ValueError(
            f"rest_api resource {resource!r} takes values from several parents "
            f"({', '.join(parents)}): a resource has one parent"
        )
    return parents[0] if parents else None


def _strings(*values: object) -> list[str]:
    out: list[str] = []
    for value in values:
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, Mapping):
            out.extend(_strings(*value.values()))
        elif isinstance(value, list):
            out.extend(_strings(*value))
    return out


def field_value(
    item: TDataItem, field: str, child: str, parent: str, as_path: bool = True
) -> TDataItem:
    """``item``'s value at ``field``, a JSON path (a parent value a request takes) or, with
    ``as_path=False``, a key (an ``include_from_parent`` field, as dlt reads it); missing is
    an error naming both resources."""
    if not isinstance(item, Mapping):
        values = []
    elif as_path:
        values = find_values(field, item)
    else:
        values = [item[field]] if field in item else []
    if not values:
        fields = ", ".join(item) if isinstance(item, Mapping) else type(item).__name__
        raise ParentFieldMissing(
            f"rest_api resource {child!r} needs field {field!r} of its parent {parent!r}, "
            f"which has: {fields}"
        )
    return values[0]


def bind_parent(
    endpoint: Endpoint, item: TDataItem, fields: list[ParentField], child: str
) -> Endpoint:
    """The endpoint with every parent reference filled in from ``item``."""
    values = {(f.resource, f.field): field_value(item, f.field, child, f.resource) for f in fields}
    bound = Endpoint(**endpoint)
    path = str(bound.get("path", ""))
    params = dict(bound.get("params") or {})
    for f in fields:
        if f.param is not None:  # in the path: parent_name refused the others
            path = path.replace("{" + f.param + "}", str(values[(f.resource, f.field)]))
            params.pop(f.param, None)
    bound["path"] = path
    bound["params"] = params
    return _substitute(bound, lambda m: values.get((m.group(1), m.group(2))), PLACEHOLDER)


def bind_incremental(endpoint: Endpoint, cursor: Incremental | None) -> Endpoint:
    """``{incremental.start_value}`` ... filled in from the bound cursor."""
    if cursor is None:
        return endpoint
    values = {
        "start_value": lagged_start(cursor),
        "end_value": cursor.end_value,
        "last_value": cursor.last_value,
    }
    return _substitute(endpoint, lambda m: values[m.group(1)], INCREMENTAL_PLACEHOLDER)


def lagged_start(cursor: Incremental) -> TDataItem:
    """The cursor's start moved back by its ``lag`` (what dlt sends, in a start param and in
    ``{incremental.start_value}``); an ISO timestamp stays text written as the cursor's own
    (``2024-02-04T00:00:00Z``, not a datetime's ``str``)."""
    lagged, start = cursor.lagged_start_value, cursor.kept_start_value
    if isinstance(start, str) and isinstance(lagged, datetime):
        text = lagged.isoformat()
        if start.endswith("Z") and text.endswith("+00:00"):
            return text[: -len("+00:00")] + "Z"
        return text
    return lagged


#: the value a placeholder's match stands for
ValueOf = Callable[["re.Match[str]"], TDataItem]


def _substitute(endpoint: Endpoint, value_of: ValueOf, pattern: re.Pattern[str]) -> Endpoint:
    out = Endpoint(**endpoint)
    if "path" in out:
        out["path"] = _fill(out["path"], value_of, pattern)
    if "params" in out:
        out["params"] = _fill(out["params"], value_of, pattern)
    if "json" in out:
        out["json"] = _fill(out["json"], value_of, pattern)
    if "data" in out:
        out["data"] = _fill(out["data"], value_of, pattern)
    if "headers" in out:
        out["headers"] = {k: str(_fill(v, value_of, pattern)) for k, v in out["headers"].items()}
    return out


def _fill(value: TDataItem, value_of: ValueOf, pattern: re.Pattern[str]) -> TDataItem:
    """Strings with placeholders filled; a string that is one placeholder takes the value as
    it is (a number stays a number in a JSON body)."""
    if isinstance(value, str):
        whole = pattern.fullmatch(value)
        if whole:
            return value_of(whole)
        return pattern.sub(lambda m: str(value_of(m)), value)
    if isinstance(value, Mapping):
        return {k: _fill(v, value_of, pattern) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, value_of, pattern) for v in value]
    return value
