"""Resources from a ``rest_api`` config: one loadstone resource (or transformer) per endpoint.

A resource without a parent is a generator over ``RESTClient.paginate``; a resource that
takes values from a parent is a transformer fed with the parent's pages (after the parent's
processing steps, as in dlt), which requests its endpoint once per parent record and adds
the ``include_from_parent`` fields as ``_<parent>_<field>``. Incremental cursors are
loadstone's own (:mod:`loadstone.extract.incremental`): the resource function receives the
bound cursor, sends its start (and end) value as query parameters, and the cursor filters
and deduplicates what comes back, keeping its state with the pipeline's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs

from loadstone.exceptions import IgnoreResponseException
from loadstone.extract.incremental import Incremental
from loadstone.extract.sources import Resource, resource, transformer
from loadstone.sources.helpers.rest_client.client import RESTClient
from loadstone.sources.rest_api import config_setup, resolve

HINT_KEYS = (
    "write_disposition",
    "primary_key",
    "merge_key",
    "columns",
    "schema_contract",
    "max_table_nesting",
    "table_format",
    "file_format",
    "table_name",
)
PROCESSING_STEPS = ("filter", "map")
ACTION_KEYS = frozenset({"status_code", "content", "action"})


@attrs.frozen
class IncrementalRequest:
    """Where a resource's cursor goes in its requests."""

    cursor: Incremental
    start_param: str | None
    end_param: str | None
    convert: Callable[[Any], Any] | None

    def params(self, bound: Incremental | None) -> dict[str, Any]:
        """The query parameters of one run's cursor (nothing for a value not known yet)."""
        if bound is None:
            return {}
        out: dict[str, Any] = {}
        for param, value in (
            (self.start_param, bound.start_value),
            (self.end_param, bound.end_value),
        ):
            if param is not None and value is not None:
                out[param] = self.convert(value) if self.convert is not None else value
        return out


@attrs.frozen
class EndpointCall:
    """What one resource asks its client, before parent and cursor values are filled in."""

    name: str
    client: RESTClient
    endpoint: dict[str, Any]
    kwargs: dict[str, Any]
    incremental: IncrementalRequest | None

    def pages(self, endpoint: Mapping[str, Any], cursor: Incremental | None) -> Iterator[Any]:
        bound = resolve.bind_incremental(dict(endpoint), cursor)
        params = dict(bound.get("params") or {})
        if self.incremental is not None:
            params.update(self.incremental.params(cursor))
        return self.client.paginate(
            str(bound.get("path", "")),
            params=params,
            json=bound.get("json"),
            **self.kwargs,
        )


def build_resources(config: Mapping[str, Any]) -> list[Resource]:
    """The resources of ``config``, in its order (parents are built before children)."""
    config_setup.check_config(config)
    client = make_client(config["client"])
    defaults = config.get("resource_defaults") or {}
    specs = [config_setup.merged_resource(r, defaults) for r in config.get("resources") or []]
    names = [s["name"] for s in specs]
    doubled = sorted({n for n in names if names.count(n) > 1})
    if doubled:
        raise TypeError(f"rest_api config names resource {doubled[0]!r} twice")
    built: dict[str, Resource] = {}
    pending = list(specs)
    while pending:
        ready = [s for s in pending if _parent_of(s) in (None, *built)]
        if not ready:
            missing = {str(_parent_of(s)) for s in pending} - set(names)
            raise TypeError(
                f"rest_api resource {pending[0]['name']!r} takes values from "
                + (
                    f"{sorted(missing)[0]!r}, which is not a resource of the config"
                    if missing
                    else "a cycle of resources"
                )
            )
        for spec in ready:
            built[spec["name"]] = make_resource(spec, client, built)
            pending.remove(spec)
    return [built[n] for n in names]


def make_client(client: Mapping[str, Any]) -> RESTClient:
    return RESTClient(
        base_url=client["base_url"],
        headers=client.get("headers"),
        auth=config_setup.make_auth(client.get("auth"), "client"),
        paginator=config_setup.make_paginator(client.get("paginator"), "client"),
        session=client.get("session"),
    )


def _parent_of(spec: Mapping[str, Any]) -> str | None:
    return resolve.parent_name(spec["name"], resolve.parent_fields(spec["endpoint"]))


def make_resource(
    spec: dict[str, Any], client: RESTClient, built: Mapping[str, Resource]
) -> Resource:
    """One resource (or transformer) with its hints, steps and cursor."""
    name = spec["name"]
    call = _endpoint_call(spec, client)
    fields = resolve.parent_fields(call.endpoint)
    parent = resolve.parent_name(name, fields)
    template = call.incremental.cursor if call.incremental is not None else None
    hints = {k: spec[k] for k in HINT_KEYS if k in spec}
    selected = bool(spec.get("selected", True))
    if parent is None:

        def fetch(incremental: Incremental | None = template) -> Iterator[Any]:
            yield from call.pages(call.endpoint, incremental)

        made: Resource = resource(fetch, name=name, selected=selected, **hints)
    else:
        include = list(spec.get("include_from_parent") or [])

        def fetch_children(items: Any, incremental: Incremental | None = template) -> Iterator[Any]:
            for item in items if isinstance(items, list) else [items]:
                endpoint = resolve.bind_parent(call.endpoint, item, fields, name)
                extra = {
                    f"_{parent}_{field}": resolve.field_value(item, field, name, parent)
                    for field in include
                }
                for page in call.pages(endpoint, incremental):
                    yield (
                        [
                            {**record, **extra} if isinstance(record, dict) else record
                            for record in page
                        ]
                        if extra
                        else page
                    )

        made = transformer(
            fetch_children, data_from=built[parent], name=name, selected=selected, **hints
        )
    for step in spec.get("processing_steps") or []:
        _add_step(made, step)
    return made


def _endpoint_call(spec: Mapping[str, Any], client: RESTClient) -> EndpointCall:
    """The endpoint's request pieces: paginator, auth, hooks, selector, cursor."""
    name = spec["name"]
    endpoint = dict(spec["endpoint"])
    endpoint.setdefault("path", name)
    where = f"resource {name!r}"
    kwargs: dict[str, Any] = {"method": endpoint.get("method", "GET")}
    if "paginator" in endpoint:
        kwargs["paginator"] = config_setup.make_paginator(endpoint["paginator"], where)
    if "auth" in endpoint:
        kwargs["auth"] = config_setup.make_auth(endpoint["auth"], where)
    for key in ("data_selector", "headers", "data"):
        if key in endpoint:
            kwargs[key] = endpoint[key]
    if endpoint.get("response_actions"):
        kwargs["hooks"] = {"response": response_hooks(endpoint["response_actions"], where)}
    params = dict(endpoint.get("params") or {})
    incremental = _incremental_request(endpoint, params, where)
    endpoint["params"] = params
    return EndpointCall(name, client, endpoint, kwargs, incremental)


def _incremental_request(
    endpoint: Mapping[str, Any], params: dict[str, Any], where: str
) -> IncrementalRequest | None:
    """The cursor of ``endpoint.incremental`` or of a ``{"type": "incremental"}`` param (taken
    out of ``params``)."""
    as_params = [
        k for k, v in params.items() if isinstance(v, Mapping) and v.get("type") == "incremental"
    ]
    if len(as_params) + ("incremental" in endpoint) > 1:
        raise TypeError(f"rest_api {where}: only one incremental cursor per endpoint")
    if as_params:
        spec = params.pop(as_params[0])
        cursor, convert = config_setup.make_incremental(spec, where)
        return IncrementalRequest(cursor, as_params[0], None, convert)
    if "incremental" in endpoint:
        spec = endpoint["incremental"]
        cursor, convert = config_setup.make_incremental(spec, where)
        return IncrementalRequest(cursor, spec.get("start_param"), spec.get("end_param"), convert)
    return None


def _add_step(made: Resource, step: Mapping[str, Any]) -> None:
    config_setup.known_keys(
        f"resource {made.name!r} processing_steps", step, frozenset(PROCESSING_STEPS)
    )
    for kind, func in step.items():
        if kind == "filter":
            made.add_filter(func)
        else:
            made.add_map(func)


def response_hooks(actions: list[Any], where: str) -> list[Callable[..., Any]]:
    """``response_actions`` as client hooks: the first matching action applies."""
    rules = [a for a in actions if not callable(a)]
    for rule in rules:
        config_setup.known_keys(f"{where} response_actions", rule, ACTION_KEYS)

    def apply_rules(response: Any, *args: Any, **kwargs: Any) -> Any:
        for rule in rules:
            if _matches(rule, response):
                action = rule.get("action")
                if action == "ignore":
                    raise IgnoreResponseException(f"{response.status_code} at {response.url}")
                for hook in action if isinstance(action, list) else [action]:
                    response = hook(response) or response
                return response
        return response

    return [a for a in actions if callable(a)] + [apply_rules]


def _matches(rule: Mapping[str, Any], response: Any) -> bool:
    status = rule.get("status_code")
    if status is not None and response.status_code not in (
        status if isinstance(status, list) else [status]
    ):
        return False
    content = rule.get("content")
    return content is None or str(content) in response.text
