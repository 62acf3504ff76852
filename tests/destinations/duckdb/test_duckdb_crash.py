"""A process killed in the middle of a load leaves all of the package or none of it.

The load runs in a child process that ends itself abruptly (``os._exit``, no cleanup, no
rollback) right after the k-th SQL statement of the package; the parent then opens the real
database file, checks that the package is either wholly visible or not at all, and retries:
the package ends up loaded exactly once whatever k was. The children are forked from one
preloaded parent (``preloaded_children.py``) that imported loadstone's DuckDB client, DuckDB
and pyarrow: each is a process of its own, without paying those imports again.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from preloaded_children import Preloaded, preloaded
from test_duckdb_support import duckdb_destination, parquet, request, rows, schema, table

from tests.destinations.schema_support import stored_schema

TESTS = Path(__file__).resolve().parent
LOAD_ID = "1700000999.5"

CHILD = textwrap.dedent(
    """
    import json, os, sys
    sys.path[:0] = [{tests!r}, {root!r}]
    from test_duckdb_support import duckdb_destination, request
    from loadstone.plugins.destinations.duckdb.client import DuckDBClient
    from tests.destinations.schema_support import stored_schema

    crash_after, spec = int(sys.argv[1]), json.loads(sys.argv[2])
    statements = 0
    original = DuckDBClient._exec

    def counting(self, sql, params=None):
        global statements
        original(self, sql, params)
        statements += 1
        if statements == crash_after:
            os._exit(17)

    DuckDBClient._exec = counting
    with duckdb_destination(spec["db"]).client(stored_schema(spec["schema"]), "shop") as client:
        client.load_package(request(spec["schema"], spec["tables"], {load_id!r}, {{"s": 1}}))
    print(statements)
    """
)


def _package(tmp: Path) -> tuple[dict, dict]:
    stored = schema(
        users=table(
            {"id": {"data_type": "bigint", "primary_key": True, "nullable": False}},
            write_disposition="merge",
        ),
        users__pets=table({"value": {"data_type": "text"}}, parent="users", root_key=True),
    )
    users = parquet(
        tmp / "u", [{"id": i, "_dlt_id": f"r{i}", "_dlt_load_id": LOAD_ID} for i in range(3)]
    )
    pets = parquet(
        tmp / "p",
        [
            {
                "value": "cat",
                "_dlt_id": f"p{i}",
                "_dlt_parent_id": f"r{i}",
                "_dlt_root_id": f"r{i}",
                "_dlt_list_idx": 0,
            }
            for i in range(3)
        ],
    )
    return stored, {"users": [str(users)], "users__pets": [str(pets)]}


@pytest.fixture(scope="module")
def parent() -> Iterator[Preloaded]:
    yield from preloaded(
        "loadstone.plugins.destinations.duckdb.client",
        "loadstone.schema",
        "duckdb",
        "pyarrow",
        "pyarrow.parquet",
    )


def _run_child(parent: Preloaded, tmp: Path, crash_after: int) -> subprocess.CompletedProcess[str]:
    stored, tables = _package(tmp)
    spec = {"db": str(tmp / "db.duckdb"), "schema": stored, "tables": tables}
    code = CHILD.format(tests=str(TESTS), root=str(TESTS.parents[2]), load_id=LOAD_ID)
    return parent.run(code, [str(crash_after), json.dumps(spec)], timeout=120)


#: after the k-th statement: 1 is before BEGIN, the last is after COMMIT (checked below)
CRASH_POINTS = [1, 2, 4, 7, 10, 13, 16, 19, 21, 22, 23]


@pytest.mark.parametrize("crash_after", CRASH_POINTS)
def test_crash_after_any_statement_leaves_all_or_nothing_and_retry_loads_once(
    parent: Preloaded, tmp_path: Path, crash_after: int
) -> None:
    child = _run_child(parent, tmp_path, crash_after)
    assert child.returncode in (0, 17), child.stderr
    stored, tables = _package(tmp_path / "retry")
    with duckdb_destination(tmp_path / "db.duckdb").client(stored_schema(stored), "shop") as client:
        loaded = client.is_package_loaded(LOAD_ID)
        users = rows(client, "users", columns="id") if client.table_exists("users") else []
        assert users == ([(0,), (1,), (2,)] if loaded else [])
        client.load_package(request(stored, tables, LOAD_ID))
        assert rows(client, "users", columns="id") == [(0,), (1,), (2,)]
        assert len(rows(client, "users__pets")) == 3
        assert rows(client, "_dlt_loads", columns="load_id") == [(LOAD_ID,)]
        assert len(rows(client, "_dlt_pipeline_state")) == (1 if loaded else 0)


def test_the_crash_points_cover_the_whole_package(parent: Preloaded, tmp_path: Path) -> None:
    child = _run_child(parent, tmp_path, 10_000)
    assert child.returncode == 0, child.stderr
    statements = int(child.stdout.split()[-1])
    # the last crash point falls on the final statement (COMMIT), so some crash points
    # land inside the transaction and one just after it
    assert statements == CRASH_POINTS[-1]
