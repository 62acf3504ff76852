"""What a sink destination was given: the function, dlt's options, its configured arguments.

The decorator stores everything in the destination's ``config`` under dlt's names; this
module reads it once into a typed :class:`SinkOptions`, and binds the function's own extra
arguments (``api_key=loadstone.secrets.value``) from configuration as dlt does: under
``destination.<destination name>.<argument>`` (``DESTINATION__MY_SINK__API_KEY``), then
``destination.<argument>``, then ``<argument>``. A missing one fails when the loader is
opened, before any batch is sent, naming the keys tried.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from loadstone import config
from loadstone.destinations.contract import Destination
from loadstone.exceptions import ConfigFieldMissingException

#: the config keys that are the decorator's options, not arguments of the function
OPTION_KEYS = frozenset(
    {
        "destination_callable",
        "batch_size",
        "loader_file_format",
        "skip_dlt_columns_and_tables",
        "max_table_nesting",
        "max_parallel_load_jobs",
        "loader_parallelism_strategy",
        "spec",
        "credentials",
    }
)
_NOTHING = object()


@attrs.frozen
class SinkOptions:
    """The settings of one sink destination."""

    name: str
    function: Callable[..., Any]
    batch_size: int
    file_format: str
    skip_dlt: bool
    spec: type | None
    arguments: Mapping[str, object]

    @classmethod
    def of(cls, destination: Destination) -> SinkOptions:
        given = destination.config
        function = given.get("destination_callable")
        if not callable(function):
            raise TypeError(
                f"destination {destination.name!r} has no sink function: make it with "
                f"loadstone.destination(func) or loadstone.destinations.destination(func)"
            )
        spec = given.get("spec")
        return cls(
            name=destination.name,
            function=function,
            batch_size=int(str(given.get("batch_size", 10))),
            file_format=str(given.get("loader_file_format") or "typed-jsonl"),
            skip_dlt=bool(given.get("skip_dlt_columns_and_tables", True)),
            spec=spec if isinstance(spec, type) else None,
            arguments={k: v for k, v in given.items() if k not in OPTION_KEYS},
        )

    def bound(self) -> Callable[..., Any]:
        """The function with its configured arguments filled (``items``, ``table`` left)."""
        try:
            parameters = list(inspect.signature(self.function).parameters.values())
        except (TypeError, ValueError):  # a builtin or C function: nothing to inject
            return self.function
        values: dict[str, object] = {}
        missing: dict[str, list[str]] = {}
        for param in parameters[2:]:
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                continue
            if param.name in self.arguments:
                values[param.name] = self.arguments[param.name]
                continue
            if param.default is not config.value:
                continue
            keys = [
                f"destination.{self.name}.{param.name}",
                f"destination.{param.name}",
                param.name,
            ]
            value = config.resolve(*keys, default=_NOTHING)
            if value is _NOTHING and self.spec is not None:
                value = getattr(self.spec, param.name, _NOTHING)
                value = _NOTHING if value is None or value is config.value else value
            if value is _NOTHING:
                missing[param.name] = keys
            else:
                values[param.name] = value
        if missing:
            raise ConfigFieldMissingException(f"{self.name}()", missing)
        return functools.partial(self.function, **values)
