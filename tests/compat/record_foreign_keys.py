"""Record dlt 1.31's ``resolve_foreign_keys`` answers (``tests/compat/foreign_key_probes.py``).

Run with a dlt environment that has SQLAlchemy and psycopg2, against the tests' PostgreSQL
(``eval "$(bash .ci/postgres start)"``), from the repository root::

    /tmp/dltsql/bin/python -m tests.compat.record_foreign_keys
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import dlt
from dlt.sources.sql_database import sql_database, sql_table

from tests.compat.foreign_key_probes import references_outcome

FIXTURE = (
    Path(__file__).resolve().parents[1] / "fixtures" / "sql_database" / "dlt_foreign_keys.json"
)


def main() -> int:
    url = os.environ["LOADSTONE_TEST_POSTGRES"].replace("postgresql://", "postgresql+psycopg2://")
    with tempfile.TemporaryDirectory(prefix="dlt_fk_") as folder:
        outcome = references_outcome(dlt, sql_database, sql_table, url, Path(folder))
    FIXTURE.write_text(
        json.dumps({"dlt_version": dlt.__version__, "outcome": outcome}, indent=1) + "\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
