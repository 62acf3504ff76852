"""The state a pipeline saved for a source, read outside a run (``source.state``,
``resource.state``).

While a pipeline extracts, ``loadstone.current`` hands out the live state dicts; outside a
run dlt's ``state`` members read what the active pipeline (the one made or attached last)
saved, as a copy: writing to it changes nothing saved. While a run extracts another source,
a source's state is the running pipeline's live section for it, saved with the run. With no
active pipeline they raise :class:`~loadstone.exceptions.PipelineStateNotAvailable`, as dlt's
do.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

from loadstone.exceptions import PipelineStateNotAvailable
from loadstone.typing import TDataItem

if TYPE_CHECKING:
    from loadstone.current import RunningPipeline as Pipeline

#: a state dict: user data the source keeps between runs
StateDict = dict[str, TDataItem]


def saved_source_state(source_name: str | None) -> StateDict:
    """The state the active pipeline keeps for ``source_name`` (``None``: the source a
    standalone resource runs in, named after the default schema): live during a run, else a
    copy."""
    pipeline = _active_pipeline()
    if pipeline is None:
        raise PipelineStateNotAvailable(
            f"source {source_name or '(standalone)'!r} asked for the pipeline state but no "
            "pipeline is active: call loadstone.pipeline(...) first"
        )
    name = source_name or pipeline.default_schema_name or pipeline.pipeline_name
    from loadstone import current

    if current.running() is pipeline:  # a run: the live section, saved with the run
        sources = pipeline.state.setdefault("sources", {})
        live = sources.setdefault(name, {})
        if isinstance(live, dict):
            return live
    found = (pipeline.state.get("sources") or {}).get(name) or {}
    return copy.deepcopy(found) if isinstance(found, dict) else {}


def resource_state_of(resource_name: str, source_name: str | None) -> StateDict:
    """A resource's state: live while a pipeline extracts its source, else from
    :func:`saved_source_state`."""
    from loadstone import current

    try:
        return current.resource_state(resource_name)
    except current.NoActiveContext:
        pass
    resources = saved_source_state(source_name).get("resources") or {}
    found = resources.get(resource_name) if isinstance(resources, dict) else None
    return found if isinstance(found, dict) else {}


def _active_pipeline() -> Pipeline | None:
    """The running pipeline, else the one made last, else None.

    ``loadstone.current.pipeline()`` would make a default pipeline here (as dlt's
    ``current.pipeline()`` does), but dlt's ``state`` members never make one, so this reads
    ``current``'s two slots without making one.
    """
    from loadstone import current

    return current.running() or current.active()
