"""``s3://`` filesystems read botocore's data files once per process, not once each.

Each filesystem still has its own botocore session and client (its own credentials and
connections); only the loader of botocore's JSON files (endpoints, the S3 service model) is
shared, as one session shares it between its clients.
"""

from __future__ import annotations

from s3_support import S3Server, s3_server  # noqa: F401 - the fixture is used by name

from loadstone.storage.filesystem import open_filesystem


def test_two_s3_filesystems_have_their_own_sessions_and_one_data_loader(
    s3_server: S3Server,  # noqa: F811 - the fixture imported above
) -> None:
    bucket = s3_server.new_bucket()
    first, path = open_filesystem(f"s3://{bucket}", s3_server.credentials)
    other_key = {**s3_server.credentials, "aws_access_key_id": "another-key"}
    second, _ = open_filesystem(f"s3://{bucket}", other_key)
    first.pipe_file(f"{path}/a.txt", b"written by the first")
    assert second.cat_file(f"{path}/a.txt") == b"written by the first"
    assert first.session is not second.session and first.s3 is not second.s3
    loader = first.session.get_component("data_loader")
    assert second.session.get_component("data_loader") is loader
