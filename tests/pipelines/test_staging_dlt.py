"""``staging=`` on ``pipeline()``, ``run()`` and ``attach()`` answers as dlt 1.31's.

dlt 1.31 loads through a staging destination only into warehouses loadstone has no loader
for (Snowflake, BigQuery, Athena ...); for DuckDB, PostgreSQL and the filesystem it refuses
``staging="filesystem"`` with ``DestinationLoadingViaStagingNotSupported``, and it refuses
any staging destination but the filesystem with ``DestinationNoStagingMode``. Its answers
are recorded in ``tests/fixtures/dlt_staging.json`` (``tests/compat/record_staging.py``);
here the same programs (``tests/compat/staging_probes.py``) run under loadstone.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import locations
import pytest
from s3_support import S3Server

import loadstone
from loadstone.exceptions import DestinationError, DestinationLoadingViaStagingNotSupported
from loadstone.storage.filesystem import open_filesystem
from tests.compat.staging_probes import pairs, run_with_staging, without_destination

RECORDED: dict[str, Any] = json.loads((locations.FIXTURES / "dlt_staging.json").read_text())[
    "outcome"
]


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """The probes set the bucket in the environment; monkeypatch takes it back."""
    monkeypatch.setenv("DESTINATION__FILESYSTEM__BUCKET_URL", "")
    return monkeypatch


def test_each_destination_and_staging_pair_is_accepted_or_refused_as_in_dlt(
    tmp_path: Path,
) -> None:
    assert pairs(loadstone, tmp_path) == RECORDED["pairs"]


def test_run_and_attach_with_staging_are_refused_before_anything_is_extracted(
    tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    bucket = tmp_path / "bucket"
    assert run_with_staging(loadstone, tmp_path, bucket.as_uri()) == RECORDED["runs"]
    assert not bucket.exists()  # dlt's bucket stayed empty too
    assert RECORDED["bucket_files"] == []


def test_a_pipeline_without_destination_takes_staging_and_refuses_it_at_load(
    tmp_path: Path,
) -> None:
    assert without_destination(loadstone, tmp_path) == RECORDED["without_destination"]


def test_the_refusals_are_destination_errors_naming_the_destination(tmp_path: Path) -> None:
    with pytest.raises(DestinationLoadingViaStagingNotSupported) as caught:
        loadstone.pipeline(
            "pg", destination="postgres", staging="filesystem", pipelines_dir=str(tmp_path)
        )
    assert isinstance(caught.value, DestinationError)
    assert caught.value.destination == "postgres"


def test_a_refused_staging_is_not_kept_so_later_runs_load(tmp_path: Path) -> None:
    """dlt keeps the refused staging on the pipeline object and every later run fails;
    loadstone forgets it (docs/migrating.md)."""
    pipeline = loadstone.pipeline(
        "kept",
        destination=loadstone.destinations.duckdb(str(tmp_path / "kept.duckdb")),
        pipelines_dir=str(tmp_path),
    )
    with pytest.raises(DestinationLoadingViaStagingNotSupported):
        pipeline.run([{"id": 1}], table_name="items", staging="filesystem")
    assert pipeline.staging is None
    pipeline.run([{"id": 2}], table_name="items")
    assert pipeline.dataset().items.df()["id"].tolist() == [2]


def test_staging_on_a_loopback_s3_bucket_is_refused_without_touching_the_bucket(
    tmp_path: Path,
    s3_server: S3Server,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = f"s3://{s3_server.new_bucket()}/staging"
    monkeypatch.setenv("DESTINATION__FILESYSTEM__BUCKET_URL", url)
    for key, value in s3_server.credentials.items():
        monkeypatch.setenv(f"DESTINATION__FILESYSTEM__CREDENTIALS__{key.upper()}", value)
    staging = loadstone.destinations.filesystem(url)
    with pytest.raises(DestinationLoadingViaStagingNotSupported):
        loadstone.pipeline("s3", destination="duckdb", staging=staging, pipelines_dir=str(tmp_path))
    fs, path = open_filesystem(url.rsplit("/", 1)[0], s3_server.credentials)
    assert fs.find(path) == []
