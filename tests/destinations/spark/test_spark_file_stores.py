"""The renames of a table's files with fsspec (the Spark Connect side), without Spark: on a local
folder named as Spark names it (``file:/...``), with Hadoop's ``.crc`` companions moving with
their files, and on an S3 bucket (the loopback moto server) named ``s3a://``."""

from __future__ import annotations

from pathlib import Path

import pytest
from s3_support import S3Server

from loadstone.exceptions import DestinationError
from loadstone.plugins.destinations.spark.file_stores import FsspecStore
from loadstone.plugins.destinations.spark.table_files import TableFolder


def _folder(table: Path) -> TableFolder:
    location = f"file:{table}"
    return TableFolder(location, FsspecStore.open(location))


def _stage(folder: TableFolder, load_id: str, *names: str) -> None:
    staging = Path(folder.staging(load_id).removeprefix("file:"))
    staging.mkdir(parents=True)
    (staging / "_SUCCESS").write_text("")
    for name in names:
        (staging / name).write_text(name)
        (staging / f".{name}.crc").write_text("crc")


def _tree(table: Path) -> list[str]:
    return sorted(str(p.relative_to(table)) for p in table.rglob("*"))


def test_publish_renames_staged_files_in_with_their_checksums(tmp_path: Path) -> None:
    table = tmp_path / "t"
    table.mkdir()
    folder = _folder(table)
    _stage(folder, "1.5", "part-0.parquet")
    assert folder.publish("1.5") == 1
    assert _tree(table) == [".ls-1.5-part-0.parquet.crc", "ls-1.5-part-0.parquet"]
    assert folder.data_files() == ["ls-1.5-part-0.parquet"]


def test_undo_of_a_replace_restores_the_old_files_and_drops_the_new(tmp_path: Path) -> None:
    table = tmp_path / "t"
    table.mkdir()
    (table / "old.parquet").write_text("old")
    (table / ".old.parquet.crc").write_text("crc")
    folder = _folder(table)
    _stage(folder, "2.5", "part-0.parquet")
    folder.set_aside("2.5")
    folder.publish("2.5")
    assert folder.data_files() == ["ls-2.5-part-0.parquet"]
    folder.undo("2.5")  # as a rerun after a kill does
    assert _tree(table) == [".old.parquet.crc", "old.parquet"]
    folder.undo("2.5")  # idempotent
    assert _tree(table) == [".old.parquet.crc", "old.parquet"]


def test_forget_replaced_deletes_the_set_aside_files_after_the_commit(tmp_path: Path) -> None:
    table = tmp_path / "t"
    table.mkdir()
    (table / "old.parquet").write_text("old")
    folder = _folder(table)
    _stage(folder, "3.5", "part-0.parquet")
    folder.set_aside("3.5")
    folder.publish("3.5")
    folder.forget_replaced("3.5")
    assert _tree(table) == [".ls-3.5-part-0.parquet.crc", "ls-3.5-part-0.parquet"]


def test_a_table_folder_this_process_cannot_see_stops_the_load(tmp_path: Path) -> None:
    with pytest.raises(DestinationError, match="not reachable from this process"):
        FsspecStore.open(f"file:{tmp_path / 'on-the-server'}")


def test_on_an_object_store_the_files_the_server_wrote_are_published(
    s3_server: S3Server,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``s3a://`` as Spark names it, dlt's credential keys under ``destination.spark``; the
    folder is listed before the server writes into it (as a load's undo does)."""
    import s3fs

    for key, value in s3_server.credentials.items():
        monkeypatch.setenv(f"DESTINATION__SPARK__CREDENTIALS__{key.upper()}", value)
    bucket = s3_server.new_bucket()
    server = s3fs.S3FileSystem(
        key="testing",
        secret="testing",
        client_kwargs={"endpoint_url": s3_server.endpoint_url, "region_name": "us-east-1"},
        skip_instance_cache=True,
    )
    server.pipe_file(f"{bucket}/t/old.parquet", b"old")
    folder = TableFolder(f"s3a://{bucket}/t", FsspecStore.open(f"s3a://{bucket}/t"))
    folder.undo("4.5")  # an append: nothing is set aside, nothing else lists the folder anew
    assert folder.data_files() == ["old.parquet"]
    server.pipe_file(f"{bucket}/t/_loadstone_staging/4.5/part-0.parquet", b"new")
    server.pipe_file(f"{bucket}/t/_loadstone_staging/4.5/_SUCCESS", b"")
    assert folder.publish("4.5") == 1
    server.invalidate_cache()
    assert sorted(server.find(f"{bucket}/t")) == [
        f"{bucket}/t/ls-4.5-part-0.parquet",
        f"{bucket}/t/old.parquet",
    ]
