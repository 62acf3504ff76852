"""Delta and Iceberg tables written by the filesystem destination, read by their own libraries.

The three loads of the issue: an append, an append that brings a new column (the table's
schema evolves), and a merge that updates one row by primary key and inserts another. Then
replace, delete-insert, one commit per package, and Parquet files committed as they are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from filesystem_support import DATASET, fs_pipeline, load_case

FORMATS = ["delta", "iceberg"]


def read_delta(bucket: Path, table: str) -> pa.Table:
    from deltalake import DeltaTable

    return DeltaTable(str(bucket / DATASET / table)).to_pyarrow_table()


def iceberg_table(bucket: Path, table: str) -> Any:
    """The table through a fresh pyiceberg SQL catalog on SQLite, from its metadata file."""
    from pyiceberg.catalog.sql import SqlCatalog

    folder = bucket / DATASET / table / "metadata"
    newest = max(folder.glob("*.metadata.json"), key=lambda p: int(p.name.split("-")[0]))
    catalog = SqlCatalog("check", uri=f"sqlite:///{bucket.parent / 'check.db'}")
    catalog.create_namespace_if_not_exists("check")
    identifier = ("check", table)
    if catalog.table_exists(identifier):
        catalog.drop_table(identifier)
    return catalog.register_table(identifier, f"file://{newest}")


def read_table(table_format: str, bucket: Path, table: str) -> pa.Table:
    if table_format == "delta":
        return read_delta(bucket, table)
    return iceberg_table(bucket, table).scan().to_arrow()


def commits(table_format: str, bucket: Path, table: str) -> int:
    """Commits of the table after its creation: Delta versions; Iceberg metadata files (one
    commit may hold several snapshots: an upsert is an overwrite and an append)."""
    if table_format == "delta":
        from deltalake import DeltaTable

        return len(DeltaTable(str(bucket / DATASET / table)).history())
    return len(list((bucket / DATASET / table / "metadata").glob("*.metadata.json"))) - 1


def _rows(table: pa.Table, *columns: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(row[c] for c in columns) for row in table.to_pylist())


@pytest.mark.parametrize("table_format", FORMATS)
def test_append_evolve_merge_read_back_by_the_formats_library(
    tmp_path: Path, table_format: str
) -> None:
    bucket = tmp_path / "bucket"
    pipeline = fs_pipeline(tmp_path, f"three_{table_format}", str(bucket))
    hints = {"table_format": table_format, "primary_key": "id"}
    pipeline.run(
        [{"id": 1, "name": "Alice"}, {"id": 2, "name": "Bob"}], table_name="users", **hints
    )
    pipeline.run([{"id": 3, "name": "Carl", "score": 1.5}], table_name="users", **hints)
    pipeline.run(
        [{"id": 2, "name": "Bobby", "score": 2.5}, {"id": 4, "name": "Dora"}],
        table_name="users",
        write_disposition={"disposition": "merge", "strategy": "upsert"},
        **hints,
    )
    table = read_table(table_format, bucket, "users")
    assert {"id", "name", "score", "_dlt_id", "_dlt_load_id"} <= set(table.column_names)
    assert pa.types.is_floating(table.schema.field("score").type)
    assert _rows(table, "id", "name", "score") == [
        (1, "Alice", None),
        (2, "Bobby", 2.5),
        (3, "Carl", 1.5),
        (4, "Dora", None),
    ]
    assert commits(table_format, bucket, "users") == 3
    assert sorted(pipeline.dataset()["users"].select("id", "name").fetchall())[1] == (2, "Bobby")


@pytest.mark.parametrize("table_format", FORMATS)
def test_delete_insert_replaces_the_rows_of_incoming_keys(
    tmp_path: Path, table_format: str
) -> None:
    bucket = tmp_path / "bucket"
    pipeline = fs_pipeline(tmp_path, f"di_{table_format}", str(bucket))
    hints: dict[str, Any] = {
        "table_format": table_format,
        "primary_key": "id",
        "write_disposition": {"disposition": "merge", "strategy": "delete-insert"},
    }
    pipeline.run([{"id": 1, "v": "a"}, {"id": 2, "v": "b"}], table_name="t", **hints)
    pipeline.run([{"id": 2, "v": "B"}, {"id": 3, "v": "c"}], table_name="t", **hints)
    assert _rows(read_table(table_format, bucket, "t"), "id", "v") == [
        (1, "a"),
        (2, "B"),
        (3, "c"),
    ]


def _delete_insert(table_format: str, **more: Any) -> dict[str, Any]:
    return {
        "table_format": table_format,
        "write_disposition": {"disposition": "merge", "strategy": "delete-insert"},
        **more,
    }


@pytest.mark.parametrize("table_format", FORMATS)
def test_delete_insert_replaces_the_nested_rows_of_a_replaced_parent(
    tmp_path: Path, table_format: str
) -> None:
    """A list that shrank keeps none of its old elements (as DuckDB's and dlt's SQL merge);
    duplicate package keys keep the first row and only its nested rows; nested tables two
    levels down follow their root."""
    bucket = tmp_path / "bucket"
    pipeline = fs_pipeline(tmp_path, f"shrink_{table_format}", str(bucket))
    hints = _delete_insert(table_format, primary_key="id")
    first = [
        {"id": 1, "tags": ["a", "b", "c"], "parts": [{"n": 1, "subs": [1, 2]}, {"n": 2}]},
        {"id": 2, "tags": ["q"], "parts": [{"n": 9, "subs": [9]}]},
    ]
    second = [
        {"id": 1, "tags": ["z"], "parts": [{"n": 1, "subs": [7]}]},
        {"id": 1, "tags": ["dropped", "too"]},
    ]
    pipeline.run(first, table_name="items", **hints)
    pipeline.run(second, table_name="items", **hints)
    assert _rows(read_table(table_format, bucket, "items"), "id") == [(1,), (2,)]
    assert _rows(read_table(table_format, bucket, "items__tags"), "value") == [("q",), ("z",)]
    assert _rows(read_table(table_format, bucket, "items__parts"), "n") == [(1,), (9,)]
    subs = read_table(table_format, bucket, "items__parts__subs")
    assert _rows(subs, "value") == [(7,), (9,)]


@pytest.mark.parametrize("table_format", FORMATS)
def test_delete_insert_without_the_list_empties_it_and_a_merge_key_matches_too(
    tmp_path: Path, table_format: str
) -> None:
    bucket = tmp_path / "bucket"
    pipeline = fs_pipeline(tmp_path, f"mk_{table_format}", str(bucket))
    hints = _delete_insert(table_format, primary_key="id", merge_key="day")
    pipeline.run(
        [
            {"id": 1, "day": "mon", "tags": ["a", "b"]},
            {"id": 2, "day": "tue", "tags": ["c"]},
            {"id": 3, "day": "wed", "tags": ["d"]},
        ],
        table_name="items",
        **hints,
    )
    pipeline.run([{"id": 1, "day": "thu"}, {"id": 9, "day": "tue"}], table_name="items", **hints)
    items = read_table(table_format, bucket, "items")
    assert _rows(items, "id", "day") == [(1, "thu"), (3, "wed"), (9, "tue")]
    assert _rows(read_table(table_format, bucket, "items__tags"), "value") == [("d",)]


@pytest.mark.parametrize("table_format", FORMATS)
def test_upsert_keeps_the_old_elements_of_a_shrunk_list_as_dlt_does(
    tmp_path: Path, table_format: str
) -> None:
    """dlt 1.31's upsert on Delta and Iceberg matches nested rows by ``_dlt_id`` only: the
    elements past a shrunk list's new length stay (recorded by running the same program)."""
    bucket = tmp_path / "bucket"
    pipeline = fs_pipeline(tmp_path, f"up_{table_format}", str(bucket))
    hints: dict[str, Any] = {
        "table_format": table_format,
        "primary_key": "id",
        "write_disposition": {"disposition": "merge", "strategy": "upsert"},
    }
    pipeline.run([{"id": 1, "tags": ["a", "b", "c"]}], table_name="items", **hints)
    pipeline.run([{"id": 1, "tags": ["z"]}], table_name="items", **hints)
    tags = read_table(table_format, bucket, "items__tags")
    assert _rows(tags, "value") == [("b",), ("c",), ("z",)]


@pytest.mark.parametrize("table_format", FORMATS)
def test_replace_overwrites_the_table(tmp_path: Path, table_format: str) -> None:
    bucket = tmp_path / "bucket"
    pipeline = fs_pipeline(tmp_path, f"rp_{table_format}", str(bucket))
    pipeline.run([{"id": 1}, {"id": 2}], table_name="t", table_format=table_format)
    pipeline.run(
        [{"id": 3}], table_name="t", table_format=table_format, write_disposition="replace"
    )
    assert _rows(read_table(table_format, bucket, "t"), "id") == [(3,)]


@pytest.mark.parametrize("table_format", FORMATS)
@pytest.mark.parametrize("disposition", ["append", "merge", "replace"])
def test_a_timestamp_without_zone_is_stored_without_zone(
    tmp_path: Path, table_format: str, disposition: str
) -> None:
    """dlt 1.31 stores a ``timezone: false`` column in Delta and Iceberg tables without zone
    (``timestamp[us]`` read back by deltalake / pyiceberg, the values as given); loadstone
    stored them in UTC (differential programs p1103, p1104)."""
    import datetime as dt

    import loadstone

    bucket = tmp_path / "bucket"
    pipeline = fs_pipeline(tmp_path, f"naive_{table_format}_{disposition}", str(bucket))

    def load(rows: list[dict[str, Any]]) -> None:
        resource = loadstone.resource(
            rows,
            name="t",
            primary_key="id",
            write_disposition=disposition,
            table_format=table_format,
            columns={"ts": {"data_type": "timestamp", "timezone": False}},
        )
        pipeline.run(resource)

    load([{"id": 1, "ts": dt.datetime(2024, 1, 2, 3, 4, 5)}])
    load([{"id": 2, "ts": dt.datetime(2024, 6, 1, 12, 0)}])
    table = read_table(table_format, bucket, "t")
    assert str(table.schema.field("ts").type) == "timestamp[us]"
    expected = [(1, dt.datetime(2024, 1, 2, 3, 4, 5)), (2, dt.datetime(2024, 6, 1, 12, 0))]
    expected = expected[1:] if disposition == "replace" else expected
    assert _rows(table, "id", "ts") == expected
    assert sorted(pipeline.dataset()["t"].select("id", "ts").fetchall()) == expected


@pytest.mark.parametrize("table_format", FORMATS)
def test_an_arrow_tables_struct_and_list_columns_stay_nested(
    tmp_path: Path, table_format: str
) -> None:
    """dlt 1.31 stores an Arrow item's struct and list columns in Delta and Iceberg tables as
    they are; loadstone stored their JSON text (differential program p1129)."""
    bucket = tmp_path / "bucket"
    pipeline = fs_pipeline(tmp_path, f"nested_{table_format}", str(bucket))
    table = pa.table({"id": [1, 2], "st": [{"a": 1, "b": "x"}, None], "li": [[1, 2], []]})
    pipeline.run(table, table_name="t", table_format=table_format)
    read = read_table(table_format, bucket, "t")
    assert str(read.schema.field("st").type) == "struct<a: int64, b: string>"
    assert str(read.schema.field("li").type).startswith("list<")
    assert _rows(read, "id", "li") == [(1, [1, 2]), (2, [])]


@pytest.mark.parametrize("table_format", FORMATS)
def test_insert_only_keeps_the_rows_of_keys_the_table_has(
    tmp_path: Path, table_format: str
) -> None:
    """dlt 1.31's insert-only merge on Delta and Iceberg adds rows of new keys and leaves the
    stored ones (and their nested rows) as they are; loadstone updated them as an upsert
    does (differential program p1142)."""
    import loadstone

    bucket = tmp_path / "bucket"
    pipeline = fs_pipeline(tmp_path, f"io_{table_format}", str(bucket))
    disposition: Any = {"disposition": "merge", "strategy": "insert-only"}

    def load(rows: list[dict[str, Any]]) -> None:
        resource = loadstone.resource(
            rows, name="t", primary_key="id", write_disposition=disposition
        )
        pipeline.run(resource, table_format=table_format)

    load([{"id": 1, "v": "a", "items": [1, 2]}, {"id": 2, "v": "b", "items": [3]}])
    load([{"id": 1, "v": "a2", "items": [9]}, {"id": 3, "v": "c", "items": []}])
    # dlt 1.31's outcome
    assert _rows(read_table(table_format, bucket, "t"), "id", "v") == [(1, "a"), (2, "b"), (3, "c")]
    items = read_table(table_format, bucket, "t__items")
    assert _rows(items, "value", "_dlt_list_idx") == [(1, 0), (2, 1), (3, 0)]


@pytest.mark.parametrize(
    ("table_format", "strategy"),
    [("delta", "upsert"), ("delta", "delete-insert"), ("iceberg", "delete-insert")],
)
def test_hard_delete_removes_the_marked_keys(
    tmp_path: Path, table_format: str, strategy: str
) -> None:
    """A row whose hard_delete column is true removes its key and is not stored: dlt 1.31's
    Delta upsert does so (loadstone ignored the hint, keeping id 1 as (1, 'a2', True) and
    adding id 4), and loadstone's delete-insert on both formats does as DuckDB's does
    (differential programs p1144, p1145)."""
    import loadstone

    bucket = tmp_path / "bucket"
    pipeline = fs_pipeline(tmp_path, f"hd_{table_format}_{strategy}", str(bucket))
    disposition: Any = {"disposition": "merge", "strategy": strategy}
    columns: Any = {"del": {"hard_delete": True}}

    def load(rows: list[dict[str, Any]]) -> None:
        resource = loadstone.resource(
            rows, name="t", primary_key="id", write_disposition=disposition, columns=columns
        )
        pipeline.run(resource, table_format=table_format)

    load([{"id": 1, "v": "a", "del": False}, {"id": 2, "v": "b", "del": False}])
    load(
        [
            {"id": 1, "v": "a2", "del": True},
            {"id": 3, "v": "c", "del": False},
            {"id": 4, "del": True},
        ]
    )
    assert _rows(read_table(table_format, bucket, "t"), "id", "v") == [(2, "b"), (3, "c")]


@pytest.mark.parametrize("table_format", FORMATS)
@pytest.mark.parametrize("strategy", ["upsert", "insert-only"])
def test_a_keyed_strategy_without_primary_key_is_refused(
    tmp_path: Path, table_format: str, strategy: str
) -> None:
    """dlt 1.31 refuses upsert and insert-only without a primary key ("primary_key needs to
    be set"), as loadstone's SQL destinations do; on table formats loadstone appended every
    row (differential programs p1176, p1177)."""
    import loadstone

    pipeline = fs_pipeline(tmp_path, f"nokey_{table_format}_{strategy}", str(tmp_path / "b"))
    disposition: Any = {"disposition": "merge", "strategy": strategy}
    resource = loadstone.resource(
        [{"day": 1}], name="t", merge_key="day", write_disposition=disposition
    )
    with pytest.raises(Exception, match="primary_key needs to be set"):
        pipeline.run(resource, table_format=table_format)


@pytest.mark.parametrize("table_format", FORMATS)
def test_scd2_is_refused_on_a_table_format(tmp_path: Path, table_format: str) -> None:
    """dlt 1.31 refuses the scd2 strategy on Delta and Iceberg tables; loadstone loaded it as
    an upsert of row hashes without _dlt_valid_to (differential program p1148)."""
    import loadstone

    pipeline = fs_pipeline(tmp_path, f"scd2_{table_format}", str(tmp_path / "bucket"))
    disposition: Any = {"disposition": "merge", "strategy": "scd2"}
    resource = loadstone.resource([{"id": 1}], name="t", write_disposition=disposition)
    with pytest.raises(Exception, match="scd2"):
        pipeline.run(resource, table_format=table_format)


def test_hard_delete_on_a_delta_upsert_with_nested_tables_is_refused(tmp_path: Path) -> None:
    """dlt 1.31 refuses it (the nested rows could not follow a deleted parent)."""
    import loadstone

    pipeline = fs_pipeline(tmp_path, "hd_nested", str(tmp_path / "bucket"))
    resource = loadstone.resource(
        [{"id": 1, "del": False, "items": [1]}],
        name="t",
        primary_key="id",
        write_disposition={"disposition": "merge", "strategy": "upsert"},
        columns={"del": {"hard_delete": True}},
    )
    with pytest.raises(Exception, match="hard_delete"):
        pipeline.run(resource, table_format="delta")


@pytest.mark.parametrize("table_format", FORMATS)
def test_appended_parquet_files_are_committed_as_they_are(
    tmp_path: Path, table_format: str
) -> None:
    bucket = tmp_path / "bucket"
    pipeline = fs_pipeline(tmp_path, f"direct_{table_format}", str(bucket))
    for i in range(2):
        pipeline.run([{"id": i}], table_name="t", table_format=table_format)
    folder = bucket / DATASET / "t" / ("data" if table_format == "iceberg" else "")
    # the normalizer's own file names (c<chunk>-a<attempt>-<n>.parquet) after a unique prefix
    copied = [p.name for p in folder.glob("*.parquet") if "-c00000-" in p.name]
    assert len(copied) == 2
    assert _rows(read_table(table_format, bucket, "t"), "id") == [(0,), (1,)]


def test_an_iceberg_append_logs_no_missing_statistics_warnings(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The normalizer's files carry no statistics; pyiceberg's add_files warned once per
    column per file ("PyArrow statistics missing for column 0 ...", on stderr in a plain
    program; differential program p713: dlt's runs print none)."""
    pipeline = fs_pipeline(tmp_path, "quiet", str(tmp_path / "bucket"))
    pipeline.run([{"id": 1, "name": "a"}], table_name="t", table_format="iceberg")
    pipeline.run([{"id": 2, "name": "b"}], table_name="t", table_format="iceberg")
    assert _rows(read_table("iceberg", tmp_path / "bucket", "t"), "id") == [(1,), (2,)]
    assert not [r for r in caplog.records if "statistics missing" in r.getMessage()]


@pytest.mark.parametrize("table_format", FORMATS)
@pytest.mark.parametrize(
    ("file_name", "table"),
    [
        ("github_events.json", "events"),
        ("github_issues.json", "issues"),
        ("weird_rows.json", "weird"),
        ("ethereum_blocks.json", "blocks"),
    ],
)
def test_every_shared_case_as_a_table_format(
    tmp_path: Path, cases_dir: Path, table_format: str, file_name: str, table: str
) -> None:
    bucket = tmp_path / "bucket"
    pipeline = fs_pipeline(tmp_path, f"case_{table_format}", str(bucket))
    info = pipeline.run(
        load_case(cases_dir, file_name), table_name=table, table_format=table_format
    )
    for name, rows in info.packages[0].row_counts.items():
        if rows:
            assert read_table(table_format, bucket, name).num_rows == rows, name


def test_a_configured_iceberg_catalog_holds_the_tables(tmp_path: Path) -> None:
    from pyiceberg.catalog.sql import SqlCatalog

    uri = f"sqlite:///{tmp_path / 'catalog.db'}"
    pipeline = fs_pipeline(
        tmp_path,
        "own_catalog",
        str(tmp_path / "bucket"),
        iceberg_catalog={"type": "sql", "uri": uri},
    )
    pipeline.run([{"id": 1}, {"id": 2}], table_name="t", table_format="iceberg")
    pipeline.run([{"id": 3}], table_name="t", table_format="iceberg")
    # the catalog name is iceberg_catalog_name, "default" unless configured
    table = SqlCatalog("default", uri=uri).load_table((DATASET, "t"))
    assert _rows(table.scan().to_arrow(), "id") == [(1,), (2,), (3,)]
