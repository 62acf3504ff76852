"""``s3://`` filesystems read botocore's data files once per process, not once each.

Each filesystem still has its own botocore session and client (its own credentials and
connections); only the loader of botocore's JSON files (endpoints, the S3 service model) is
shared, as one session shares it between its clients.
"""

from __future__ import annotations

from s3_support import S3Server

from loadstone.storage.filesystem import open_filesystem


def test_two_s3_filesystems_have_their_own_sessions_and_one_data_loader(
    s3_server: S3Server,
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


def test_clients_share_one_tls_context_per_ca_bundle_and_a_proxy_gets_its_own() -> None:
    """aiobotocore builds the endpoint's TLS context per client (the CA bundle loaded again);
    here one per ``verify`` serves them all. The context is aiobotocore's own, same settings."""
    from loadstone.storage.s3_sessions import SharedTLSSession

    first, _ = SharedTLSSession(verify=True)._build_ssl_contexts(None)
    second, _ = SharedTLSSession(verify=True)._build_ssl_contexts(None)
    unverified, _ = SharedTLSSession(verify=False)._build_ssl_contexts(None)
    assert first is second and first.check_hostname
    assert unverified is not first and not unverified.check_hostname
    own, proxy = SharedTLSSession(verify=True)._build_ssl_contexts("http://127.0.0.1:9")
    assert own is not first and proxy is not None
