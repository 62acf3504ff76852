"""``loadstone.current``: what the running source or pipeline sees about itself.

Mirrors ``dlt.current``: inside a ``@source`` function body ``source_schema()`` is the
source's schema; while a pipeline extracts, ``source_state()`` / ``resource_state()`` are
the persistent state dicts that are saved with the pipeline (and in the destination).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any

from loadstone.exceptions import NoActiveContext
from loadstone.extract.sources import current_schema

_state: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
    "loadstone_current_state", default=None
)
_resource_name: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "loadstone_current_resource", default=None
)
_pipeline: contextvars.ContextVar[Any] = contextvars.ContextVar(
    "loadstone_current_pipeline", default=None
)


def source_schema() -> Any:
    """The schema of the source whose function body is running."""
    schema = current_schema()
    if schema is None:
        raise NoActiveContext(
            "loadstone.current.source_schema() works only inside a @source function body"
        )
    return schema


def pipeline() -> Any:
    """The pipeline that is running (extracting) right now."""
    active = _pipeline.get()
    if active is None:
        raise NoActiveContext("no pipeline is running")
    return active


def source_state() -> dict[str, Any]:
    """The persistent state dict of the source being extracted (saved with the pipeline)."""
    state = _state.get()
    if state is None:
        raise NoActiveContext("source_state() works only while a pipeline extracts a source")
    return state


def resource_state(resource_name: str | None = None) -> dict[str, Any]:
    """The persistent state dict of a resource, inside its source's state."""
    name = resource_name or _resource_name.get()
    if name is None:
        raise NoActiveContext("resource_state() works only while a pipeline extracts a resource")
    resources = source_state().setdefault("resources", {})
    return resources.setdefault(name, {})


@contextlib.contextmanager
def extract_context(pipeline_obj: Any, state: dict[str, Any]) -> Iterator[None]:
    """Set the running pipeline and the source state for the extract step."""
    token_p = _pipeline.set(pipeline_obj)
    token_s = _state.set(state)
    try:
        yield
    finally:
        _pipeline.reset(token_p)
        _state.reset(token_s)


@contextlib.contextmanager
def resource_context(name: str) -> Iterator[None]:
    token = _resource_name.set(name)
    try:
        yield
    finally:
        _resource_name.reset(token)
