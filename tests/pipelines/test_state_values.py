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

import loadstone as dlt

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
