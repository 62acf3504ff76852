"""The filesystem destination's files: formats, dispositions, layouts, state, reading back.

Files are read back by pyarrow, gzip + json and DuckDB directly; ``pipeline.dataset()`` is
checked against them.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.parquet as pq
import pytest
from filesystem_support import (
    DATASET,
    counter_source,
    files_of,
    fs_pipeline,
    load_case,
    read_file_rows,
    rows_per_table,
)

from loadstone.plugins.destinations.filesystem.layout import LayoutError

CASES = [
    ("github_events.json", "events"),
    ("github_issues.json", "issues"),
    ("weird_rows.json", "weird"),
    ("ethereum_blocks.json", "blocks"),
]
USERS = [
    {"id": 1, "name": "Alice", "pets": [{"name": "Fluffy"}]},
    {"id": 2, "name": "Bob", "pets": [{"name": "Fido"}, {"name": "Rex"}]},
]


@pytest.mark.parametrize(("file_name", "table"), CASES)
def test_every_shared_case_reads_back_with_pyarrow_and_duckdb(
    tmp_path: Path, cases_dir: Path, file_name: str, table: str
) -> None:
    pipeline = fs_pipeline(tmp_path, f"case_{table}", str(tmp_path / "bucket"))
    info = pipeline.run(load_case(cases_dir, file_name), table_name=table)
    dataset_dir = tmp_path / "bucket" / DATASET
    loaded = {name: rows for name, rows in info.packages[0].row_counts.items() if rows}
    assert rows_per_table(dataset_dir) == loaded
    root_files = sorted((dataset_dir / table).glob("*.parquet"))
    with duckdb.connect() as conn:
        read = conn.execute(
            "SELECT count(*) FROM read_parquet(?, union_by_name = true)",
            [[str(f) for f in root_files]],
        ).fetchone()
    assert read is not None and read[0] == loaded[table]
    assert dict(pipeline.dataset().row_counts().fetchall()) == loaded


@pytest.mark.parametrize("file_format", ["jsonl", "csv"])
def test_text_formats_are_gzipped_and_hold_every_row(tmp_path: Path, file_format: str) -> None:
    pipeline = fs_pipeline(tmp_path, f"fmt_{file_format}", str(tmp_path / "bucket"))
    pipeline.run(USERS, table_name="users", loader_file_format=file_format)
    dataset_dir = tmp_path / "bucket" / DATASET
    users = [f for f in files_of(dataset_dir) if f.startswith("users/")]
    assert len(users) == 1 and users[0].endswith(f".{file_format}.gz")
    text = gzip.decompress((dataset_dir / users[0]).read_bytes()).decode()
    if file_format == "csv":
        assert text.splitlines()[0] == '"id","name","_dlt_load_id","_dlt_id"'
        assert len(text.splitlines()) == 3
    else:
        assert [r["name"] for r in read_file_rows(dataset_dir / users[0])] == ["Alice", "Bob"]
    assert sorted(pipeline.dataset()["users"].select("id", "name").fetchall()) == [
        (1, "Alice"),
        (2, "Bob"),
    ]


def test_append_adds_files_and_replace_keeps_only_the_last_load(tmp_path: Path) -> None:
    pipeline = fs_pipeline(tmp_path, "dispositions", str(tmp_path / "bucket"))
    dataset_dir = tmp_path / "bucket" / DATASET
    pipeline.run(USERS, table_name="users")
    pipeline.run(USERS, table_name="users")
    assert rows_per_table(dataset_dir) == {"users": 4, "users__pets": 6}
    info = pipeline.run([{"id": 9, "name": "Zed"}], table_name="users", write_disposition="replace")
    # the nested table got no rows this time and is emptied too, as in dlt
    assert rows_per_table(dataset_dir) == {"users": 1}
    assert [p.name.split(".")[0] for p in (dataset_dir / "users").iterdir()] == [
        info.loads_ids[0].split(".")[0]
    ]


def test_merge_without_a_table_format_appends_as_dlt_does(tmp_path: Path) -> None:
    """dlt 1.31 appends, and gives the nested tables no _dlt_root_id, which loadstone's had
    (differential programs p1113, p1114); a Delta table's have it, as dlt's."""
    pipeline = fs_pipeline(tmp_path, "merge_files", str(tmp_path / "bucket"))
    for name in ("a", "b"):
        pipeline.run(
            [{"id": 1, "name": name, "tags": [name]}],
            table_name="t",
            write_disposition="merge",
            primary_key="id",
        )
    assert rows_per_table(tmp_path / "bucket" / DATASET) == {"t": 2, "t__tags": 2}
    assert "_dlt_root_id" not in pipeline.default_schema.tables["t__tags"]["columns"]
    rows = [{"id": 1, "tags": ["x"]}]
    pipeline.run(
        rows, table_name="d", write_disposition="merge", primary_key="id", table_format="delta"
    )
    assert "_dlt_root_id" in pipeline.default_schema.tables["d__tags"]["columns"]


def test_layout_placeholders_place_the_files(tmp_path: Path) -> None:
    pipeline = fs_pipeline(
        tmp_path,
        "layouts",
        str(tmp_path / "bucket"),
        layout="{schema_name}/{table_name}/{year}/{month}/{load_id}.{file_id}.{ext}",
    )
    pipeline.run(USERS, table_name="users")
    pipeline.run(USERS, table_name="users", write_disposition="replace")
    users = [f for f in files_of(tmp_path / "bucket" / DATASET) if "/users/" in f]
    assert len(users) == 1
    schema, table, year, month, name = users[0].split("/")
    assert (schema, table) == ("layouts", "users")
    assert len(year) == 4 and len(month) == 2 and name.endswith(".parquet")
    assert pipeline.dataset()["users"].count() == 2


def test_dlts_date_tokens_place_the_files_as_dlt_does() -> None:
    """dlt 1.31 fills pendulum-style tokens in a layout; loadstone refused them as unknown
    (differential program p711). Values as dlt wrote them for a package of this instant
    (2026-11-28 05:20:31.36 UTC, a Saturday): ``mm``/``m`` are the month there too."""
    from loadstone.plugins.destinations.filesystem.layout import Layout

    tokens = "YYYY YY Y Q MM M MMM MMMM DD D HH H mm m ss s SSS S ddd dddd d".split()
    layout = Layout("{table_name}/" + "/".join(f"{{{t}}}" for t in tokens) + "/{file_id}.{ext}")
    path = layout.path("s", "t", "1795843231.360917", "f", "jsonl")
    assert path.split("/")[1:-1] == (
        "2026 26 2026 4 11 11 nov november 28 28 05 5 11 11 31 31 360 3 sat saturday 6".split()
    )


def test_a_date_token_layout_reads_back(tmp_path: Path) -> None:
    layout = "{table_name}/{YYYY}/{MM}/{DD}/{load_id}.{file_id}.{ext}"
    pipeline = fs_pipeline(tmp_path, "dated", str(tmp_path / "bucket"), layout=layout)
    pipeline.run(USERS, table_name="users")
    pipeline.run(USERS, table_name="users")
    assert pipeline.dataset()["users"].count() == 2 * len(USERS)


#: dlt 1.31's dataset over each file format gives these Arrow types (differential program p722)
DLT_READ_TYPES = {
    "amt": "decimal128(10, 2)",
    "naive": "timestamp[us]",
    "ts": "timestamp[us, tz=UTC]",
    "bin": "binary",
}


@pytest.mark.parametrize("file_format", ["jsonl", "csv", "parquet"])
def test_the_dataset_reads_the_schemas_types_from_every_file_format(
    tmp_path: Path, file_format: str
) -> None:
    """JSONL gave a decimal back as text and binary as base64, CSV a decimal as a double,
    every format a naive timestamp with a zone (differential program p722)."""
    import datetime as dt
    from decimal import Decimal

    import loadstone

    pipeline = fs_pipeline(tmp_path, f"typed_{file_format}", str(tmp_path / "bucket"))
    row = {
        "amt": Decimal("12.50"),
        "naive": dt.datetime(2024, 1, 1, 12, 30),
        "ts": dt.datetime(2024, 1, 1, 12, 30, tzinfo=dt.timezone.utc),
        "bin": b"\x01\x02",
    }
    columns = {
        "amt": {"data_type": "decimal", "precision": 10, "scale": 2},
        "naive": {"data_type": "timestamp", "timezone": False},
    }
    resource = loadstone.resource([row], name="typed", columns=columns)
    pipeline.run(resource, loader_file_format=file_format)
    table = pipeline.dataset()["typed"].arrow()
    assert {n: str(table.schema.field(n).type) for n in DLT_READ_TYPES} == DLT_READ_TYPES
    got = table.select(list(row)).to_pylist()[0]
    assert got["amt"] == Decimal("12.50") and got["bin"] == b"\x01\x02"
    assert got["naive"] == dt.datetime(2024, 1, 1, 12, 30)


@pytest.mark.parametrize("file_format", ["jsonl", "csv", "parquet"])
def test_a_timestamp_without_zone_is_written_without_zone(tmp_path: Path, file_format: str) -> None:
    """dlt 1.31 writes a timezone: false column as it was given, naive (JSONL
    '2024-01-01T12:30:00', Parquet timestamp[us]); the normalizer's UTC zone reached the
    files (differential program p722)."""
    import datetime as dt

    import loadstone

    monkey_env = {"DATA_WRITER__DISABLE_COMPRESSION": "true"}
    bucket = tmp_path / "bucket"
    pipeline = fs_pipeline(tmp_path, f"naive_{file_format}", str(bucket))
    resource = loadstone.resource(
        [{"id": 1, "naive": dt.datetime(2024, 1, 1, 12, 30)}],
        name="events",
        columns={"naive": {"data_type": "timestamp", "timezone": False}},
    )
    with pytest.MonkeyPatch.context() as patch:
        for key, value in monkey_env.items():
            patch.setenv(key, value)
        pipeline.run(resource, loader_file_format=file_format)
    (written,) = [f for f in files_of(bucket / DATASET) if f.startswith("events/")]
    path = bucket / DATASET / written
    if file_format == "parquet":
        assert str(pq.read_schema(path).field("naive").type) == "timestamp[us]"
    else:
        text = path.read_text(encoding="utf-8")
        assert re.search(r"2024-01-01.12:30:00(\.0+)?(Z|\+00:00)", text) is None
        assert "2024-01-01" in text
    assert pipeline.dataset()["events"].select("naive").fetchall() == [
        (dt.datetime(2024, 1, 1, 12, 30),)
    ]


@pytest.mark.parametrize("refresh", ["drop_sources", "drop_resources", "drop_data"])
def test_refresh_removes_the_tables_files(tmp_path: Path, refresh: str) -> None:
    """refresh= on the filesystem destination failed the extract (AttributeError: the
    client has no dataset_exists); dlt 1.31 drops the tables' files and loads the new rows
    alone (differential program p726)."""
    pipeline = fs_pipeline(tmp_path, f"refresh_{refresh}", str(tmp_path / "bucket"))
    pipeline.run([{"id": 1, "tags": ["x"]}, {"id": 2, "tags": ["y"]}], table_name="users")
    pipeline.run([{"id": 3, "tags": ["z"]}], table_name="users", refresh=refresh)
    assert pipeline.dataset()["users"].select("id").fetchall() == [(3,)]
    assert pipeline.dataset()["users__tags"].select("value").fetchall() == [("z",)]


def test_jsonl_files_hold_json_columns_as_json_values(tmp_path: Path) -> None:
    """dlt 1.31 writes a json column into JSONL as the object or list itself; loadstone wrote
    a string holding its JSON text (differential program p733). The dataset reads it back as
    the JSON text, as dlt's does."""
    import loadstone

    bucket = tmp_path / "bucket"
    pipeline = fs_pipeline(tmp_path, "json_values", str(bucket))
    rows = [{"id": 1, "meta": {"a": {"b": [1, 2]}}}, {"id": 2, "meta": None}]
    pipeline.run(
        loadstone.resource(rows, name="docs", max_table_nesting=0), loader_file_format="jsonl"
    )
    (written,) = [f for f in files_of(bucket / DATASET) if f.startswith("docs/")]
    values = {
        r["id"]: r.get("meta", "left out") for r in read_file_rows(bucket / DATASET / written)
    }
    assert values == {1: {"a": {"b": [1, 2]}}, 2: "left out"}  # dlt leaves a null out
    assert sorted(pipeline.dataset()["docs"].select("id", "meta").fetchall()) == [
        (1, '{"a":{"b":[1,2]}}'),
        (2, None),
    ]


def test_an_unknown_placeholder_is_refused_before_loading(tmp_path: Path) -> None:
    pipeline = fs_pipeline(tmp_path, "bad_layout", str(tmp_path / "bucket"), layout="{nope}/{ext}")
    with pytest.raises(Exception, match="nope") as caught:
        pipeline.run(USERS, table_name="users")
    assert isinstance(caught.value, LayoutError) or isinstance(caught.value.__cause__, LayoutError)


def test_state_and_schema_are_restored_from_the_bucket(tmp_path: Path) -> None:
    bucket = str(tmp_path / "bucket")
    first = fs_pipeline(tmp_path / "one", "restore", bucket)
    first.run(counter_source())
    first.run(counter_source())
    fresh = fs_pipeline(tmp_path / "two", "restore", bucket)
    fresh.run(counter_source())
    assert fresh.state["sources"]["numbers"]["resources"]["counter"] == {"last": 9}
    assert sorted(fresh.dataset()["counter"].select("n").fetchall()) == [(n,) for n in range(9)]
    assert fresh.default_schema.name == "numbers"


def test_the_bucket_url_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import loadstone

    monkeypatch.setenv("DESTINATION__FILESYSTEM__BUCKET_URL", f"file://{tmp_path}/env_bucket")
    pipeline = loadstone.pipeline(
        pipeline_name="env_bucket",
        destination="filesystem",
        dataset_name="ds",
        pipelines_dir=tmp_path / "pipelines",
    )
    pipeline.run(USERS, table_name="users")
    written = list((tmp_path / "env_bucket" / "ds" / "users").glob("*.parquet"))
    assert sum(pq.read_table(f).num_rows for f in written) == 2


def test_loadstone_run_loads_into_the_filesystem_destination(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from loadstone.cli import main

    source = tmp_path / "orders.jsonl"
    source.write_text('{"id": 1, "items": [{"sku": "a"}]}\n{"id": 2, "items": []}\n')
    monkeypatch.setenv("DESTINATION__FILESYSTEM__BUCKET_URL", str(tmp_path / "cli_bucket"))
    argv = ["run", str(source), "--table", "orders", "--pipeline", "cli_files"]
    argv += ["--destination", "filesystem", "--dataset", "shop", "--quiet"]
    assert main(argv) == 0, capsys.readouterr().err
    dataset_dir = tmp_path / "cli_bucket" / "shop"
    assert rows_per_table(dataset_dir) == {"orders": 2, "orders__items": 1}


def test_dlts_data_writer_key_turns_compression_off_and_a_later_csv_has_every_column(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATA_WRITER__DISABLE_COMPRESSION", "true")
    bucket = tmp_path / "bucket"
    pipeline = fs_pipeline(tmp_path, "csvs", str(bucket), loader_file_format="csv")
    pipeline.run([{"a": 1, "b": "x"}], table_name="t")
    pipeline.run([{"a": 2, "c": 1.5}], table_name="t")
    files = sorted((bucket / DATASET / "t").iterdir())
    assert [f.suffix for f in files] == [".csv", ".csv"]  # not .csv.gz
    headers = [f.read_text().splitlines()[0] for f in files]
    assert headers[1] == '"a","b","_dlt_load_id","_dlt_id","c"'  # b is in the later file too
    # dlt 1.31's CSV of rows: a value missing is written as "" (Python's csv module)
    assert files[1].read_text().splitlines()[1].startswith('2,"",')


def test_text_files_of_rows_and_of_arrow_tables_are_written_as_dlt_writes_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """dlt 1.31 writes a CSV of rows with Python's csv module (True/False, 2.0, text quoted)
    and leaves a row's null values out of its JSONL line; a CSV of an Arrow table is
    pyarrow's (true/false, 2). loadstone wrote every file as pyarrow does, so pandas read a
    float column of whole numbers back as int64 (differential programs p1100, p1107, p1109)."""
    import pyarrow as pa

    monkeypatch.setenv("DATA_WRITER__DISABLE_COMPRESSION", "true")
    bucket = tmp_path / "bucket"
    pipeline = fs_pipeline(tmp_path, "text_rows", str(bucket))
    rows = [{"id": 1, "ok": True, "f": 2.0, "s": "a,b"}, {"id": 2, "ok": False, "f": 0.5}]
    pipeline.run(rows, table_name="r", loader_file_format="csv")
    pipeline.run(pa.Table.from_pylist(rows), table_name="a", loader_file_format="csv")
    pipeline.run(rows, table_name="j", loader_file_format="jsonl")

    def lines(table: str) -> list[str]:
        (path,) = (bucket / DATASET / table).iterdir()
        return path.read_text().splitlines()[1:]

    # dlt 1.31's outcome (the rows' load id and row id cut off; Arrow tables have none)
    assert [line.rsplit(',"', 2)[0] for line in lines("r")] == [
        '1,True,2.0,"a,b"',
        '2,False,0.5,""',
    ]
    assert lines("a") == ['1,true,2,"a,b"', "2,false,0.5,"]
    (jsonl,) = (bucket / DATASET / "j").iterdir()
    assert [sorted(r) for r in read_file_rows(jsonl)][1] == [
        "_dlt_id",
        "_dlt_load_id",
        "f",
        "id",
        "ok",
    ]
    # a later load's line: the row's own keys, then the _dlt_ ones, as dlt's (p1111)
    pipeline.run([{"id": 3, "z": 1}], table_name="j", loader_file_format="jsonl")
    (later,) = [f for f in (bucket / DATASET / "j").iterdir() if f != jsonl]
    assert list(read_file_rows(later)[0]) == ["id", "z", "_dlt_load_id", "_dlt_id"]


def test_an_arrow_tables_struct_and_list_columns_stay_nested_in_parquet(tmp_path: Path) -> None:
    """dlt 1.31 writes an Arrow item's struct and list columns into the filesystem's Parquet
    as they are (the schema says json) and its dataset reads them back as dicts and lists;
    loadstone wrote their JSON text (differential programs p1102, p1128)."""
    import pyarrow as pa

    bucket = tmp_path / "bucket"
    pipeline = fs_pipeline(tmp_path, "nested_arrow", str(bucket))
    table = pa.table({"id": [1, 2], "st": [{"a": 1, "b": "x"}, None], "li": [[1, 2], []]})
    pipeline.run(table, table_name="t", loader_file_format="parquet")
    pipeline.run(table, table_name="c", loader_file_format="csv")
    (written,) = (bucket / DATASET / "t").iterdir()
    schema = pq.read_schema(written)
    assert [str(schema.field(n).type) for n in ("st", "li")] == [
        "struct<a: int64, b: string>",
        "list<element: int64>",
    ]
    assert sorted(pipeline.dataset()["t"].select("id", "st", "li").fetchall()) == [
        (1, {"a": 1, "b": "x"}, [1, 2]),
        (2, None, []),
    ]
    # dlt 1.31 cannot write these into CSV; loadstone writes their JSON text
    (csv_file,) = (bucket / DATASET / "c").iterdir()
    lines = gzip.decompress(csv_file.read_bytes()).decode().splitlines()
    assert lines[1] == '1,"{""a"":1,""b"":""x""}","[1,2]"'


@pytest.mark.parametrize("given", ["relative", "file_url"])
def test_load_info_and_the_dataset_show_the_bucket_as_dlt_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    """dlt 1.31 shows a local bucket as its absolute file:// URL in the load info ("The
    filesystem destination used file:///.../lake location to store data") and in the
    dataset's text; loadstone showed the path as given, and nothing for a bucket_url=
    keyword (differential program p1135)."""
    monkeypatch.chdir(tmp_path)
    url = "lake" if given == "relative" else (tmp_path / "lake").as_uri()
    pipeline = fs_pipeline(tmp_path, f"shown_{given}", url)
    info = pipeline.run([{"id": 1}], table_name="t")
    expected = (tmp_path / "lake").as_uri()
    assert info.destination_displayable_credentials == expected
    assert f"The filesystem destination used {expected} location to store data" in str(info)
    assert f"at `filesystem[{expected}]`" in str(pipeline.dataset())


def test_an_scd2_table_of_plain_files_reads_its_validity_columns(tmp_path: Path) -> None:
    """dlt 1.31 appends an scd2 table's rows to plain files and its dataset has the schema's
    columns, _dlt_valid_to (null) included, in the schema's order; loadstone's view lacked
    the column no file holds (differential program p1148)."""
    import loadstone

    pipeline = fs_pipeline(tmp_path, "scd2_files", str(tmp_path / "bucket"))
    disposition: Any = {"disposition": "merge", "strategy": "scd2"}
    pipeline.run(loadstone.resource([{"id": 1}], name="t", write_disposition=disposition))
    relation = pipeline.dataset()["t"]
    assert relation.columns == ["_dlt_valid_from", "_dlt_valid_to", "id", "_dlt_load_id", "_dlt_id"]
    assert relation.select("id", "_dlt_valid_to").fetchall() == [(1, None)]


def test_a_missing_table_is_an_undefined_relation_as_on_duckdb(tmp_path: Path) -> None:
    """dlt 1.31's filesystem sql_client raises DatabaseUndefinedRelation for a table that
    is not there, as its DuckDB does; loadstone raised DatabaseTerminalError (differential
    program p1155)."""
    from loadstone.destinations.exceptions import DatabaseUndefinedRelation

    pipeline = fs_pipeline(tmp_path, "undefined", str(tmp_path / "bucket"))
    pipeline.run([{"id": 1}], table_name="t")
    with pipeline.sql_client() as client, pytest.raises(DatabaseUndefinedRelation):
        client.execute_sql("SELECT * FROM nope")


@pytest.mark.parametrize("file_format", ["parquet", "jsonl"])
def test_a_naive_timestamp_reads_back_at_its_precision(tmp_path: Path, file_format: str) -> None:
    """dlt 1.31's filesystem dataset reads a timezone: false timestamp of precision 0 as
    DuckDB's TIMESTAMP_S (12:00:00.9 rounds to 12:00:01), as its DuckDB destination stores
    it; loadstone's read the microseconds (differential program p1157)."""
    import datetime as dt

    import loadstone

    pipeline = fs_pipeline(tmp_path, f"precision_{file_format}", str(tmp_path / "bucket"))
    columns: Any = {"n0": {"data_type": "timestamp", "timezone": False, "precision": 0}}
    rows = [{"n0": dt.datetime(2024, 1, 1, 12, 0, 0, 900000)}]
    pipeline.run(
        loadstone.resource(rows, name="t", columns=columns), loader_file_format=file_format
    )
    assert pipeline.dataset()["t"].select("n0").fetchall() == [(dt.datetime(2024, 1, 1, 12, 0, 1),)]


# dlt 1.31's CSV lines (rows' load id and row id columns cut off) under its quoting settings
CSV_QUOTING = {
    "quote_all": (['"id","s","f"', '"1","a","2.0"', '"2","","1.5"'], ['"id","s"', '"1","a"']),
    "quote_none": (["id,s,f", "1,a,2.0", "2,,1.5"], ["id,s", "1,a"]),
}


@pytest.mark.parametrize("quoting", sorted(CSV_QUOTING))
def test_dlts_csv_settings_shape_the_files_and_the_dataset_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, quoting: str
) -> None:
    """dlt 1.31's [normalize.data_writer] quoting, delimiter and include_header shape its
    CSV files of rows and of Arrow tables; loadstone ignored them (differential program
    p1175)."""
    import pyarrow as pa

    monkeypatch.setenv("DATA_WRITER__DISABLE_COMPRESSION", "true")
    monkeypatch.setenv("NORMALIZE__DATA_WRITER__QUOTING", quoting)
    bucket = tmp_path / "bucket"
    pipeline = fs_pipeline(tmp_path, f"csv_{quoting}", str(bucket), loader_file_format="csv")
    pipeline.run([{"id": 1, "s": "a", "f": 2.0}, {"id": 2, "f": 1.5}], table_name="r")
    pipeline.run(pa.table({"id": [1], "s": ["a"]}), table_name="a")
    rows_file, arrow_file = (next((bucket / DATASET / t).iterdir()) for t in ("r", "a"))
    cut = [line.rsplit(",", 2)[0] for line in rows_file.read_text().splitlines()]
    assert (cut, arrow_file.read_text().splitlines()) == CSV_QUOTING[quoting]
    assert sorted(pipeline.dataset()["r"].select("id", "f").fetchall()) == [(1, 2.0), (2, 1.5)]

    monkeypatch.setenv("NORMALIZE__DATA_WRITER__DELIMITER", ";")
    monkeypatch.setenv("NORMALIZE__DATA_WRITER__INCLUDE_HEADER", "false")
    other = fs_pipeline(tmp_path, f"semi_{quoting}", str(tmp_path / "b2"), loader_file_format="csv")
    other.run([{"id": 1, "s": "x"}], table_name="t")
    (written,) = (tmp_path / "b2" / DATASET / "t").iterdir()
    assert written.read_text().splitlines()[0].lstrip('"').startswith("1")  # no header
    assert ";" in written.read_text()
    assert other.dataset()["t"].select("id", "s").fetchall() == [(1, "x")]
