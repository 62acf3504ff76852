"""``filesystem(..., kwargs=..., client_kwargs=...)`` and ``readers(...)`` as a dlt user
passes fsspec options, against a library given as an argument and a loopback S3 server
(moto's), plus a local folder.

Recorded under dlt 1.31 by ``tests/compat/record_filesystem_options.py``
(``tests/fixtures/dlt_filesystem_options.json``); compared by
``tests/sources/test_filesystem_options.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

CREDENTIALS = {
    "aws_access_key_id": "testing",
    "aws_secret_access_key": "testing",
    "region_name": "us-east-1",
}


def put_objects(endpoint: str, bucket: str) -> None:
    """The bucket's files: a JSON lines file and a CSV file under ``data/``."""
    import s3fs

    fs = s3fs.S3FileSystem(
        key="testing", secret="testing", client_kwargs={"endpoint_url": endpoint}
    )
    fs.pipe(f"{bucket}/data/a.jsonl", b'{"id": 1}\n{"id": 2}\n')
    fs.pipe(f"{bucket}/data/b.csv", b"id,name\n1,x\n")


def _innermost(error: BaseException) -> BaseException:
    while error.__cause__ is not None:
        error = error.__cause__
    return error


def _outcome(action: Callable[[], Any]) -> Any:
    try:
        return {"result": action()}
    except Exception as error:  # the refusal is the outcome recorded
        return {"error": type(_innermost(error)).__name__}


def options_outcome(
    filesystem: Callable[..., Any],
    readers: Callable[..., Any],
    endpoint: str,
    bucket: str,
    local: Path,
) -> dict[str, Any]:
    url = f"s3://{bucket}/data"
    endpoint_kwargs = {"endpoint_url": endpoint}
    (local / "x.jsonl").write_text('{"a": 1}\n')

    def names(**options: Any) -> list[str]:
        return sorted(item["file_name"] for item in filesystem(**options))

    return {
        "client_kwargs_endpoint": _outcome(
            lambda: names(bucket_url=url, credentials=CREDENTIALS, client_kwargs=endpoint_kwargs)
        ),
        "kwargs_of_s3fs": _outcome(
            lambda: names(
                bucket_url=url,
                credentials=CREDENTIALS,
                kwargs={"use_listings_cache": False, "default_block_size": 1024},
                client_kwargs=endpoint_kwargs,
            )
        ),
        "kwargs_unknown": _outcome(
            lambda: names(
                bucket_url=url,
                credentials=CREDENTIALS,
                kwargs={"nonsense_opt": 1},
                client_kwargs=endpoint_kwargs,
            )
        ),
        "client_kwargs_unknown": _outcome(
            lambda: names(
                bucket_url=url,
                credentials=CREDENTIALS,
                client_kwargs={**endpoint_kwargs, "nonsense": 1},
            )
        ),
        "client_kwargs_and_credentials_endpoint": _outcome(
            lambda: names(
                bucket_url=url,
                credentials={**CREDENTIALS, "endpoint_url": "http://127.0.0.1:1"},
                client_kwargs=endpoint_kwargs,
            )
        ),
        "local_ignores_them": _outcome(
            lambda: names(
                bucket_url=str(local), kwargs={"nonsense": 1}, client_kwargs={"nonsense": 1}
            )
        ),
        "readers_jsonl": _outcome(
            lambda: list(
                readers(
                    url,
                    credentials=CREDENTIALS,
                    file_glob="*.jsonl",
                    client_kwargs=endpoint_kwargs,
                ).read_jsonl
            )
        ),
    }
