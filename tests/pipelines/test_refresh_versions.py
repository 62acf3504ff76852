"""``refresh="drop_sources"`` takes the dropped schema's ``_dlt_version`` row away, as dlt
1.31 does (differential programs p605, p619, p637): a working folder restored from the
destination then reads the schema the refresh left, not the one it dropped."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import loadstone as dlt


@dlt.source
def src(extra: bool = False) -> Any:
    @dlt.resource
    def a() -> Any:
        yield [{"x": 1, **({"y": 2} if extra else {})}]

    return a


def _pipeline(tmp_path: Path) -> dlt.Pipeline:
    return dlt.pipeline(
        "rv", destination=dlt.destinations.duckdb(str(tmp_path / "rv.duckdb")),
        dataset_name="drv", pipelines_dir=str(tmp_path / "pl"),
    )  # fmt: skip


def _version_rows(pipeline: dlt.Pipeline) -> int:
    with pipeline.sql_client() as client:
        return int(client.execute_sql("SELECT count(*) FROM _dlt_version")[0][0])


def test_a_dropped_schemas_version_row_goes_with_it(tmp_path: Path) -> None:
    p = _pipeline(tmp_path)
    p.run(src())
    p.run(src(extra=True))
    assert _version_rows(p) == 2
    p.run(src(), refresh="drop_sources")  # the schema is the first one's again
    assert _version_rows(p) == 1  # dlt's: the first version's row only


def test_a_restored_folder_reads_the_schema_the_refresh_left(tmp_path: Path) -> None:
    p = _pipeline(tmp_path)
    p.run(src())
    p.run(src(extra=True))
    p.run(src(), refresh="drop_sources")
    shutil.rmtree(tmp_path / "pl")
    restored = _pipeline(tmp_path)
    restored.sync_destination()
    assert sorted(restored.default_schema.tables["a"]["columns"]) == [
        "_dlt_id",
        "_dlt_load_id",
        "x",
    ]


def _history(pipeline: dlt.Pipeline) -> tuple[int, list[str]]:
    stored = pipeline.default_schema.to_dict()
    return stored["version"], list(stored["previous_hashes"])


def test_drop_sources_starts_the_schema_again(tmp_path: Path) -> None:
    # dlt 1.31 (p1202): versions 2, 3, then 2 again after drop_sources; its history is a
    # first run's two saves, then the dropped schema's hash
    p = _pipeline(tmp_path)
    p.run(src())
    p.run(src(extra=True))
    dropped = p.default_schema.version_hash
    assert _history(p)[0] == 3
    p.run(src(), refresh="drop_sources")
    version, history = _history(p)
    assert (version, len(history), history[-1]) == (2, 3, dropped)


def test_a_drop_takes_every_version_row_of_the_schema(tmp_path: Path) -> None:
    # dlt 1.31 (p1214): three runs leave three _dlt_version rows, a drop_resources run of
    # one resource leaves one (the new version's)
    p = _pipeline(tmp_path)
    p.run(src())
    p.run(src(extra=True))
    p.run(src(extra=True).with_resources("a"), refresh="drop_resources")
    assert _version_rows(p) == 1
