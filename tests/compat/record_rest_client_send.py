"""Record dlt 1.31's answers to ``RESTClient`` request options
(``tests/compat/rest_client_send_probes.py``).

Run with the throwaway dlt environment, from the repository root::

    /tmp/dltenv/bin/python -m tests.compat.record_rest_client_send
"""

from __future__ import annotations

import json
from pathlib import Path

import dlt
from dlt.sources.helpers.rest_client import RESTClient

from tests.compat.rest_client_send_probes import send_outcome, serving

FIXTURE = (
    Path(__file__).resolve().parents[1] / "fixtures" / "rest_api" / "dlt_rest_client_send.json"
)


def main() -> int:
    with serving() as base_url:
        outcome = send_outcome(RESTClient, base_url)
    FIXTURE.write_text(
        json.dumps({"dlt_version": dlt.__version__, "outcome": outcome}, indent=1) + "\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
