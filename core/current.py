"""``loadstone.current``: what the running source or pipeline sees about itself.

Mirrors ``dlt.current``: inside a ``@source`` function body ``source_schema()`` is the
source's schema; while a pipeline extracts, ``source()`` is the source being extracted,
``resource_name()`` the resource whose generator runs, and ``source_state()`` (``state()``)
/ ``resource_state()`` the persistent state dicts saved with the pipeline (and in the
destination). ``pipeline()`` is the running pipeline, else the one made last, else a new
default pipeline, as dlt's. Each call outside its context raises the error dlt raises there
(all subclasses of ``NoActiveContext``).
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
from collections.abc import Iterator
from typing import TYPE_CHECKING

from loadstone.exceptions import (
    CurrentSourceNotAvailable,
    CurrentSourceSchemaNotAvailable,
    NoActiveContext,
    ResourceNameNotAvailable,
    SourceSectionNotAvailable,
)
from loadstone.extract.source import current_schema, current_source_name
from loadstone.typing import TDataItem

if TYPE_CHECKING:
    from loadstone.extract.source import Source
    from loadstone.pipelines.pipeline import Pipeline
    from loadstone.schema import Schema

__all__ = [
    "NoActiveContext",
    "activate",
    "active",
    "deactivate",
    "extract_context",
    "pipeline",
    "resource_context",
    "resource_name",
    "resource_state",
    "source",
    "source_schema",
    "source_state",
    "state",
]

#: a state dict: user data the source keeps between runs
StateDict = dict[str, TDataItem]

_state: contextvars.ContextVar[StateDict | None] = contextvars.ContextVar(
    "loadstone_current_state", default=None
)
_resource_name: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "loadstone_current_resource", default=None
)
_pipeline: contextvars.ContextVar[Pipeline | None] = contextvars.ContextVar(
    "loadstone_current_pipeline", default=None
)
_source: contextvars.ContextVar[Source | None] = contextvars.ContextVar(
    "loadstone_current_source", default=None
)
#: the pipeline made (or attached) last: dlt's "active" pipeline, seen outside a run
_active: list[Pipeline] = []


def source_schema() -> Schema:
    """The schema of the source whose function body runs, or of the source being extracted."""
    schema: Schema | None = current_schema()
    extracted = _source.get()
    if schema is None and extracted is not None:
        schema = extracted.schema
    if schema is not None:
        return schema
    raise CurrentSourceSchemaNotAvailable(
        "loadstone.current.source_schema() works only inside a @source function body or "
        "while a pipeline extracts a source"
    )


def source() -> Source:
    """The source being extracted right now (dlt's ``current.source()``)."""
    extracted = _source.get()
    if extracted is None:
        raise CurrentSourceNotAvailable("source() works only while a pipeline extracts a source")
    return extracted


def resource_name() -> str:
    """The name of the resource whose generator runs right now."""
    name = _resource_name.get()
    if name is None:
        raise ResourceNameNotAvailable("resource_name() works only while a resource runs")
    return name


def activate(pipeline_obj: Pipeline) -> None:
    """Make ``pipeline_obj`` the one ``pipeline()`` returns outside a run (dlt activates the
    pipeline ``dlt.pipeline()`` / ``attach()`` made last)."""
    _active[:] = [pipeline_obj]


def running() -> Pipeline | None:
    """The pipeline whose run is in progress here, without making one."""
    return _pipeline.get()


def active() -> Pipeline | None:
    """The active pipeline, without making one (``Pipeline.is_active``)."""
    return _active[0] if _active else None


def deactivate() -> None:
    """No active pipeline any more (dlt's ``pipeline.deactivate()``)."""
    _active.clear()


def pipeline() -> Pipeline:
    """The running pipeline; outside a run the one made last, else a new default one."""
    running = _pipeline.get()
    if running is not None:
        return running
    if not _active:
        from loadstone.pipelines.pipeline import pipeline as make_pipeline

        activate(make_pipeline())  # dlt makes its default pipeline here too
    return _active[0]


def source_state() -> StateDict:
    """The persistent state dict of the source being extracted (saved with the pipeline).

    Inside a ``@source`` body, with an active pipeline, a copy of the source's saved state:
    dlt reads it there, and what the body writes is not kept (the extract's state is).
    """
    found = _state.get()
    if found is not None:
        return found
    name = current_source_name()
    if name is not None and _active:
        saved = _active[0].state.get("sources", {}).get(name, {})
        return copy.deepcopy(saved) if isinstance(saved, dict) else {}
    raise SourceSectionNotAvailable(
        "source_state() works only while a pipeline extracts a source, or in a @source body "
        "once a pipeline is made"
    )


def state() -> StateDict:
    """dlt's ``current.state()``: the state of the source being extracted."""
    return source_state()


def resource_state(resource_name: str | None = None) -> StateDict:
    """The persistent state dict of a resource, inside its source's state."""
    sources_state = source_state()  # dlt asks for the source section first
    name = resource_name or _resource_name.get()
    if name is None:
        raise ResourceNameNotAvailable("resource_state() works only while a resource runs")
    resources = sources_state.setdefault("resources", {})
    if not isinstance(resources, dict):  # a state written by hand: start it over
        resources = sources_state["resources"] = {}
    found = resources.setdefault(name, {})
    if not isinstance(found, dict):
        found = resources[name] = {}
    return found


@contextlib.contextmanager
def extract_context(
    pipeline_obj: Pipeline, state: StateDict, source: Source | None = None
) -> Iterator[None]:
    """Set the running pipeline, the source state and (when given) the source for the extract
    step; the pipeline stays the active one afterwards, as dlt's does."""
    activate(pipeline_obj)
    tokens = (_pipeline.set(pipeline_obj), _state.set(state), _source.set(source))
    try:
        yield
    finally:
        _pipeline.reset(tokens[0])
        _state.reset(tokens[1])
        _source.reset(tokens[2])


@contextlib.contextmanager
def resource_context(name: str) -> Iterator[None]:
    """Name the resource whose generator runs (``resource_name()``, ``resource_state()``)."""
    token = _resource_name.set(name)
    try:
        yield
    finally:
        _resource_name.reset(token)
