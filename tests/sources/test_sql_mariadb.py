"""MariaDB read through SQLAlchemy and PyMySQL, as dlt 1.31 reads it.

The server is the one ``bash .ci/mariadb run`` starts (``LOADSTONE_TEST_MARIADB``). The
programs are tests/sources/sql_mariadb_cases.py (tinyint(1), unsigned bigint, datetime(6),
timestamp, decimal(38,10), json, enum, set, bit, blob, utf8mb4 text, a view, a compound key;
every backend; an incremental ``updated_at`` over four runs); dlt's outcomes, recorded by
record_sql_mariadb.py, are in tests/fixtures/sources/sql_mariadb.json.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import loadstone
from loadstone.sources.sql_database import sql_database, sql_table
from tests.sources.mariadb_support import database_url, mariadb_url, run_script
from tests.sources.sql_mariadb_cases import CASES, create_tables, run_case, run_incremental

__all__ = ["mariadb_url"]  # the fixture, used by name

DLT = json.loads(
    (Path(__file__).resolve().parents[1] / "fixtures/sources/sql_mariadb.json").read_text()
)
#: columns compared apart, with why: case -> {column: reason}
KNOWN: dict[str, dict[str, str]] = {
    # dlt reads a DOUBLE through SQLAlchemy's Decimal (rounded to 10 places) and types it
    # decimal (21, 10 from the Arrow data; 38, 9 from the rows, rounding again): loadstone
    # reads the float the database holds and types it double
    "pyarrow_full": {"ratio": "loadstone keeps a DOUBLE a double"},
    **{
        f"sqlalchemy_{level}": {"ratio": "loadstone keeps a DOUBLE a double"}
        for level in ("minimal", "full", "full_with_precision")
    },
}


@pytest.fixture(scope="module")
def source_url(mariadb_url: str) -> Iterator[str]:
    """A database of its own holding mariadb_source.sql (other sessions share the server)."""
    name = f"src_{Path(__file__).stem[-6:]}_{id(object()) % 10**6}"
    run_script(mariadb_url, f"DROP DATABASE IF EXISTS {name};\nCREATE DATABASE {name}")
    url = database_url(mariadb_url, name)
    create_tables(url)
    yield url
    run_script(mariadb_url, f"DROP DATABASE {name}")


def _without(outcome: dict[str, Any], columns: dict[str, str]) -> dict[str, Any]:
    """``outcome`` without ``columns`` of table ``kinds`` (hints, DuckDB columns, values)."""
    out = json.loads(json.dumps(outcome))
    if not columns:
        return out
    names = [c[0] for c in out["destination"]["kinds"]["columns"]]
    out["schema"]["kinds"] = [c for c in out["schema"]["kinds"] if c["name"] not in columns]
    out["destination"]["kinds"]["columns"] = [
        c for c in out["destination"]["kinds"]["columns"] if c[0] not in columns
    ]
    keep = [
        i for i, n in enumerate(n for n in names if not n.startswith("_dlt")) if n not in columns
    ]
    out["rows"]["kinds"] = [[row[i] for i in keep] for row in out["rows"]["kinds"]]
    return out


@pytest.mark.oracle
@pytest.mark.parametrize(
    "case", [c for c in CASES if "error" not in DLT[c] and c != "extras_pyarrow"]
)
def test_mariadb_tables_load_as_under_dlt(case: str, source_url: str, tmp_path: Path) -> None:
    got = run_case(loadstone, sql_database, source_url, case, tmp_path)
    assert _without(got, KNOWN.get(case, {})) == _without(DLT[case], KNOWN.get(case, {}))


@pytest.mark.oracle
@pytest.mark.parametrize("backend", ["sqlalchemy", "pyarrow", "pandas"])
def test_a_set_is_the_json_list_of_its_members(
    backend: str, source_url: str, tmp_path: Path
) -> None:
    """dlt's pyarrow backend writes a SET as the JSON list of a Python set, in the set's
    (random) order; loadstone sorts it. dlt's sqlalchemy backend fails on a SET (a Python
    set is not JSON), its pandas backend on the BLOB (decoded as UTF-8)."""
    got = run_case(loadstone, sql_database, source_url, f"extras_{backend}", tmp_path)
    assert got["schema"] == DLT["extras_pyarrow"]["schema"] or backend == "sqlalchemy"
    assert got["rows"]["extras"] == [
        ["1", '["a","c"]', "\\x00\\xFF"],
        ["2", "[]", "\\x01"],
        ["3", None, None],
    ]


@pytest.mark.oracle
@pytest.mark.parametrize("backend", ["sqlalchemy", "pyarrow", "connectorx"])
def test_an_incremental_datetime6_cursor_loads_run_by_run_as_under_dlt(
    backend: str, source_url: str, tmp_path: Path
) -> None:
    got = run_incremental(loadstone, sql_table, source_url, backend, tmp_path)
    assert got == DLT[f"incremental_{backend}"]


@pytest.mark.parametrize("backend", ["sqlalchemy", "pyarrow", "pandas"])
def test_a_double_loads_its_float_and_binary_sizes_are_kept(
    backend: str, source_url: str, tmp_path: Path
) -> None:
    """A DOUBLE is read as the float the server holds (SQLAlchemy would hand back a Decimal
    rounded to 10 places, which dlt rounds again into decimal(38, 9)); binary(16) and
    varbinary(8) keep their sizes at ``full_with_precision`` (as dlt's sqlalchemy backend;
    dlt's Arrow backends fail on this table)."""
    run_script(
        source_url,
        "DROP TABLE IF EXISTS sizes;\n"
        "CREATE TABLE sizes (id int primary key, b16 binary(16), vb varbinary(8), dbl double);\n"
        "INSERT INTO sizes VALUES (1, unhex('00112233445566778899aabbccddeeff'), unhex('0102'), "
        "0.12345678912345), (2, NULL, NULL, NULL)",
    )
    pipe = loadstone.pipeline(
        f"sizes_{backend}", destination="duckdb", pipelines_dir=str(tmp_path), dataset_name="d"
    )
    pipe.run(
        sql_table(
            credentials=source_url,
            table="sizes",
            backend=backend,
            reflection_level="full_with_precision",
        )
    )
    columns = pipe.default_schema.tables["sizes"]["columns"]
    assert {name: columns[name].get("precision") for name in ("b16", "vb")} == {
        "b16": 16,
        "vb": 8,
    }
    assert columns["dbl"]["data_type"] == "double"
    with pipe.sql_client() as client:
        rows = client.execute_sql("SELECT dbl FROM sizes ORDER BY id")
    assert [row[0] for row in rows] == [0.12345678912345, None]
