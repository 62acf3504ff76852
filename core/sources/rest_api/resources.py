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

import graphlib
from collections.abc import Callable, Iterator, Mapping
from typing import cast

import attrs
from requests import Response
from requests.auth import AuthBase

from loadstone.exceptions import IgnoreResponseException
from loadstone.extract.decorators import resource, transformer
from loadstone.extract.incremental import Incremental
from loadstone.extract.resource import Resource
from loadstone.sources.helpers.rest_client.client import (
    Hooks,
    PageData,
    RequestExtras,
    ResponseHook,
    RESTClient,
)
from loadstone.sources.helpers.rest_client.paginators import BasePaginator, SinglePagePaginator
from loadstone.sources.rest_api import config_setup, resolve
from loadstone.sources.rest_api import typing as t
from loadstone.sources.rest_api.credentials import Scope
from loadstone.typing import TDataItem

#: the table hints a resource config may give (the keys of ResourceHints)
HINT_KEYS = frozenset(t.ResourceHints.__optional_keys__)
PROCESSING_STEPS = ("filter", "map", "yield_map")
ACTION_KEYS = frozenset({"status_code", "content", "action"})


@attrs.frozen
class IncrementalRequest:
    """Where a resource's cursor goes in its requests."""

    cursor: Incremental
    start_param: str | None
    end_param: str | None
    convert: Callable[[TDataItem], TDataItem] | None

    def params(self, bound: Incremental | None) -> dict[str, TDataItem]:
        """The query parameters of one run's cursor (nothing for a value not known yet); the
        start moved back by the cursor's ``lag``, as dlt sends it."""
        if bound is None:
            return {}
        out: dict[str, TDataItem] = {}
        for param, value in (
            (self.start_param, resolve.lagged_start(bound)),
            (self.end_param, bound.end_value),
        ):
            if param is not None and value is not None:
                out[param] = self.convert(value) if self.convert is not None else value
        return out


class PageOptions(RequestExtras, total=False):
    """What :meth:`RESTClient.paginate` gets from an endpoint's config beside path and query."""

    method: str
    paginator: BasePaginator | None
    auth: AuthBase | None
    data_selector: str
    hooks: Hooks


@attrs.frozen
class EndpointCall:
    """What one resource asks its client, before parent and cursor values are filled in."""

    name: str
    client: RESTClient
    endpoint: t.Endpoint
    options: PageOptions
    incremental: IncrementalRequest | None

    def pages(
        self, endpoint: t.Endpoint, cursor: Incremental | None
    ) -> Iterator[PageData[TDataItem]]:
        bound = resolve.bind_incremental(endpoint, cursor)
        params = dict(bound.get("params") or {})
        if self.incremental is not None:
            params.update(self.incremental.params(cursor))
        options = PageOptions(**self.options)
        if "headers" in bound:  # with the parent's and the cursor's values filled in
            options["headers"] = bound["headers"]
        if "data" in bound:
            options["data"] = bound["data"]
        return self.client.paginate(
            str(bound.get("path", "")),
            params=params,
            json=bound.get("json"),
            **options,
        )


def build_resources(config: t.RESTAPIConfig, scope: Scope | None = None) -> list[Resource]:
    """The resources of ``config`` (dicts, names, or resources of one's own as dlt takes
    them, which may be parents too), in dlt's order: parents before their children, else as
    the config lists them (``graphlib``'s static order, which is dlt's).

    Refused as dlt 1.31 refuses them, when the source is made: a name used twice, a parent
    that is not a resource of the config, ``include_from_parent`` without a parent
    (``ValueError``), parents in a cycle (``graphlib.CycleError``, a ``ValueError`` too).
    ``scope`` is where an auth named by its type alone reads its fields.
    """
    config_setup.check_config(config)
    scope = scope or Scope()
    client = make_client(config["client"], scope)
    defaults = config.get("resource_defaults") or t.EndpointResourceBase()
    specs: dict[str, t.EndpointResource | Resource] = {}
    for given in config.get("resources") or []:
        spec = (
            given if isinstance(given, Resource) else config_setup.merged_resource(given, defaults)
        )
        name = spec.name if isinstance(spec, Resource) else spec["name"]
        if name in specs:
            raise ValueError(f"rest_api config names resource {name!r} twice")
        specs[name] = spec
    graph = {name: _checked_parents(spec, specs) for name, spec in specs.items()}
    built: dict[str, Resource] = {}
    for name in graphlib.TopologicalSorter(graph).static_order():
        spec = specs[name]
        built[name] = (
            spec if isinstance(spec, Resource) else make_resource(spec, client, built, scope)
        )
    return list(built.values())


def _checked_parents(
    spec: t.EndpointResource | Resource, specs: Mapping[str, t.EndpointResource | Resource]
) -> list[str]:
    """The parent of ``spec`` (none for a resource of one's own), checked."""
    if isinstance(spec, Resource):
        return []
    name, parent = spec["name"], _parent_of(spec)
    if parent is not None and parent not in specs:
        raise ValueError(
            f"rest_api resource {name!r} takes values from {parent!r}, which is not a "
            "resource of the config"
        )
    if parent is None and spec.get("include_from_parent"):
        raise ValueError(
            f"rest_api resource {name!r} has include_from_parent but takes no values from "
            "a parent resource"
        )
    return [parent] if parent is not None else []


def make_client(client: t.ClientConfig, scope: Scope | None = None) -> RESTClient:
    return RESTClient(
        base_url=client["base_url"],
        headers=client.get("headers"),
        auth=config_setup.make_auth(client.get("auth"), "client", scope),
        paginator=config_setup.make_paginator(client.get("paginator"), "client"),
        session=client.get("session"),
    )


def _parent_of(spec: t.EndpointResource) -> str | None:
    endpoint = _endpoint_of(spec)
    path = str(endpoint.get("path", spec["name"]))
    return resolve.parent_name(spec["name"], resolve.parent_fields(endpoint), path)


def _endpoint_of(spec: t.EndpointResource) -> t.Endpoint:
    """The endpoint of a merged resource (always a dict: :func:`.merged_resource`)."""
    endpoint = spec.get("endpoint")
    return endpoint if isinstance(endpoint, dict) else t.Endpoint()


def make_resource(
    spec: t.EndpointResource,
    client: RESTClient,
    built: Mapping[str, Resource],
    scope: Scope | None = None,
) -> Resource:
    """One resource (or transformer) with its hints, steps and cursor."""
    name = spec["name"]
    call = _endpoint_call(spec, client, scope)
    fields = resolve.parent_fields(call.endpoint)
    parent = resolve.parent_name(name, fields, str(call.endpoint.get("path", "")))
    template = call.incremental.cursor if call.incremental is not None else None
    # the config's values under ResourceHints' keys, which it types
    hints = cast(t.ResourceHints, {k: v for k, v in spec.items() if k in HINT_KEYS})
    selected = bool(spec.get("selected", True))
    if parent is None:

        def fetch(incremental: Incremental | None = template) -> Iterator[PageData[TDataItem]]:
            yield from call.pages(call.endpoint, incremental)

        made: Resource = resource(fetch, name=name, selected=selected, **hints)
    else:
        include = list(spec.get("include_from_parent") or [])

        def fetch_children(
            items: TDataItem, incremental: Incremental | None = template
        ) -> Iterator[list[TDataItem]]:
            for item in items if isinstance(items, list) else [items]:
                endpoint = resolve.bind_parent(call.endpoint, item, fields, name)
                extra = {
                    f"_{parent}_{field}": resolve.field_value(
                        item, field, name, parent, as_path=False
                    )
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
    if spec.get("parallelized"):  # a child's requests run on extract's thread pool
        made.parallelize()
    return made


def _endpoint_call(
    spec: t.EndpointResource, client: RESTClient, scope: Scope | None = None
) -> EndpointCall:
    """The endpoint's request pieces: paginator, auth, hooks, selector, cursor."""
    name = spec["name"]
    endpoint = t.Endpoint(**_endpoint_of(spec))
    endpoint.setdefault("path", name)
    where = f"resource {name!r}"
    options = PageOptions(method=endpoint.get("method", "GET"))
    single = config_setup.single_entity_path(endpoint["path"])
    if "paginator" in endpoint:
        options["paginator"] = config_setup.make_paginator(endpoint["paginator"], where)
    elif single:  # one object: no paging, not even the client's paginator (dlt's)
        options["paginator"] = SinglePagePaginator()
    if "auth" in endpoint:
        options["auth"] = config_setup.make_auth(endpoint["auth"], where, scope)
    if "data_selector" in endpoint:
        options["data_selector"] = endpoint["data_selector"]
    elif single:  # the whole body is the record, not a list found in it
        options["data_selector"] = "$"
    if "headers" in endpoint:
        options["headers"] = endpoint["headers"]
    if "data" in endpoint:
        options["data"] = endpoint["data"]
    if endpoint.get("response_actions"):
        options["hooks"] = {"response": response_hooks(endpoint["response_actions"], where)}
    params = dict(endpoint.get("params") or {})
    incremental = _incremental_request(endpoint, params, where)
    endpoint["params"] = params
    return EndpointCall(name, client, endpoint, options, incremental)


def _incremental_request(
    endpoint: t.Endpoint, params: dict[str, TDataItem], where: str
) -> IncrementalRequest | None:
    """The cursor of a ``{"type": "incremental"}`` param (taken out of ``params``), else of
    ``endpoint.incremental``: as in dlt the param wins, and two such params are a
    ``ValueError``."""
    as_params = [
        k for k, v in params.items() if isinstance(v, Mapping) and v.get("type") == "incremental"
    ]
    if len(as_params) > 1:  # dlt 1.31's words (its typo too)
        raise ValueError(
            "Only a single incremental parameter is allower per endpoint. "
            f"Found parameters: `{as_params}`"
        )
    if as_params:
        spec = params.pop(as_params[0])
        _check_param_incremental(spec, as_params[0], where)
        cursor, convert = config_setup.make_incremental(spec, where)
        return IncrementalRequest(cursor, as_params[0], None, convert)
    if "incremental" in endpoint:
        spec = endpoint["incremental"]
        cursor, convert = config_setup.make_incremental(spec, where)
        return IncrementalRequest(cursor, spec.get("start_param"), spec.get("end_param"), convert)
    return None


def _check_param_incremental(spec: Mapping[str, TDataItem], param: str, where: str) -> None:
    """A cursor given as a query param has no end (dlt 1.31 refuses ``end_value`` and
    ``end_param`` there with this message) and is its own ``start_param``."""
    if "end_value" in spec or "end_param" in spec:
        raise ValueError(
            "Only `start_param` and `initial_value` are allowed in the configuration of param: "
            f"`{param}`. To set `end_value` too use the incremental configuration at the "
            "resource level. See https://dlthub.com/docs/dlt-ecosystem/verified-sources/"
            "rest_api/basic#incremental-loading"
        )
    if "start_param" in spec:
        raise TypeError(
            f"rest_api {where} incremental param {param!r}: unknown option 'start_param', which "
            "dlt 1.31 refuses too (the param itself receives the start value)"
        )


def _add_step(made: Resource, step: t.ProcessingSteps) -> None:
    config_setup.known_keys(
        f"resource {made.name!r} processing_steps", step, frozenset(PROCESSING_STEPS)
    )
    for kind in step:  # in the step's order, as dlt adds them
        if kind == "filter":
            made.add_filter(step["filter"])
        elif kind == "map":
            made.add_map(step["map"])
        else:
            made.add_yield_map(step["yield_map"])


def response_hooks(actions: list[t.ResponseAction], where: str) -> list[ResponseHook]:
    """``response_actions`` as client hooks: the first matching action applies."""
    rules = [a for a in actions if not callable(a)]
    for rule in rules:
        config_setup.known_keys(f"{where} response_actions", rule, ACTION_KEYS)

    def apply_rules(response: Response, *args: object, **kwargs: object) -> Response:
        for rule in rules:
            if _matches(rule, response):
                action = rule.get("action")
                if action == "ignore":
                    raise IgnoreResponseException(f"{response.status_code} at {response.url}")
                if isinstance(action, str):  # another name does nothing, as in dlt 1.31
                    return response
                for hook in _hooks_of(action):
                    response = hook(response) or response
                return response
        return response

    return [a for a in actions if callable(a)] + [apply_rules]


def _hooks_of(action: ResponseHook | list[ResponseHook] | None) -> list[ResponseHook]:
    """The hooks of a rule's action; a missing one fails when called, as it always did."""
    if isinstance(action, list):
        return action
    return [cast(ResponseHook, action)]  # None: the TypeError of calling it is the message


def _matches(rule: t.ResponseActionDict, response: Response) -> bool:
    status = rule.get("status_code")
    if status is not None and response.status_code not in (
        status if isinstance(status, list) else [status]
    ):
        return False
    content = rule.get("content")
    return content is None or str(content) in response.text
