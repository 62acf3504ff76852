"""Package data files on ``packages.storage_url``, the engine choice and the run's trace."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from cli_support import cli
from cluster_support import write_events
from normalizer_support import snake_case

import loadstone
from loadstone.errors import LoadstoneError
from loadstone.normalize.contract import NormalizeContext, NormalizeError
from loadstone.plugins.normalizers.relational import RelationalNormalizer
from loadstone.storage.load_package import LoadPackageError


def _events(pipe: Any) -> tuple[int, int]:
    with pipe.sql_client() as client:
        rows = client.execute_sql(
            f"select count(*), count(distinct id) from {pipe.dataset_name}.events"
        )
    return tuple(rows[0])  # type: ignore[return-value]


def test_data_files_live_on_the_storage_and_metadata_in_the_pipelines_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "store"
    monkeypatch.setenv("PACKAGES__STORAGE_URL", store.as_uri())
    monkeypatch.setenv("LOAD__KEEP_COMPLETED_PACKAGES", "true")
    pipe = loadstone.pipeline("stored", destination="duckdb", pipelines_dir=tmp_path / "p")
    pipe.run([{"id": n, "tags": [n, n + 1]} for n in range(50)], table_name="events")
    (package,) = pipe.list_packages()
    assert package.root.parent == tmp_path / "p" / "stored" / "packages"
    assert package.data_root == store / "stored" / package.load_id
    assert all(f.path.is_relative_to(package.data_root) for f in package.extracted_files())
    normalized = [f for t in package.normalized_tables().values() for f in t.files]
    assert normalized and all(
        f.is_relative_to(package.data_root) and f.exists() for f in normalized
    )
    assert _events(pipe) == (50, 50)


def test_an_input_on_the_storage_is_read_where_it_is_and_refused_once_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "store"
    monkeypatch.setenv("PACKAGES__STORAGE_URL", str(store))
    (store / "inbox").mkdir(parents=True)
    source = write_events(store / "inbox" / "e.jsonl", 30)
    pipe = loadstone.pipeline("inplace", destination="duckdb", pipelines_dir=tmp_path / "p")
    pipe.extract(str(source), table_name="events")
    (package,) = pipe.list_pending_packages()
    assert [f.path for f in package.extracted_files()] == [source]
    with open(source, "a", encoding="utf-8") as handle:
        handle.write('{"id": 999}\n')
    os.utime(source, (1, 1))
    with pytest.raises(LoadPackageError, match="changed after extract"):
        pipe.normalize()
    pipe.drop_pending_packages()
    assert source.exists()  # the user's file is never the package's to delete
    pipe.run(str(source), table_name="events")
    assert _events(pipe) == (31, 31)


def _context(spark: Any) -> NormalizeContext:
    return NormalizeContext(spark=spark, naming=snake_case())


def test_engine_local_never_starts_spark(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NORMALIZE__ENGINE", "local")
    monkeypatch.setenv("NORMALIZE__CHUNK_BYTES", "2000")

    def no_spark() -> Any:
        raise AssertionError("normalize.engine = local started Spark")

    source = write_events(tmp_path / "e.jsonl", 200)
    pipe = loadstone.pipeline("localonly", destination="duckdb", pipelines_dir=tmp_path / "p")
    pipe.spark = no_spark
    pipe.run(str(source), table_name="events")
    trace = pipe.last_trace["normalize"]
    assert trace["engine"] == "local" and trace["master"] is None
    # every chunk on this machine: the local worker processes (or the driver), never Spark
    executors = {c["executor"] for c in trace["chunks"]}
    assert len(trace["chunks"]) > 1
    assert all(e == "driver" or e.startswith("local worker ") for e in executors), executors
    assert all(c["native"] for c in trace["chunks"])


def test_engine_setting_is_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = write_events(tmp_path / "e.jsonl", 5)
    pipe = loadstone.pipeline("badengine", destination="duckdb", pipelines_dir=tmp_path / "p")
    monkeypatch.setenv("NORMALIZE__ENGINE", "cluster")
    with pytest.raises(
        LoadstoneError, match=r"normalize\.engine must be one of auto, local, spark"
    ):
        pipe.run(str(source), table_name="events")
    monkeypatch.setenv("NORMALIZE__ENGINE", "spark")
    normalizer = RelationalNormalizer()
    with pytest.raises(NormalizeError, match="no Spark session"):
        normalizer._run(_context(None), None, [object()], {}, 0)  # type: ignore[arg-type,list-item]


@pytest.mark.spark
def test_engine_spark_runs_every_chunk_as_a_task_and_trace_json_shows_it(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.setenv("NORMALIZE__ENGINE", "spark")
    monkeypatch.setenv("NORMALIZE__NATIVE", "required")
    source = write_events(tmp_path / "e.jsonl", 40)  # one small chunk: still a Spark task
    pipes = str(tmp_path / "p")
    assert cli("run", str(source), "-t", "events", "-p", "onspark", "--pipelines-dir", pipes) == 0
    capsys.readouterr()
    assert cli("pipeline", "onspark", "trace", "--json", "--pipelines-dir", pipes) == 0
    trace = json.loads(capsys.readouterr().out)["normalize"]
    assert trace["engine"] == "spark" and trace["master"] == "local[2]"
    (chunk,) = trace["chunks"]
    assert chunk["executor"] != "driver" and chunk["native"] is True
