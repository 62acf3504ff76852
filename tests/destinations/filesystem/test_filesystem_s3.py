"""The filesystem destination on an ``s3://`` bucket (moto's standalone server on loopback).

Credentials go in as dlt's keys through the environment
(``DESTINATION__FILESYSTEM__CREDENTIALS__...``), the way a deployment sets them.
"""

from __future__ import annotations

import io
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from filesystem_support import DATASET, counter_source, fs_pipeline
from s3_support import S3Server

from loadstone.storage.filesystem import open_filesystem

USERS = [
    {"id": 1, "name": "Alice", "pets": [{"name": "Fluffy"}]},
    {"id": 2, "name": "Bob", "pets": [{"name": "Fido"}, {"name": "Rex"}]},
]


@pytest.fixture
def s3_env(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> S3Server:
    for key, value in s3_server.credentials.items():
        monkeypatch.setenv(f"DESTINATION__FILESYSTEM__CREDENTIALS__{key.upper()}", value)
    return s3_server


def test_parquet_files_in_an_s3_bucket_read_back_by_pyarrow(
    tmp_path: Path, s3_env: S3Server
) -> None:
    bucket = s3_env.new_bucket()
    pipeline = fs_pipeline(tmp_path, "s3_files", f"s3://{bucket}/lake")
    pipeline.run(USERS, table_name="users")
    fs, root = open_filesystem(f"s3://{bucket}/lake/{DATASET}", s3_env.credentials)
    files = sorted(fs.find(root))
    names = [f.removeprefix(root + "/") for f in files]
    assert "init" in names
    assert [n.split("/")[0] for n in names if n.endswith(".parquet")] == ["users", "users__pets"]
    pets = [f for f in files if "/users__pets/" in f]
    assert pq.read_table(io.BytesIO(fs.cat_file(pets[0]))).num_rows == 3
    assert sorted(pipeline.dataset()["users"].select("id", "name").fetchall()) == [
        (1, "Alice"),
        (2, "Bob"),
    ]


def test_state_is_restored_from_the_s3_bucket(tmp_path: Path, s3_env: S3Server) -> None:
    bucket = s3_env.new_bucket()
    first = fs_pipeline(tmp_path / "one", "s3_state", f"s3://{bucket}")
    first.run(counter_source())
    again = fs_pipeline(tmp_path / "two", "s3_state", f"s3://{bucket}")
    again.run(counter_source())
    assert again.state["sources"]["numbers"]["resources"]["counter"] == {"last": 6}
    assert again.dataset()["counter"].count() == 6


@pytest.mark.parametrize("table_format", ["delta", "iceberg"])
def test_table_formats_in_an_s3_bucket(tmp_path: Path, s3_env: S3Server, table_format: str) -> None:
    bucket = s3_env.new_bucket()
    pipeline = fs_pipeline(tmp_path, f"s3_{table_format}", f"s3://{bucket}")
    pipeline.run(USERS, table_name="users", table_format=table_format)
    pipeline.run(
        [{"id": 2, "name": "Bobby"}],
        table_name="users",
        table_format=table_format,
        write_disposition="merge",
        primary_key="id",
    )
    rows = sorted(pipeline.dataset()["users"].select("id", "name").fetchall())
    assert rows == [(1, "Alice"), (2, "Bobby")]
