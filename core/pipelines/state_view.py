"""What a pipeline's state tells, and whether it is the active pipeline.

:class:`PipelineStateView` is a base class of :class:`~loadstone.pipelines.pipeline.Pipeline`:
the state and schemas as the :class:`~loadstone.runtime.working_folder.WorkingFolder` keeps
them (``state``, ``schemas``, ``first_run``, the names), dlt's local state values
(``get_local_state_val`` / ``set_local_state_val``), and the active pipeline that
``loadstone.current.pipeline()`` returns outside a run (``activate`` / ``deactivate``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loadstone import current
from loadstone.exceptions import PipelineNotActive
from loadstone.storage import state as state_module
from loadstone.storage.state import PipelineState
from loadstone.typing import TDataItem

if TYPE_CHECKING:
    from loadstone.current import RunningPipeline as Pipeline
    from loadstone.runtime.working_folder import WorkingFolder
    from loadstone.schema import Schema

__all__ = ["PipelineStateView"]


class PipelineStateView:
    """A pipeline's state and schemas; the pipeline provides its folder and name."""

    #: the state file in the working folder (dlt's name)
    STATE_FILE = state_module.STATE_FILE
    #: what a dataset name without one given is: ``<pipeline_name>_dataset`` (dlt's name)
    DEFAULT_DATASET_SUFFIX = "_dataset"

    folder: WorkingFolder
    pipeline_name: str

    @property
    def state(self) -> PipelineState:
        return self.folder.state

    @property
    def schemas(self) -> dict[str, Schema]:
        """The pipeline's schemas by name."""
        return self.folder.schemas

    @property
    def first_run(self) -> bool:
        return bool(self.state.get("_local", {}).get("first_run", True))

    @property
    def schema_names(self) -> list[str]:
        """Names of the pipeline's schemas in name order (dlt's ``schema_names``; the
        default one is ``default_schema_name``)."""
        return sorted(self.state.get("schema_names") or [])

    @property
    def default_schema_name(self) -> str | None:
        name = self.state.get("default_schema_name")
        return str(name) if name is not None else None

    # -- dlt's local state values ---------------------------------------------------------
    def get_local_state_val(self, key: str) -> TDataItem:
        """A value of the state's ``_local`` part (never sent to the destination); a missing
        key raises ``KeyError``, as dlt's."""
        return self.folder.local_state()[key]

    def set_local_state_val(self, key: str, value: TDataItem) -> None:
        """Set a value of the state's ``_local`` part and save the state."""
        self.folder.local_state()[key] = value
        state_module.save_local(self.folder.root, self.state)

    # -- the active pipeline --------------------------------------------------------------
    @property
    def is_active(self) -> bool:
        """Whether ``loadstone.current.pipeline()`` returns this pipeline outside a run."""
        return current.active() is self._as_pipeline()

    def activate(self) -> None:
        """Make this the active pipeline (``pipeline()`` and ``attach()`` activate theirs)."""
        current.activate(self._as_pipeline())

    def deactivate(self) -> None:
        """No active pipeline any more; :class:`PipelineNotActive` when this is not it."""
        if not self.is_active:
            raise PipelineNotActive(
                f"Pipeline `{self.pipeline_name}` is not active so it cannot be deactivated"
            )
        current.deactivate()

    def _as_pipeline(self) -> Pipeline:
        raise NotImplementedError
