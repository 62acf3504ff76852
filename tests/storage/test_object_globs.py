"""A glob or folder of objects on the package storage is read where it lies, object by object.

``loadstone run 's3://bucket/events/2024-*/*.jsonl.gz'`` records each matching object (its
size and etag) in the package and the normalize step's workers read them; nothing passes
through the extract step's process or is copied.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import pytest
from cli_support import cli
from cluster_support import write_events
from s3_support import S3Server

import loadstone
from loadstone.exceptions import PipelineStepFailed
from loadstone.storage.filesystem import open_filesystem


@pytest.fixture
def inbox(
    s3_server: S3Server,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> tuple[str, Any, str]:
    """Package storage on a fresh bucket, and objects under ``<bucket>/events``: two days of
    gzipped JSON lines, one plain, and a file of another kind."""
    bucket = s3_server.new_bucket()
    monkeypatch.setenv("PACKAGES__STORAGE_URL", f"s3://{bucket}/packages")
    for key, value in s3_server.credentials.items():
        monkeypatch.setenv(f"PACKAGES__CREDENTIALS__{key.upper()}", value)
    monkeypatch.setenv("NORMALIZE__ENGINE", "local")
    fs, _ = open_filesystem(f"s3://{bucket}", s3_server.credentials)
    layout = {
        "events/2024-01-01/a.jsonl.gz": 30,
        "events/2024-01-02/b.jsonl.gz": 40,
        "events/2024-01-02/c.jsonl": 50,
        "events/2023-12-31/old.jsonl.gz": 7,
    }
    start = 0
    for key, count in layout.items():
        plain = write_events(tmp_path / "plain.jsonl", count)
        text = plain.read_bytes().replace(b'"id": ', b'"id": 1', 0)
        rows = [line for line in text.splitlines() if line]
        body = b"\n".join(rows[:count]) + b"\n"
        local = tmp_path / "obj"
        local.write_bytes(gzip.compress(body) if key.endswith(".gz") else body)
        fs.put_file(str(local), f"{bucket}/{key}")
        start += count
    fs.pipe(f"{bucket}/events/2024-01-01/notes.txt", b"not data")
    return f"s3://{bucket}", fs, bucket


def _loaded(pipe: Any) -> int:
    with pipe.sql_client() as client:
        return int(client.execute_sql(f"SELECT count(*) FROM {pipe.dataset_name}.events")[0][0])


def test_a_glob_of_objects_is_recorded_object_by_object_and_never_copied(
    inbox: tuple[str, Any, str], tmp_path: Path
) -> None:
    root, fs, bucket = inbox
    pipe = loadstone.pipeline("globbed", destination="duckdb", pipelines_dir=tmp_path / "p")
    pipe.extract(f"{root}/events/2024-*/*.jsonl*", table_name="events")
    (package,) = pipe.list_pending_packages()
    assert [f.source for f in package.extracted_files()] == [
        f"{root}/events/2024-01-01/a.jsonl.gz",
        f"{root}/events/2024-01-02/b.jsonl.gz",
        f"{root}/events/2024-01-02/c.jsonl",
    ]
    assert not fs.find(f"{bucket}/packages/globbed")  # nothing copied to the package
    pipe.run()
    assert _loaded(pipe) == 30 + 40 + 50
    chunks = pipe.last_trace["normalize"]["chunks"]
    assert {c["input"] for c in chunks} >= {f"{root}/events/2024-01-02/c.jsonl"}


def test_a_folder_of_objects_loads_through_the_cli_once(
    inbox: tuple[str, Any, str], tmp_path: Path, capsys: Any
) -> None:
    root, _, _ = inbox
    args = ("run", f"{root}/events/", "--table", "events", "--pipeline", "folder")
    args += ("--pipelines-dir", str(tmp_path / "p"), "-q")
    assert cli(*args) == 0
    pipe = loadstone.attach("folder", pipelines_dir=str(tmp_path / "p"))
    assert _loaded(pipe) == 30 + 40 + 50 + 7


def test_a_glob_that_matches_nothing_fails_naming_it_and_loads_nothing(
    inbox: tuple[str, Any, str], tmp_path: Path
) -> None:
    root, _, _ = inbox
    pipe = loadstone.pipeline("nomatch", destination="duckdb", pipelines_dir=tmp_path / "p")
    with pytest.raises(PipelineStepFailed, match=r"events/1999-\*/\*\.jsonl names no JSON-lines"):
        pipe.run(f"{root}/events/1999-*/*.jsonl", table_name="events")
    assert pipe.list_pending_packages() == []


def test_filesystem_piped_into_read_jsonl_records_the_objects_instead_of_parsing_them(
    inbox: tuple[str, Any, str],
    tmp_path: Path,
    s3_server: S3Server,
) -> None:
    from loadstone.sources.filesystem import filesystem, read_jsonl

    root, _, _ = inbox
    files = filesystem(f"{root}/events", s3_server.credentials, file_glob="2024-*/*.jsonl*")
    pipe = loadstone.pipeline("fsread", destination="duckdb", pipelines_dir=tmp_path / "p")
    pipe.extract(files | read_jsonl())
    (package,) = pipe.list_pending_packages()
    assert sorted(f.source or "" for f in package.extracted_files()) == [
        f"{root}/events/2024-01-01/a.jsonl.gz",
        f"{root}/events/2024-01-02/b.jsonl.gz",
        f"{root}/events/2024-01-02/c.jsonl",
    ]
    pipe.run()
    with pipe.sql_client() as client:
        got = client.execute_sql(f"SELECT count(*) FROM {pipe.dataset_name}._read_jsonl")
    assert got[0][0] == 30 + 40 + 50


def test_a_reader_with_a_step_of_its_own_parses_the_rows_as_dlt_does(
    inbox: tuple[str, Any, str],
    tmp_path: Path,
    s3_server: S3Server,
) -> None:
    from loadstone.sources.filesystem import filesystem, read_jsonl

    root, _, _ = inbox
    files = filesystem(f"{root}/events", s3_server.credentials, file_glob="2024-01-01/*.jsonl*")
    reader = (files | read_jsonl()).add_filter(lambda row: row["id"] % 2 == 0)
    pipe = loadstone.pipeline("fsstep", destination="duckdb", pipelines_dir=tmp_path / "p")
    pipe.extract(reader)
    (package,) = pipe.list_pending_packages()
    assert all(f.source is None for f in package.extracted_files())  # rows written here
    pipe.run()
    with pipe.sql_client() as client:
        got = client.execute_sql(f"SELECT count(*) FROM {pipe.dataset_name}._read_jsonl")
    assert got[0][0] == 15


def test_arrow_data_and_a_parquet_file_load_with_packages_on_the_object_store(
    inbox: tuple[str, Any, str], tmp_path: Path
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    _, fs, bucket = inbox
    pipe = loadstone.pipeline("arrows3", destination="duckdb", pipelines_dir=tmp_path / "p")
    pipe.run(pa.table({"id": [1, 2], "v": ["a", "b"]}), table_name="events")
    pq.write_table(pa.table({"id": [3]}), tmp_path / "more.parquet")
    pipe.run(tmp_path / "more.parquet", table_name="events")
    assert _loaded(pipe) == 3
    assert not fs.find(f"{bucket}/packages/arrows3")  # loaded: the package's data is gone
