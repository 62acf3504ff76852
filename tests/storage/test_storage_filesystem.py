"""``loadstone.storage.filesystem``: one URL + dlt's credential keys -> an fsspec filesystem."""

from __future__ import annotations

from pathlib import Path

import pytest
from s3_support import S3Server

from loadstone.exceptions import FilesystemError
from loadstone.storage.filesystem import (
    FilesystemCredentials,
    configured_credentials,
    join_url,
    open_filesystem,
    put_file_atomic,
    split_url,
    write_bytes_atomic,
)


def test_a_plain_path_and_a_file_url_are_the_local_disk(tmp_path: Path) -> None:
    for url in (str(tmp_path / "b"), f"file://{tmp_path}/b"):
        fs, path = open_filesystem(url)
        assert path == str(tmp_path / "b")
        write_bytes_atomic(fs, f"{path}/x/y.txt", b"hello")
        assert (tmp_path / "b" / "x" / "y.txt").read_bytes() == b"hello"


def test_an_atomic_local_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    fs, path = open_filesystem(str(tmp_path))
    source = tmp_path / "source.bin"
    source.write_bytes(b"abc")
    put_file_atomic(fs, str(source), f"{path}/copy/target.bin")
    assert sorted(p.name for p in (tmp_path / "copy").iterdir()) == ["target.bin"]


def test_urls_split_and_join_keeping_their_protocol() -> None:
    assert split_url("s3://bucket/a/b/") == ("s3", "bucket/a/b")
    assert join_url("s3://bucket/a", "ds", "t") == "s3://bucket/a/ds/t"
    assert join_url("/tmp/x", "ds") == "/tmp/x/ds"


def test_credentials_take_dlts_keys_and_refuse_others() -> None:
    creds = FilesystemCredentials.from_mapping(
        {"aws_access_key_id": "k", "aws_secret_access_key": "s", "endpoint_url": "http://h"}
    )
    assert creds.s3fs_options() == {
        "key": "k",
        "secret": "s",
        "client_kwargs": {"endpoint_url": "http://h"},
    }
    with pytest.raises(FilesystemError, match="aws_secret_key"):
        FilesystemCredentials.from_mapping({"aws_secret_key": "typo"})


def test_credentials_come_from_the_environment_through_the_one_resolver(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DESTINATION__FILESYSTEM__CREDENTIALS__AWS_ACCESS_KEY_ID", "from-env")
    monkeypatch.setenv("DESTINATION__FILESYSTEM__CREDENTIALS__REGION_NAME", "eu-west-1")
    creds = configured_credentials()
    assert creds.aws_access_key_id == "from-env"
    assert creds.region_name == "eu-west-1"


def test_credentials_come_from_secrets_toml(tmp_path: Path) -> None:
    folder = Path.cwd() / ".loadstone"
    folder.mkdir()
    (folder / "secrets.toml").write_text(
        '[destination.filesystem.credentials]\naws_secret_access_key = "from-toml"\n'
    )
    assert configured_credentials().aws_secret_access_key == "from-toml"


def test_an_s3_bucket_on_a_loopback_server(s3_server: S3Server) -> None:
    bucket = s3_server.new_bucket()
    fs, path = open_filesystem(f"s3://{bucket}/prefix", s3_server.credentials)
    assert path == f"{bucket}/prefix"
    write_bytes_atomic(fs, f"{path}/a.txt", b"on s3")
    assert fs.cat_file(f"{path}/a.txt") == b"on s3"
