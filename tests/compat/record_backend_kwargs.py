"""Record dlt 1.31's ``backend_kwargs`` answers (``tests/compat/backend_kwargs_probes.py``).

Run with a dlt environment that has SQLAlchemy and psycopg2, against the tests' PostgreSQL
(``eval "$(bash .ci/postgres start)"`` sets ``LOADSTONE_TEST_POSTGRES``), from the
repository root::

    /tmp/dltsql/bin/python -m tests.compat.record_backend_kwargs
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import dlt
from dlt.sources.sql_database import sql_table

from tests.compat.backend_kwargs_probes import all_outcomes

FIXTURE = (
    Path(__file__).resolve().parents[1] / "fixtures" / "sql_database" / "dlt_backend_kwargs.json"
)


def main() -> int:
    url = os.environ["LOADSTONE_TEST_POSTGRES"].replace("postgresql://", "postgresql+psycopg2://")
    outcome = all_outcomes(sql_table, url)
    FIXTURE.write_text(
        json.dumps({"dlt_version": dlt.__version__, "outcome": outcome}, indent=1) + "\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
