"""``filesystem(kwargs=..., client_kwargs=...)`` reach the bucket's fsspec filesystem, as in
dlt 1.31: ``kwargs`` its constructor's options, ``client_kwargs`` its client's (on S3 the
botocore client: ``endpoint_url``, ``verify`` ...); a local folder ignores both.

The programs of ``tests/compat/filesystem_options_probes.py`` ran under dlt against moto's
S3 server on loopback; its answers are in ``tests/fixtures/dlt_filesystem_options.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import locations
import pytest
from s3_support import S3Server

import loadstone
from loadstone.sources.filesystem import filesystem, read_jsonl, readers
from tests.compat.filesystem_options_probes import CREDENTIALS, options_outcome, put_objects

RECORDED: dict[str, Any] = json.loads(
    (locations.FIXTURES / "dlt_filesystem_options.json").read_text()
)["outcome"]


@pytest.fixture(scope="module")
def bucket(s3_server: S3Server) -> str:
    name = s3_server.new_bucket()
    put_objects(s3_server.endpoint_url, name)
    return name


@pytest.fixture(scope="module")
def outcome(
    s3_server: S3Server,
    bucket: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Any]:
    local = tmp_path_factory.mktemp("local")
    return options_outcome(filesystem, readers, s3_server.endpoint_url, bucket, local)


@pytest.mark.parametrize("case", sorted(RECORDED))
def test_fsspec_options_reach_the_filesystem_as_in_dlt(outcome: dict[str, Any], case: str) -> None:
    assert outcome[case] == RECORDED[case]


def test_a_bucket_reached_through_client_kwargs_loads_its_rows(
    s3_server: S3Server,
    bucket: str,
    tmp_path: Path,
) -> None:
    pipeline = loadstone.pipeline(
        "fs_options",
        destination=loadstone.destinations.duckdb(str(tmp_path / "fs.duckdb")),
        pipelines_dir=str(tmp_path),
    )
    listing = filesystem(
        f"s3://{bucket}/data",
        credentials=CREDENTIALS,
        file_glob="*.jsonl",
        client_kwargs={"endpoint_url": s3_server.endpoint_url},
    )
    pipeline.run((listing | read_jsonl()).with_name("items"))
    with pipeline.sql_client() as client:
        assert [r[0] for r in client.execute_sql("SELECT id FROM items ORDER BY id")] == [1, 2]
