"""Every example of the seed page ``destination-tables.md`` (and the variant-column example of
``schema.md``; both kept in ``tests/fixtures/seeds``) runs verbatim with ``import loadstone as dlt`` and gives the tables shown there.

The examples are read from the seed page itself (its ```py blocks) and executed unchanged,
except ``import dlt`` which becomes ``import loadstone as dlt``; blocks that only define
``data`` (Charlie, the variant column) run with the pipeline code the page says "remains the
same". Expected rows come from the seed's tables; where
the seed is silent (nested rows after the merge), from ``tests/fixtures/pipeline/``, recorded
once from dlt as a black box.
"""

from __future__ import annotations

import json
import re
from typing import Any

import duckdb
import locations
import pytest

FIXTURES = locations.FIXTURES / "pipeline"

pytestmark = pytest.mark.spark


def rows(sql: str, db: str = "quick_start.duckdb") -> list[tuple[Any, ...]]:
    with duckdb.connect(db, read_only=True) as conn:
        return conn.execute(sql).fetchall()


def tables_of(dataset: str, db: str = "quick_start.duckdb") -> list[str]:
    return [
        r[0]
        for r in rows(
            f"SELECT table_name FROM information_schema.tables WHERE table_schema = '{dataset}' "
            "ORDER BY table_name",
            db,
        )
    ]


SEEDS = locations.FIXTURES / "seeds"


def seed_blocks(name: str) -> list[str]:
    """The ```py blocks of a seed page, in order (kept in ``tests/fixtures/seeds/``), with
    ``import dlt`` made ``import loadstone as dlt``."""
    path = SEEDS / name.replace(".md", ".examples.json")
    blocks: list[str] = json.loads(path.read_text(encoding="utf-8"))["blocks"]
    return [b.replace("import dlt\n", "import loadstone as dlt\n") for b in blocks]


def run_block(code: str, namespace: dict[str, Any] | None = None) -> dict[str, Any]:
    """Execute one example as a script would (``import loadstone as dlt`` first)."""
    scope: dict[str, Any] = {"__name__": "__seed_example__"}
    scope.update(namespace or {})
    exec(compile("import loadstone as dlt\n" + code, "<seed example>", "exec"), scope)
    return scope


BLOCKS = seed_blocks("destination-tables.md")
SIMPLE, RESOURCE, NESTED, CHARLIE_DATA, MERGE, DEV_MODE = BLOCKS


def pipeline_part(block: str) -> str:
    """The lines of an example from ``pipeline = dlt.pipeline(`` on (its data left out)."""
    return block[block.index("pipeline = dlt.pipeline(") :]


def run_simple_pipeline() -> Any:
    scope = run_block(SIMPLE)
    return scope["pipeline"], scope["load_info"]


def run_nested_pipeline() -> Any:
    scope = run_block(NESTED)
    return scope["pipeline"], scope["load_info"]


def run_charlie() -> Any:
    # "The rest of the pipeline definition remains the same."
    scope = run_block(CHARLIE_DATA)
    scope = run_block(pipeline_part(NESTED), {"data": scope["data"]})
    return scope["pipeline"], scope["load_info"]


def run_merge() -> Any:
    scope = run_block(MERGE)
    return scope["pipeline"], scope["load_info"]


def test_the_seed_page_has_the_six_examples_this_file_runs() -> None:
    assert len(BLOCKS) == 6
    assert "dev_mode=True" in DEV_MODE and 'write_disposition="merge"' in MERGE


def test_simple_pipeline_creates_users_in_mydata_with_dlt_columns() -> None:
    _, load_info = run_simple_pipeline()
    assert rows("SELECT id, name FROM mydata.users ORDER BY id") == [(1, "Alice"), (2, "Bob")]
    ids = rows("SELECT _dlt_id, _dlt_load_id FROM mydata.users")
    assert all(len(row_id) == 14 for row_id, _ in ids)
    assert {load_id for _, load_id in ids} == set(load_info.loads_ids)
    columns = [
        r[0]
        for r in rows(
            "SELECT column_name FROM information_schema.columns WHERE table_schema='mydata' "
            "AND table_name='users' ORDER BY ordinal_position"
        )
    ]
    assert columns == ["id", "name", "_dlt_load_id", "_dlt_id"]


def test_resource_named_users_gives_the_same_table() -> None:
    scope = run_block(RESOURCE)
    assert rows("SELECT id, name FROM mydata.users ORDER BY id") == [(1, "Alice"), (2, "Bob")]
    assert len(scope["load_info"].loads_ids) == 1


def test_system_tables_are_created_in_the_dataset() -> None:
    run_simple_pipeline()
    assert {"_dlt_loads", "_dlt_version", "_dlt_pipeline_state", "users"} <= set(
        tables_of("mydata")
    )


def test_nested_lists_become_a_linked_nested_table() -> None:
    run_nested_pipeline()
    users = rows("SELECT id, name, _dlt_id FROM mydata.users ORDER BY id")
    assert [(i, n) for i, n, _ in users] == [(1, "Alice"), (2, "Bob")]
    alice, bob = users[0][2], users[1][2]
    pets = rows(
        "SELECT id, name, type, _dlt_parent_id, _dlt_list_idx, _dlt_id FROM mydata.users__pets "
        "ORDER BY id"
    )
    assert [p[:5] for p in pets] == [
        (1, "Fluffy", "cat", alice, 0),
        (2, "Spot", "dog", alice, 1),
        (3, "Fido", "dog", bob, 0),
    ]
    assert all(len(p[5]) == 14 for p in pets)


def test_nested_row_ids_are_deterministic_from_parent_table_and_position() -> None:
    import base64
    import hashlib

    run_nested_pipeline()
    for parent, idx, row_id in rows(
        "SELECT _dlt_parent_id, _dlt_list_idx, _dlt_id FROM mydata.users__pets"
    ):
        digest = hashlib.shake_128(f"{parent}_users__pets_{idx}".encode()).digest(10)
        assert row_id == base64.b64encode(digest).decode().rstrip("=")


def test_nested_table_has_no_load_id_column() -> None:
    run_nested_pipeline()
    columns = {
        r[0]
        for r in rows(
            "SELECT column_name FROM information_schema.columns WHERE table_schema='mydata' "
            "AND table_name='users__pets'"
        )
    }
    assert columns == {"id", "name", "type", "_dlt_id", "_dlt_parent_id", "_dlt_list_idx"}


def test_second_load_appends_charlie_with_a_new_load_id_and_two_loads_rows() -> None:
    _, first = run_nested_pipeline()
    _, second = run_charlie()
    users = rows("SELECT id, name, _dlt_load_id FROM mydata.users ORDER BY id")
    assert [(i, n) for i, n, _ in users] == [(1, "Alice"), (2, "Bob"), (3, "Charlie")]
    assert users[2][2] == second.loads_ids[0] != first.loads_ids[0]
    loads = rows(
        "SELECT load_id, schema_name, status, inserted_at::VARCHAR, schema_version_hash "
        "FROM mydata._dlt_loads ORDER BY load_id"
    )
    assert [(r[0], r[1], r[2]) for r in loads] == [
        (first.loads_ids[0], "quick_start", 0),
        (second.loads_ids[0], "quick_start", 0),
    ]
    assert all(r[3] is not None and r[4] for r in loads)
    # Charlie's empty list makes no nested rows
    assert rows("SELECT count(*) FROM mydata.users__pets") == [(3,)]


def test_merge_stages_in_mydata_staging_and_updates_users() -> None:
    expected = json.loads((FIXTURES / "destination_tables_merge_sequence.json").read_text())
    run_nested_pipeline()
    _, charlie = run_charlie()
    _, merged = run_merge()
    staging = rows("SELECT id, name, _dlt_load_id FROM mydata_staging.users ORDER BY id")
    assert [[i, n] for i, n, _ in staging] == expected["mydata_staging.users"]
    assert {load_id for _, _, load_id in staging} == set(merged.loads_ids)
    users = rows("SELECT id, name, _dlt_load_id FROM mydata.users ORDER BY id")
    assert [[i, n] for i, n, _ in users] == expected["mydata.users"]
    assert users[2][2] == charlie.loads_ids[0]
    assert [list(r) for r in rows("SELECT * FROM mydata.users__pets")] == expected[
        "mydata.users__pets"
    ]
    assert rows("SELECT count(*), min(status), max(status) FROM mydata._dlt_loads") == [(3, 0, 0)]


def test_dev_mode_loads_into_a_dataset_with_a_datetime_suffix() -> None:
    scope = run_block(DEV_MODE)
    pipeline, load_info = scope["pipeline"], scope["load_info"]

    assert re.fullmatch(r"mydata_\d{14}", pipeline.dataset_name)
    assert load_info.dataset_name == pipeline.dataset_name
    assert rows(f"SELECT id, name FROM {pipeline.dataset_name}.users ORDER BY id") == [
        (1, "Alice"),
        (2, "Bob"),
    ]
    assert "mydata" not in {
        r[0] for r in rows("SELECT schema_name FROM information_schema.schemata")
    }


def test_default_dataset_name_is_pipeline_name_with_dataset_suffix() -> None:
    import loadstone as dlt

    pipeline = dlt.pipeline(pipeline_name="quick_start", destination="duckdb")
    pipeline.run([{"id": 1}], table_name="users")
    assert pipeline.dataset_name == "quick_start_dataset"
    assert rows("SELECT id FROM quick_start_dataset.users") == [(1,)]


def schema_data_blocks() -> list[str]:
    """The two ``data = [...]`` examples of the variant-column section of schema.md."""
    blocks = seed_blocks("schema.md")
    return [b for b in blocks if b.lstrip().startswith("data = [") and "human_name" in b]


def test_variant_column_example_adds_id_v_text_then_id_v_double() -> None:
    import loadstone as dlt

    first, second = schema_data_blocks()
    pipeline = dlt.pipeline(
        pipeline_name="quick_start", destination="duckdb", dataset_name="mydata"
    )

    pipeline.run(run_block(first)["data"], table_name="users")
    columns = pipeline.default_schema.to_dict()["tables"]["users"]["columns"]
    assert columns["id"]["data_type"] == "bigint" and columns["id"]["nullable"] is True
    assert columns["human_name"]["data_type"] == "text"
    assert "id__v_text" not in columns

    pipeline.run(run_block(second)["data"], table_name="users")
    columns = pipeline.default_schema.to_dict()["tables"]["users"]["columns"]
    assert [
        (n, c["data_type"], c["nullable"]) for n, c in columns.items() if not n.startswith("_")
    ] == [
        ("id", "bigint", True),
        ("human_name", "text", True),
        ("id__v_text", "text", True),
    ]

    # "try to add a new record where id is a float number; you should see id__v_double"
    pipeline.run([{"id": 1.5, "human_name": "Carol"}], table_name="users")
    columns = pipeline.default_schema.to_dict()["tables"]["users"]["columns"]
    assert columns["id__v_double"]["data_type"] == "double"
    assert rows(
        "SELECT id, id__v_text, id__v_double, human_name FROM mydata.users ORDER BY human_name, id"
    ) == [
        (1, None, None, "Alice"),
        (1, None, None, "Alice"),
        (None, "idx-nr-456", None, "Bob"),
        (None, None, 1.5, "Carol"),
    ]
