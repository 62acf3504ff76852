"""``loadstone.sources.filesystem``: dlt's filesystem source on local folders and S3.

What dlt 1.31 makes of tests/fixtures/sources/files/ is recorded in
tests/fixtures/sources/filesystem.json (by record_filesystem.py, run under dlt).
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import duckdb
import pytest
from s3_support import S3Server

import loadstone
from loadstone.exceptions import ResourceExtractionError
from loadstone.sources.filesystem import (
    FileItemDict,
    FileReadError,
    filesystem,
    read_csv,
    read_csv_duckdb,
    read_jsonl,
    read_parquet,
    readers,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sources"
DLT = json.loads((FIXTURES / "filesystem.json").read_text())


@pytest.fixture
def files(tmp_path: Path) -> Path:
    root = tmp_path / "files"
    shutil.copytree(FIXTURES / "files", root)
    return root


def _pipeline(tmp_path: Path, name: str = "fs") -> Any:
    return loadstone.pipeline(
        name,
        destination=loadstone.destinations.duckdb(str(tmp_path / f"{name}.duckdb")),
        dataset_name="d",
        pipelines_dir=str(tmp_path / "pipelines"),
    )


def _columns(db: Path, table: str) -> list[list[str]]:
    with duckdb.connect(str(db)) as conn:
        return [
            list(row)
            for row in conn.execute(
                "select column_name, data_type, is_nullable from information_schema.columns "
                f"where table_schema='d' and table_name='{table}' order by ordinal_position"
            ).fetchall()
        ]


def _rows(db: Path, table: str, columns: list[str]) -> list[list[Any]]:
    select = ", ".join(f'"{c}"' for c in columns)
    with duckdb.connect(str(db)) as conn:
        sql = f'select {select} from d."{table}" order by all'
        return [list(r) for r in conn.execute(sql).fetchall()]


def test_file_items_are_dlts(files: Path) -> None:
    items = list(filesystem(bucket_url=str(files), file_glob="**/*", extract_content=True))
    assert all(isinstance(item, FileItemDict) for item in items)
    seen = [
        {
            k: (v.hex() if isinstance(v, bytes) else v.replace(str(files), "<root>"))
            if isinstance(v, (str, bytes))
            else v
            for k, v in item.items()
            if k != "modification_date"
        }
        for item in items
    ]
    assert sorted(seen, key=lambda i: i["file_url"]) == DLT["items"]
    assert all(item["modification_date"].tzinfo is not None for item in items)


def test_the_readers_load_the_tables_dlt_loads(files: Path, tmp_path: Path) -> None:
    root = str(files)
    pipeline = _pipeline(tmp_path)
    pipeline.run(
        [
            (filesystem(bucket_url=root, file_glob="**/*.csv") | read_csv()).with_name("csvs"),
            (filesystem(bucket_url=root, file_glob="*.jsonl*") | read_jsonl()).with_name("jsonl"),
            (filesystem(bucket_url=root, file_glob="*.parquet") | read_parquet()).with_name("pq"),
            (
                filesystem(bucket_url=f"file://{root}", file_glob="*.parquet")
                | read_parquet(use_pyarrow=True)
            ).with_name("pqa"),
            filesystem(bucket_url=root, file_glob="**/*").with_name("files"),
        ]
    )
    db = tmp_path / "fs.duckdb"
    for table, expected in DLT["destination"].items():
        columns = _columns(db, table)
        assert sorted(columns) == sorted(expected["columns"]), table
        keep = [
            c[0] for c in columns if not c[0].startswith("_dlt") and c[0] != "modification_date"
        ]
        rows = [
            [v.replace(root, "<root>") if isinstance(v, str) else v for v in row]
            for row in _rows(db, table, keep)
        ]
        assert rows == expected["rows"], table
    schema = pipeline.default_schema.to_dict()["tables"]
    for table, expected in DLT["schema"].items():
        by_name = {c["name"]: c for c in expected["columns"]}
        assert {c["name"]: c for c in schema[table]["columns"].values()} == by_name, table


def _write_csv(folder: Path, name: str, ids: list[int]) -> None:
    (folder / name).write_text("id,v\n" + "".join(f"{i},{i * 2}\n" for i in ids))


def _new_files(folder: Path) -> Any:
    files = filesystem(bucket_url=str(folder), file_glob="*.csv")
    files.apply_hints(incremental=loadstone.sources.incremental("modification_date"))
    return (files | read_csv()).with_name("rows")


def test_a_second_run_reads_only_new_or_changed_files(tmp_path: Path) -> None:
    folder = tmp_path / "landing"
    folder.mkdir()
    _write_csv(folder, "a.csv", [1, 2])
    _write_csv(folder, "b.csv", [3])
    pipeline = _pipeline(tmp_path, "inc")
    pipeline.run(_new_files(folder))
    time.sleep(0.02)
    _write_csv(folder, "c.csv", [4, 5])
    _write_csv(folder, "a.csv", [1, 2, 6])  # changed: read again whole, as in dlt
    pipeline.run(_new_files(folder))
    pipeline.run(_new_files(folder))  # nothing new
    with duckdb.connect(str(tmp_path / "inc.duckdb")) as conn:
        counts = conn.execute("select id, count(*) from d.rows group by 1 order by 1").fetchall()
    assert counts == [(1, 2), (2, 2), (3, 1), (4, 1), (5, 1), (6, 1)]


def test_a_file_deleted_during_the_run_fails_it_naming_the_file(tmp_path: Path) -> None:
    folder = tmp_path / "landing"
    folder.mkdir()
    _write_csv(folder, "a.csv", [1])
    _write_csv(folder, "b.csv", [2])
    pipeline = _pipeline(tmp_path, "gone")

    def deleting(items: list[FileItemDict]) -> list[FileItemDict]:
        (folder / "b.csv").unlink(missing_ok=True)
        return items

    files = filesystem(bucket_url=str(folder), file_glob="*.csv")
    files.apply_hints(incremental=loadstone.sources.incremental("modification_date"))
    with pytest.raises(loadstone.LoadstoneError) as failed:
        pipeline.run((files.add_map(deleting) | read_csv()).with_name("rows"))
    message = str(failed.value)
    assert f"cannot read file://{folder}/b.csv: file not found" in message
    assert _columns(tmp_path / "gone.duckdb", "rows") == []  # nothing loaded
    assert "incremental" not in json.dumps(pipeline.state.get("sources", {}))
    _write_csv(folder, "b.csv", [2])
    pipeline.run(_new_files(folder))
    with duckdb.connect(str(tmp_path / "gone.duckdb")) as conn:
        assert conn.execute("select id from d.rows order by 1").fetchall() == [(1,), (2,)]


def test_gzip_files_open_decompressed_and_read_raw(files: Path) -> None:
    (item,) = filesystem(bucket_url=str(files), file_glob="*.jsonl.gz")
    assert item["encoding"] == "gzip"
    with item.open() as handle:
        assert json.loads(handle.readline())["id"] == 3
    assert item.read_bytes() == (files / "g.jsonl.gz").read_bytes()
    with item.open(compression="disable") as handle:
        assert gzip.decompress(handle.read()).startswith(b'{"id": 3')
    assert item.local_file_path == str(files / "g.jsonl.gz")


def test_files_per_page_and_readers_source(files: Path) -> None:
    pages = list(filesystem(bucket_url=str(files), file_glob="**/*", files_per_page=2).pages())
    assert [len(p) for p in pages] == [2, 2, 1]
    source = readers(bucket_url=str(files), file_glob="**/*.csv")
    assert list(source.resources) == ["read_csv", "read_jsonl", "read_parquet", "read_csv_duckdb"]
    assert [r["id"] for r in source.read_csv] == [1, 2, 3]
    rows = list(filesystem(bucket_url=str(files), file_glob="a.csv") | read_csv_duckdb())
    assert rows[0]["name"] == "a" and rows[1]["price"] is None


def test_fsspec_options_are_ignored_for_a_local_folder(files: Path) -> None:
    """As in dlt: ``kwargs`` / ``client_kwargs`` configure a bucket's filesystem only."""
    listed = filesystem(bucket_url=str(files), kwargs={"use_listings_cache": False})
    assert list(listed)
    source = readers(bucket_url=str(files), file_glob="**/*.csv", client_kwargs={"verify": False})
    assert [r["id"] for r in source.read_csv] == [1, 2, 3]


def test_an_s3_bucket_is_read_with_dlts_credential_keys(
    s3_server: S3Server,
    tmp_path: Path,
) -> None:
    import boto3

    bucket = s3_server.new_bucket()
    client = boto3.client("s3", **_boto_options(s3_server))
    for path in ("e.jsonl", "g.jsonl.gz", "a.csv"):
        client.upload_file(str(FIXTURES / "files" / path), bucket, f"landing/{path}")
    credentials = dict(s3_server.credentials, aws_secret_access_key="s3-secret-value")
    url = f"s3://{bucket}/landing"
    items = list(filesystem(bucket_url=url, credentials=credentials, file_glob="*.jsonl*"))
    assert [i["file_url"] for i in items] == [f"{url}/e.jsonl", f"{url}/g.jsonl.gz"]
    assert [i["relative_path"] for i in items] == ["e.jsonl", "g.jsonl.gz"]
    pipeline = _pipeline(tmp_path, "s3")
    files = filesystem(bucket_url=url, credentials=credentials, file_glob="*.jsonl*")
    files.apply_hints(incremental=loadstone.sources.incremental("modification_date"))
    pipeline.run((files | read_jsonl()).with_name("events"))
    with duckdb.connect(str(tmp_path / "s3.duckdb")) as conn:
        assert conn.execute("select id from d.events order by 1").fetchall() == [
            (i,) for i in range(5)
        ]
    for folder, _, names in os.walk(tmp_path / "pipelines"):
        for name in names:
            assert b"s3-secret-value" not in (Path(folder) / name).read_bytes(), name


def _boto_options(server: S3Server) -> dict[str, str]:
    creds = server.credentials
    return {
        "endpoint_url": creds["endpoint_url"],
        "aws_access_key_id": creds["aws_access_key_id"],
        "aws_secret_access_key": creds["aws_secret_access_key"],
        "region_name": creds["region_name"],
    }


def test_a_reader_names_a_damaged_file(tmp_path: Path) -> None:
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "x.jsonl").write_text('{"a": 1}\n{"a": \n')
    with pytest.raises(ResourceExtractionError, match=r"x\.jsonl: line 2") as failed:
        list(filesystem(bucket_url=str(folder), file_glob="*.jsonl") | read_jsonl())
    assert isinstance(failed.value.__cause__, FileReadError)  # the reader's, as dlt wraps it
