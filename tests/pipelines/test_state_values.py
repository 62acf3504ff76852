"""Typed values in the pipeline state: ``pipeline.state`` holds a cursor's datetime (and a
date or decimal a resource keeps) as dlt 1.31's does; files and the destination store them
as dlt stores them (its marked text), so each tool restores the other's state."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import loadstone as dlt
from loadstone.exceptions import PipelineStepFailed

WHEN = dt.datetime(2024, 5, 1, 12, 30, tzinfo=dt.timezone.utc)


@dlt.resource(primary_key="id")
def events(updated_at: Any = dlt.sources.incremental("updated_at")) -> Any:
    dlt.current.resource_state()["kept"] = {"day": dt.date(2024, 5, 2), "amount": Decimal("1.25")}
    yield [{"id": 1, "updated_at": WHEN - dt.timedelta(days=1)}, {"id": 2, "updated_at": WHEN}]


def _resource_state(pipe: Any) -> Any:
    return pipe.state["sources"][pipe.default_schema_name]["resources"]["events"]


def test_pipeline_state_holds_typed_values_and_files_hold_dlts_marks(tmp_path: Path) -> None:
    pipe = dlt.pipeline("typed_state", destination="duckdb", pipelines_dir=str(tmp_path))
    pipe.run(events())
    state = _resource_state(pipe)
    assert state["incremental"]["updated_at"]["last_value"] == WHEN
    assert state["kept"] == {"day": dt.date(2024, 5, 2), "amount": Decimal("1.25")}
    stored = json.loads((tmp_path / "typed_state" / "state.json").read_text())
    stored_resource = stored["sources"][pipe.default_schema_name]["resources"]["events"]
    assert stored_resource["incremental"]["updated_at"]["last_value"] == "\uf027" + WHEN.isoformat()
    assert stored_resource["kept"] == {"day": "\uf0282024-05-02", "amount": "\uf0261.25"}
    attached = dlt.attach("typed_state", pipelines_dir=str(tmp_path))
    assert _resource_state(attached)["incremental"]["updated_at"]["last_value"] == WHEN


def test_state_restored_from_the_destination_is_typed(tmp_path: Path) -> None:
    database = str(tmp_path / "typed.duckdb")
    pipe = dlt.pipeline(
        "typed_restore",
        destination=dlt.destinations.duckdb(database),
        pipelines_dir=str(tmp_path / "pl"),
        dataset_name="d",
    )
    pipe.run(events())
    shutil.rmtree(tmp_path / "pl")
    again = dlt.pipeline(
        "typed_restore",
        destination=dlt.destinations.duckdb(database),
        pipelines_dir=str(tmp_path / "pl"),
        dataset_name="d",
    )
    again.sync_destination()
    assert _resource_state(again)["incremental"]["updated_at"]["last_value"] == WHEN
    again.run(events())  # the restored cursor filters: nothing new
    with again.sql_client() as client:
        assert client.execute_sql("SELECT count(*) FROM events")[0][0] == 2


def test_a_failed_extract_leaves_the_state_as_the_last_run_saved_it(tmp_path: Path) -> None:
    """dlt 1.31 (p764): what a resource wrote into its state before it raised is not in
    ``pipeline.state`` afterwards; the next run starts from the saved value."""
    failing = {"on": False}

    @dlt.resource
    def pages() -> Any:
        state = dlt.current.resource_state()
        last = state.get("last_page", 0)
        for page in (last + 1, last + 2):
            yield {"page": page}
            state["last_page"] = page
        if failing["on"]:
            raise RuntimeError("the API went away")

    pipe = dlt.pipeline("failed_state", destination="duckdb", pipelines_dir=str(tmp_path))
    pipe.run(pages())
    failing["on"] = True
    with pytest.raises(PipelineStepFailed, match="the API went away"):
        pipe.run(pages())
    saved = pipe.state["sources"][pipe.default_schema_name]["resources"]["pages"]
    assert saved == {"last_page": 2}
    failing["on"] = False
    pipe.run(pages())
    with pipe.sql_client() as client:
        assert client.execute_sql("SELECT page FROM pages ORDER BY page") == [
            (1,),
            (2,),
            (3,),
            (4,),
        ]


def test_a_time_and_bytes_in_state_are_stored_with_dlts_marks_and_come_back(
    tmp_path: Path,
) -> None:
    """dlt 1.31 marks a time ``\\uf02d`` and bytes ``\\uf02b`` + base64 in ``state.json``; bytes
    were stored as their printed text (``"b'xy'"``) and came back a string."""

    @dlt.resource
    def kept() -> Any:
        dlt.current.resource_state().update(at=dt.time(1, 2, 3), raw=b"xy")
        yield {"id": 1}

    pipe = dlt.pipeline("marked_state", destination="duckdb", pipelines_dir=str(tmp_path))
    pipe.run(kept())
    stored = json.loads((tmp_path / "marked_state" / "state.json").read_text())
    resource = stored["sources"][pipe.default_schema_name]["resources"]["kept"]
    assert resource == {"at": "\uf02d01:02:03", "raw": "\uf02beHk="}
    attached = dlt.attach("marked_state", pipelines_dir=str(tmp_path))
    restored = attached.state["sources"][attached.default_schema_name]["resources"]["kept"]
    assert restored == {"at": dt.time(1, 2, 3), "raw": b"xy"}
