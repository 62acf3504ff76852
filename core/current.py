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
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from loadstone.exceptions import (
    CurrentSourceNotAvailable,
    CurrentSourceSchemaNotAvailable,
    NoActiveContext,
    PipelineNotActive,
    ResourceNameNotAvailable,
    SourceSectionNotAvailable,
)
from loadstone.typing import TDataItem

if TYPE_CHECKING:
    from loadstone.schema import Schema


class RunningPipeline(Protocol):
    """What ``current`` and the sources read of a pipeline
    (:class:`loadstone.pipelines.pipeline.Pipeline` is the one): named by protocol, because
    ``current`` lies below the pipeline, which registers itself here."""

    @property
    def pipeline_name(self) -> str: ...

    @property
    def default_schema_name(self) -> str | None: ...

    @property
    def state(self) -> dict[str, TDataItem]: ...

    @property
    def working_dir(self) -> str: ...

    def run(self, *args: Any, **kwargs: Any) -> Any: ...


class ExtractedSource(Protocol):
    """What ``current`` reads of the source being extracted
    (:class:`loadstone.extract.source.Source` is the one)."""

    @property
    def name(self) -> str: ...

    @property
    def schema(self) -> Schema: ...


__all__ = [
    "NoActiveContext",
    "activate",
    "active",
    "current_schema",
    "current_source_name",
    "deactivate",
    "extract_context",
    "make_default_pipeline_with",
    "pipeline",
    "resource_context",
    "resource_name",
    "resource_state",
    "schema_context",
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
_pipeline: contextvars.ContextVar[RunningPipeline | None] = contextvars.ContextVar(
    "loadstone_current_pipeline", default=None
)
_source: contextvars.ContextVar[ExtractedSource | None] = contextvars.ContextVar(
    "loadstone_current_source", default=None
)
#: the pipeline made (or attached) last: dlt's "active" pipeline, seen outside a run
_active: list[RunningPipeline] = []
#: makes dlt's default pipeline: the package (``loadstone/__init__.py``) registers it here
#: on import (``current`` lies below the pipeline and never imports it)
_default_pipeline: list[Callable[[], RunningPipeline]] = []
_current_schema: contextvars.ContextVar[Schema | None] = contextvars.ContextVar(
    "loadstone_current_schema", default=None
)
_current_source_name: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "loadstone_current_source_name", default=None
)


@contextlib.contextmanager
def schema_context(schema: Schema | None, source_name: str | None = None) -> Iterator[None]:
    """Make ``schema`` the one ``loadstone.current.source_schema()`` returns."""
    token = _current_schema.set(schema)
    token_name = _current_source_name.set(source_name)
    try:
        yield
    finally:
        _current_schema.reset(token)
        _current_source_name.reset(token_name)


def current_schema() -> Schema | None:
    """The schema of the source whose function body runs now, if one does."""
    return _current_schema.get()


def current_source_name() -> str | None:
    """The name of the source whose function body runs now (names nameless data)."""
    return _current_source_name.get()


def make_default_pipeline_with(factory: Callable[[], RunningPipeline]) -> None:
    """Register what makes the default pipeline (:func:`pipeline` outside a run, when none
    was made): ``loadstone/__init__.py`` registers one that makes dlt's default pipeline."""
    _default_pipeline[:] = [factory]


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


def source() -> ExtractedSource:
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


def activate(pipeline_obj: RunningPipeline) -> None:
    """Make ``pipeline_obj`` the one ``pipeline()`` returns outside a run (dlt activates the
    pipeline ``dlt.pipeline()`` / ``attach()`` made last)."""
    _active[:] = [pipeline_obj]


def running() -> RunningPipeline | None:
    """The pipeline whose run is in progress here, without making one."""
    return _pipeline.get()


def active() -> RunningPipeline | None:
    """The active pipeline, without making one (``Pipeline.is_active``)."""
    return _active[0] if _active else None


def deactivate() -> None:
    """No active pipeline any more (dlt's ``pipeline.deactivate()``)."""
    _active.clear()


def pipeline() -> RunningPipeline:
    """The running pipeline; outside a run the one made last, else a new default one."""
    running = _pipeline.get()
    if running is not None:
        return running
    if not _active:
        if not _default_pipeline:
            raise PipelineNotActive(
                "no pipeline was made in this process: call loadstone.pipeline(...) first"
            )
        activate(_default_pipeline[0]())  # dlt makes its default pipeline here too
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
    pipeline_obj: RunningPipeline, state: StateDict, source: ExtractedSource | None = None
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
def source_context(source: ExtractedSource) -> Iterator[None]:
    """``source()`` / ``source_schema()`` answer ``source`` inside: the source dlt makes of
    the resources a run was given alone, named after the run's schema."""
    token = _source.set(source)
    try:
        yield
    finally:
        _source.reset(token)


@contextlib.contextmanager
def source_state_context(state: StateDict) -> Iterator[None]:
    """``source_state()`` is ``state`` inside: a resource iterated outside a run reads a
    copy of what the active pipeline saved for its source, as dlt's does."""
    token = _state.set(state)
    try:
        yield
    finally:
        _state.reset(token)


class resource_context:  # lower case: used as a function (``with resource_context(name):``)
    """Name the resource whose generator runs (``resource_name()``, ``resource_state()``).

    A class rather than a generator: extract enters it around every page a resource
    yields, and a generator-based context manager costs several times as much.
    """

    __slots__ = ("_token", "name")

    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self) -> None:
        self._token = _resource_name.set(self.name)

    def __exit__(self, *exc_info: object) -> None:
        _resource_name.reset(self._token)
