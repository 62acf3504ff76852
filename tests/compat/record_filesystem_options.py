"""Record dlt 1.31's answers to fsspec options of the filesystem source
(``tests/compat/filesystem_options_probes.py``).

Needs a dlt environment with s3fs and moto's S3 server on loopback, from the repository
root::

    python -m moto.server -H 127.0.0.1 -p 45123 &
    LOADSTONE_PROBE_S3=http://127.0.0.1:45123 /tmp/dltenv/bin/python \\
        -m tests.compat.record_filesystem_options
"""

from __future__ import annotations

import json
import os
import tempfile
import uuid
from pathlib import Path

import dlt
from dlt.sources.filesystem import filesystem, readers

from tests.compat.filesystem_options_probes import options_outcome, put_objects

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "dlt_filesystem_options.json"


def main() -> int:
    import s3fs

    endpoint = os.environ["LOADSTONE_PROBE_S3"]
    bucket = f"probe-{uuid.uuid4().hex[:8]}"
    s3 = s3fs.S3FileSystem(
        key="testing", secret="testing", client_kwargs={"endpoint_url": endpoint}
    )
    s3.mkdir(bucket)
    put_objects(endpoint, bucket)
    with tempfile.TemporaryDirectory(prefix="dlt_fs_options_") as folder:
        outcome = options_outcome(filesystem, readers, endpoint, bucket, Path(folder))
    FIXTURE.write_text(
        json.dumps({"dlt_version": dlt.__version__, "outcome": outcome}, indent=1) + "\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
