"""The pipeline state of a pipeline that never ran, as dlt 1.31's (observed: its keys hold no
``sources`` until a source keeps state, so ``pipeline.state.get("sources")`` is None)."""

from __future__ import annotations

import loadstone as dlt
from loadstone.storage.state import new_state


def test_a_new_state_has_no_sources() -> None:
    assert "sources" not in new_state("p")


def test_a_new_pipelines_state_reads_no_sources() -> None:
    assert dlt.pipeline("fresh_state", destination="duckdb").state.get("sources") is None
