"""Package data files on ``packages.storage_url``, the engine choice and the run's trace."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

import pytest
from cli_support import cli
from cluster_support import write_events
from normalizer_support import snake_case
from s3_support import S3Server

import loadstone
from loadstone.exceptions import LoadPackageError, LoadstoneError, NormalizeError
from loadstone.normalizers.contract import NormalizeContext
from loadstone.plugins.normalizers.relational import RelationalNormalizer, spark_tasks
from loadstone.plugins.normalizers.relational.task import Chunk, EngineConfig
from loadstone.storage.filesystem import open_filesystem
from loadstone.storage.package_storage import RemoteData


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


@pytest.fixture
def s3_packages(
    s3_server: S3Server,
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[str, S3Server]:
    """``packages.storage_url`` on a fresh bucket of the loopback S3 server; its URL."""
    url = f"s3://{s3_server.new_bucket()}/packages"
    monkeypatch.setenv("PACKAGES__STORAGE_URL", url)
    for key, value in s3_server.credentials.items():
        monkeypatch.setenv(f"PACKAGES__CREDENTIALS__{key.upper()}", value)
    return url, s3_server


def _objects(url: str, credentials: dict[str, str]) -> list[str]:
    fs, path = open_filesystem(url, credentials)
    return sorted(fs.find(path))


def test_packages_on_s3_hold_the_data_files_and_load_every_row_once(
    s3_packages: tuple[str, S3Server],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, server = s3_packages
    monkeypatch.setenv("NORMALIZE__ENGINE", "local")
    monkeypatch.setenv("NORMALIZE__CHUNK_BYTES", "20000")  # several chunks, local workers
    source = write_events(tmp_path / "e.jsonl", 400)
    pipe = loadstone.pipeline("ons3", destination="duckdb", pipelines_dir=tmp_path / "p")
    pipe.extract(str(source), table_name="events")
    (package,) = pipe.list_pending_packages()
    extracted = _objects(f"{url}/ons3/{package.load_id}", server.credentials)
    assert extracted and all("/extracted/" in key for key in extracted)
    assert not list(package.root.rglob("*.jsonl"))  # the data lives on the store only
    pipe.normalize()
    stored = _objects(f"{url}/ons3/{package.load_id}/normalized", server.credentials)
    (package,) = pipe.list_pending_packages()
    table = package.normalized_tables()["events"]
    assert len(table.files) > 1  # one per chunk
    assert all(package.remote.url_of(f).partition("://")[2] in stored for f in table.files)  # type: ignore[union-attr]
    assert not list(package.root.rglob("*.parquet"))
    pipe.run()
    assert _events(pipe) == (400, 400)
    assert _objects(f"{url}/ons3", server.credentials) == []  # loaded: its data is deleted


def test_an_unreachable_package_store_fails_clearly_and_the_package_finishes_after_the_fix(
    s3_packages: tuple[str, S3Server],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, server = s3_packages
    source = write_events(tmp_path / "e.jsonl", 60)
    pipe = loadstone.pipeline("s3down", destination="duckdb", pipelines_dir=tmp_path / "p")
    pipe.extract(str(source), table_name="events")
    monkeypatch.setenv("PACKAGES__CREDENTIALS__ENDPOINT_URL", "http://127.0.0.1:9")
    # botocore's retries back off about 6 s against the closed port; the test is the error
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    with pytest.raises(LoadstoneError) as failure:
        pipe.run()
    message = str(failure.value)
    assert "http://127.0.0.1:9" in message and url in message, message
    assert [p.state for p in pipe.list_pending_packages()] == ["extracted"]
    assert [p.state for p in pipe.list_packages()] == ["extracted"]  # nothing loaded
    monkeypatch.setenv("PACKAGES__CREDENTIALS__ENDPOINT_URL", server.endpoint_url)
    pipe.run()
    assert _events(pipe) == (60, 60)


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


def test_an_input_on_the_object_store_is_read_where_it_is_and_refused_once_changed(
    s3_packages: tuple[str, S3Server], tmp_path: Path
) -> None:
    url, server = s3_packages
    fs, root = open_filesystem(url, server.credentials)
    source = f"{url}/inbox/e.jsonl"
    fs.put_file(str(write_events(tmp_path / "e.jsonl", 70)), f"{root}/inbox/e.jsonl")
    pipe = loadstone.pipeline("s3input", destination="duckdb", pipelines_dir=tmp_path / "p")
    pipe.extract(source, table_name="events")
    (package,) = pipe.list_pending_packages()
    assert [f.source for f in package.extracted_files()] == [source]
    assert _objects(f"{url}/s3input", server.credentials) == []  # nothing copied
    fs.put_file(str(write_events(tmp_path / "e2.jsonl", 71)), f"{root}/inbox/e.jsonl")
    with pytest.raises(LoadPackageError, match=f"input {source} .*changed after extract"):
        pipe.normalize()
    pipe.drop_pending_packages()
    assert fs.exists(f"{root}/inbox/e.jsonl")  # the user's object is never the package's
    pipe.run(source, table_name="events")
    assert _events(pipe) == (71, 71)


def test_an_object_input_run_again_after_a_failure_finishes_its_package_once(
    s3_packages: tuple[str, S3Server], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The package records the object's size and etag: the same run again finishes that
    package instead of extracting the object a second time (rows would load twice)."""
    url, server = s3_packages
    fs, root = open_filesystem(url, server.credentials)
    source = f"{url}/inbox/again.jsonl"
    fs.put_file(str(write_events(tmp_path / "e.jsonl", 50)), f"{root}/inbox/again.jsonl")
    pipe = loadstone.pipeline("s3again", destination="duckdb", pipelines_dir=tmp_path / "p")
    pipe.extract(source, table_name="events")  # a run that stopped after its extract
    assert [p.state for p in pipe.list_pending_packages()] == ["extracted"]
    pipe.run(source, table_name="events")
    assert _events(pipe) == (50, 50)
    assert pipe.list_pending_packages() == []


@pytest.mark.spark
def test_packages_on_s3_take_dataframe_input_and_spark_tasks(
    spark: Any, s3_packages: tuple[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NORMALIZE__ENGINE", "spark")
    monkeypatch.setenv("NORMALIZE__CHUNK_BYTES", "20000")
    frame = spark.read.json(str(write_events(tmp_path / "e.jsonl", 300))).repartition(3)
    pipe = loadstone.pipeline("s3frame", destination="duckdb", pipelines_dir=tmp_path / "p")
    pipe.run(frame, table_name="events")
    assert _events(pipe) == (300, 300)
    chunks = pipe.last_trace["normalize"]["chunks"]
    assert len(chunks) > 1 and "driver" not in {c["executor"] for c in chunks}
    assert not list((tmp_path / "p").rglob("*.jsonl")) and not list(
        (tmp_path / "p").rglob("*.parquet")
    )


def test_a_task_that_cannot_reach_the_object_store_fails_naming_host_and_object(
    tmp_path: Path,
) -> None:
    remote = RemoteData(
        str(tmp_path), "s3://bucket/packages/p/1", {"endpoint_url": "http://127.0.0.1:9"}
    )
    config = EngineConfig(
        naming=snake_case(),
        load_id="1",
        out_dir=str(tmp_path / "normalized"),
        specs={},
        known={},
        existing_tables=frozenset(),
        remote=remote,
    )
    chunk = Chunk(0, 0, str(tmp_path / "extracted" / "f.jsonl"), "events", 0, -1, "f.jsonl")
    with pytest.raises(spark_tasks.ExecutorTaskError) as failure:
        spark_tasks.run_task(config, chunk, {}, 0, spark_tasks.TaskOptions())
    message = str(failure.value)
    assert f"(host {socket.gethostname()})" in message
    assert "s3://bucket/packages/p/1/extracted/f.jsonl (endpoint http://127.0.0.1:9)" in message


@pytest.mark.parametrize("storage", ["mount", "s3"])
def test_key_columns_are_checked_in_files_on_the_package_storage(
    storage: str, request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if storage == "s3":
        request.getfixturevalue("s3_packages")
    else:
        monkeypatch.setenv("PACKAGES__STORAGE_URL", str(tmp_path / "store"))
    pipe = loadstone.pipeline("keyed", destination="duckdb", pipelines_dir=tmp_path / "p")
    rows = [{"id": n % 20, "v": n} for n in range(40)]
    pipe.run(rows, table_name="events", primary_key="id", write_disposition="merge")
    assert _events(pipe) == (20, 20)
