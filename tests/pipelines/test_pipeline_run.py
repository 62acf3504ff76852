"""``pipeline.run``: every kind of input, load info, querying the dataset, state and packages."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml

import loadstone as dlt
from loadstone import current
from loadstone.cli import main
from loadstone.destinations.exceptions import DestinationIncompatibleLoaderFileFormatException
from loadstone.exceptions import LoaderFileFormatNotSupported
from loadstone.pipelines.pipeline import Pipeline

pytestmark = pytest.mark.spark


def rows(db: str, sql: str) -> list[tuple[Any, ...]]:
    with duckdb.connect(db, read_only=True) as conn:
        return conn.execute(sql).fetchall()


def test_generator_items_are_loaded() -> None:
    pipe = dlt.pipeline("gen", destination="duckdb", dataset_name="d")
    pipe.run(({"id": i} for i in range(5)), table_name="numbers")
    assert rows("gen.duckdb", "SELECT sum(id), count(*) FROM d.numbers") == [(10, 5)]


def test_jsonl_gz_and_json_array_files_are_loaded(tmp_path: Path) -> None:
    gz = tmp_path / "events.jsonl.gz"
    with gzip.open(gz, "wt") as handle:
        handle.write('{"id": 1, "tags": ["a", "b"]}\n{"id": 2, "tags": []}\n')
    array = tmp_path / "more.json"
    array.write_text(json.dumps([{"id": 3, "tags": ["c"]}], indent=2))
    pipe = dlt.pipeline("files", destination="duckdb", dataset_name="d")
    pipe.run(str(gz), table_name="events")
    pipe.run(array, table_name="events")
    assert rows("files.duckdb", "SELECT id FROM d.events ORDER BY id") == [(1,), (2,), (3,)]
    assert rows("files.duckdb", "SELECT value FROM d.events__tags ORDER BY value") == [
        ("a",),
        ("b",),
        ("c",),
    ]


def test_spark_dataframe_is_written_by_spark_and_loaded(spark: Any) -> None:
    df = spark.createDataFrame([(1, "a"), (2, "b")], ["id", "name"])
    pipe = dlt.pipeline("frames", destination="duckdb", dataset_name="d")
    info = pipe.run(df, table_name="people")
    assert rows("frames.duckdb", "SELECT id, name FROM d.people ORDER BY id") == [
        (1, "a"),
        (2, "b"),
    ]
    assert info.row_counts["people"] == 2


def test_a_dataframes_types_are_its_tables_types_and_keep_every_digit(spark: Any) -> None:
    """Decimals keep precision, scale and digits, dates and binaries their type, strings
    stay text, in the DataFrame's column order; a list's nested table is typed alike."""
    import datetime as dt
    from decimal import Decimal

    schema = (
        "id long, amount decimal(38,18), paid struct<on:date, `Ref Code`:string>, "
        "stamp_text string, blob binary, score double, parts array<decimal(20,12)>"
    )
    amount = Decimal("12345678901234567890.123456789012345678")
    data = [(1, amount, (dt.date(2024, 2, 29), "2024-01-01T00:00:00Z"), "2024-01-01T00:00:00Z")]
    df = spark.createDataFrame(
        [(*data[0], bytearray(b"\x00\xff"), float("nan"), [Decimal("2.123456789012")])], schema
    )
    pipe = dlt.pipeline("typed_frames", destination="duckdb", dataset_name="d")
    pipe.run(df, table_name="payments")
    columns = pipe.default_schema.get_table("payments")["columns"]
    assert [
        (name, c.get("data_type"), c.get("precision"), c.get("scale"))
        for name, c in columns.items()
    ][:7] == [
        ("id", "bigint", None, None),
        ("amount", "decimal", 38, 18),
        ("paid__on", "date", None, None),
        ("paid__ref_code", "text", None, None),
        ("stamp_text", "text", None, None),
        ("blob", "binary", None, None),
        ("score", "double", None, None),
    ]
    sql = "SELECT amount, paid__on, paid__ref_code, stamp_text, blob, score FROM d.payments"
    assert rows("typed_frames.duckdb", sql) == [
        (
            amount,
            dt.date(2024, 2, 29),
            "2024-01-01T00:00:00Z",
            "2024-01-01T00:00:00Z",
            b"\x00\xff",
            None,
        )
    ]
    parts = rows("typed_frames.duckdb", "SELECT value FROM d.payments__parts")
    assert parts == [(Decimal("2.123456789012"),)]  # the list's decimal(20,12), every digit


def test_a_resource_may_yield_dataframes_and_merge_them(spark: Any) -> None:
    @dlt.resource(primary_key="id", write_disposition="merge")
    def people(*frames: Any) -> Any:
        yield from frames

    schema = "id long, name string, tags array<int>"
    pipe = dlt.pipeline("yielded_frames", destination="duckdb", dataset_name="d")
    first = spark.createDataFrame([(1, "a", [1, 2]), (2, "b", [3])], schema)
    pipe.run(people(first, spark.createDataFrame([(5, "e", [])], schema)))
    pipe.run(people(spark.createDataFrame([(1, "a2", []), (3, "c", [4])], schema)))
    assert rows("yielded_frames.duckdb", "SELECT id, name FROM d.people ORDER BY id") == [
        (1, "a2"),
        (2, "b"),
        (3, "c"),
        (5, "e"),
    ]
    tags = rows("yielded_frames.duckdb", "SELECT value FROM d.people__tags ORDER BY value")
    assert tags == [(3,), (4,)]


def test_source_loads_only_selected_resources() -> None:
    @dlt.source
    def shop():
        return [
            dlt.resource([{"id": 1}], name="orders"),
            dlt.resource([{"id": 2}], name="customers"),
        ]

    pipe = dlt.pipeline("shop_src", destination="duckdb", dataset_name="d")
    info = pipe.run(shop().with_resources("customers"))
    assert set(info.row_counts) == {"customers"}
    assert pipe.default_schema.name == "shop"
    assert "orders" not in pipe.default_schema.tables


def test_load_info_prints_and_serializes_ids_counts_steps() -> None:
    pipe = dlt.pipeline("info", destination="duckdb", dataset_name="d")
    info = pipe.run([{"id": 1, "kids": [{"n": 1}, {"n": 2}]}], table_name="parents")
    text = info.with_figures()
    assert info.loads_ids[0] in text
    assert "LOADED" in text and "parents__kids" in text
    data = info.to_trace()  # loadstone's JSON form, the trace keeps it (asdict() is dlt's)
    assert data["row_counts"] == {"parents": 1, "parents__kids": 2}
    assert set(data["steps"]) == {"extract", "normalize", "load"}
    assert data["packages"][0]["new_tables"] == ["parents", "parents__kids"]
    json.dumps(data)


def test_dataset_gives_rows_arrow_and_row_counts() -> None:
    pipe = dlt.pipeline("query", destination="duckdb", dataset_name="d")
    pipe.run([{"id": 1, "name": "Alice"}, {"id": 2, "name": "Bob"}], table_name="users")
    users = pipe.dataset()["users"]
    assert sorted(r[:2] for r in users.fetchall()) == [(1, "Alice"), (2, "Bob")]
    table = users.arrow()
    assert table.num_rows == 2 and "_dlt_id" in table.column_names
    assert pipe.dataset().row_counts().fetchall() == [("users", 2)]


def test_sql_client_runs_sql_on_the_dataset() -> None:
    pipe = dlt.pipeline("sqlc", destination="duckdb", dataset_name="d")
    pipe.run([{"id": 7}], table_name="t")
    with pipe.sql_client() as client:
        assert client.execute_sql(f"SELECT id FROM {client.make_qualified_table_name('t')}") == [
            (7,)
        ]
        with client.execute_query("SELECT count(*) FROM d._dlt_loads") as cursor:
            assert cursor.fetchall() == [(1,)]


def test_dataset_named_like_the_pipeline_loads_in_duckdb() -> None:
    pipe = dlt.pipeline(pipeline_name="shop", destination="duckdb", dataset_name="shop")
    pipe.run([{"id": 1}], table_name="shop")
    pipe.run([{"id": 2}], table_name="shop")
    assert rows("shop.duckdb", "SELECT id FROM shop.shop.shop ORDER BY id") == [(1,), (2,)]
    assert pipe.dataset()["shop"].count() == 2


def test_state_and_schema_are_restored_from_the_destination_after_the_local_folder_is_lost() -> (
    None
):
    @dlt.source
    def numbers():
        @dlt.resource
        def counter():
            state = current.resource_state()
            start = state.get("last", 0)
            yield [{"n": n} for n in range(start, start + 3)]
            state["last"] = start + 3

        return counter

    pipe = dlt.pipeline("restore", destination="duckdb", dataset_name="d")
    pipe.run(numbers())
    assert pipe.state["sources"]["numbers"]["resources"]["counter"] == {"last": 3}
    shutil.rmtree(pipe.pipelines_dir)

    again = dlt.pipeline("restore", destination="duckdb", dataset_name="d")
    again.run(numbers())
    assert again.state["sources"]["numbers"]["resources"]["counter"] == {"last": 6}
    assert rows("restore.duckdb", "SELECT n FROM d.counter ORDER BY n") == [(n,) for n in range(6)]
    assert "counter" in again.default_schema.tables
    assert again.default_schema.name == "numbers"


def test_steps_run_one_by_one_and_pending_packages_are_listed() -> None:
    pipe = dlt.pipeline("steps", destination="duckdb", dataset_name="d")
    pipe.extract([{"id": 1}], table_name="t")
    assert [p.state for p in pipe.list_pending_packages()] == ["extracted"]
    pipe.normalize()
    assert [p.state for p in pipe.list_pending_packages()] == ["normalized"]
    info = pipe.load()
    assert pipe.list_pending_packages() == []
    assert info.row_counts == {"t": 1}


def test_drop_pending_packages_removes_unloaded_work() -> None:
    pipe = dlt.pipeline("drop", destination="duckdb", dataset_name="d")
    pipe.extract([{"id": 1}], table_name="t")
    dropped = pipe.drop_pending_packages()
    assert len(dropped) == 1
    assert pipe.list_pending_packages() == []


def test_abort_packages_plans_as_dlt_and_drops_the_pending_work() -> None:
    """dlt 1.31's abort_packages: the oldest normalized package is aborted, the others
    deleted; dry_run only plans; the cursor goes back, so the next run reads the rows."""

    @dlt.resource
    def rows(cursor: Any = dlt.sources.incremental("id")) -> Any:
        yield [{"id": 1}, {"id": 2}]

    pipe = dlt.pipeline("abort", destination="duckdb", dataset_name="d")
    assert pipe.abort_packages() is None
    pipe.extract(rows())
    pipe.normalize()
    pipe.extract([{"x": 1}], table_name="other")
    (normalized,), (extracted,) = (
        pipe.list_normalized_load_packages(),
        pipe.list_extracted_load_packages(),
    )
    plan = pipe.abort_packages(dry_run=True)
    assert plan == {
        "package_to_abort": {
            "load_id": normalized,
            **{
                f"{kind}_jobs": [] for kind in ("terminal", "transient", "interrupted", "committed")
            },
        },
        "packages_to_delete": [],
        "extracted_packages_to_delete": [extracted],
        "restore_from_load_id": normalized,
    }
    assert len(pipe.list_pending_packages()) == 2
    assert pipe.abort_packages() == plan and pipe.list_pending_packages() == []
    pipe.extract([{"x": 2}], table_name="other")
    assert main(["pipeline", "abort", "abort-packages"]) == 0  # the CLI's name for it too
    assert pipe.list_pending_packages() == []
    pipe.run(rows())
    with pipe.sql_client() as client:
        assert client.execute_sql("SELECT id FROM rows ORDER BY id") == [(1,), (2,)]


def test_next_run_finishes_pending_packages_and_returns() -> None:
    """As dlt's run: pending work first, and the run stops there (its data waits)."""
    events: list[Any] = []
    pipe = dlt.pipeline("pending", destination="duckdb", dataset_name="d")
    pipe.extract([{"id": 1}], table_name="t")
    again = dlt.pipeline("pending", destination="duckdb", dataset_name="d", progress=events.append)
    info = again.run([{"id": 2}], table_name="t")
    assert len(info.loads_ids) == 1
    assert rows("pending.duckdb", "SELECT id FROM d.t ORDER BY id") == [(1,)]
    assert any("run again" in str(getattr(e, "message", "")) for e in events)
    again.run([{"id": 2}], table_name="t")
    assert rows("pending.duckdb", "SELECT id FROM d.t ORDER BY id") == [(1,), (2,)]


def test_replace_disposition_from_run_replaces_the_rows() -> None:
    pipe = dlt.pipeline("repl", destination="duckdb", dataset_name="d")
    pipe.run([{"id": 1}, {"id": 2}], table_name="t", write_disposition="replace")
    pipe.run([{"id": 3}], table_name="t", write_disposition="replace")
    assert rows("repl.duckdb", "SELECT id FROM d.t") == [(3,)]


def test_table_names_go_through_the_naming_convention() -> None:
    pipe = dlt.pipeline("names", destination="duckdb", dataset_name="d")
    pipe.run([{"createdAt": 1}], table_name="CamelCase")
    assert rows("names.duckdb", "SELECT created_at FROM d.camel_case") == [(1,)]


def test_export_schema_path_gets_the_schema_as_yaml(tmp_path: Path) -> None:
    export = tmp_path / "export"
    pipe = dlt.pipeline("exp", destination="duckdb", dataset_name="d", export_schema_path=export)
    pipe.run([{"id": 1}], table_name="t")
    text = (export / "exp.schema.yaml").read_text()
    assert "t:" in text and "id:" in text


def test_an_import_schema_edited_after_the_first_run_is_taken_again(tmp_path: Path) -> None:
    """dlt's workflow: run, edit ``<import_schema_path>/<name>.schema.yaml``, run again. The
    columns the edit adds are created; an existing column keeps its type (the resource's
    decimal hint, the destination's column) when the edit retypes it, as under dlt 1.31."""

    @dlt.resource(
        primary_key="id", columns={"price": {"data_type": "decimal", "precision": 10, "scale": 2}}
    )
    def products(n: int) -> Any:
        yield [{"id": i, "price": f"{i}.50"} for i in range(n)]

    folder = tmp_path / "import"
    pipe = dlt.pipeline("imp", destination="duckdb", dataset_name="d", import_schema_path=folder)
    pipe.run(products(2))
    edited = yaml.safe_load((folder / "imp.schema.yaml").read_text())
    # dlt 1.31 (p1233): the file is the schema the first extract saved
    assert edited["version"] == 1
    assert "_dlt_id" not in edited["tables"]["_dlt_pipeline_state"]["columns"]
    edited["tables"]["products"]["description"] = "edited"
    columns = edited["tables"]["products"].setdefault("columns", {})
    columns.update(note={"data_type": "text"}, price={"data_type": "double", "description": "p"})
    (folder / "imp.schema.yaml").write_text(yaml.safe_dump(edited))
    pipe.run(products(3))
    products_table = pipe.default_schema.tables["products"]
    table = products_table["columns"]
    assert table["note"]["data_type"] == "text" and table["price"]["data_type"] == "decimal"
    # dlt 1.31 (p1234): the descriptions the edit gives are taken
    assert (products_table["description"], table["price"]["description"]) == ("edited", "p")
    with duckdb.connect("imp.duckdb", read_only=True) as conn:
        assert conn.execute("SELECT count(*), count(note) FROM d.products").fetchone() == (5, 0)
    version = pipe.default_schema.version
    pipe.run(products(1))  # the file is unchanged since it was taken: nothing new
    assert pipe.default_schema.version == version


def test_pipeline_reopened_by_name_keeps_dataset_and_destination() -> None:
    dlt.pipeline("reopen", destination="duckdb", dataset_name="kept").run(
        [{"id": 1}], table_name="t"
    )
    again = Pipeline("reopen")
    assert again.dataset_name == "kept"
    assert again.destination.name == "duckdb"
    assert again.dataset()["t"].count() == 1


def test_merge_resource_updates_rows_by_primary_key_and_stages_them() -> None:
    @dlt.resource(primary_key="id", write_disposition="merge")
    def users(suffix: str):
        yield [{"id": 1, "name": f"Alice{suffix}"}, {"id": 2, "name": f"Bob{suffix}"}]

    pipe = dlt.pipeline("merging", destination="duckdb", dataset_name="d")
    pipe.run(users(""))
    pipe.run(users(" 2"))
    assert rows("merging.duckdb", "SELECT id, name FROM d.users ORDER BY id") == [
        (1, "Alice 2"),
        (2, "Bob 2"),
    ]
    assert rows("merging.duckdb", "SELECT count(*) FROM d_staging.users") == [(2,)]


def test_state_carried_by_a_pending_package_survives_a_lost_local_save() -> None:
    @dlt.resource
    def counter():
        current.resource_state()["last"] = 3
        yield [{"n": 1}]

    pipe = dlt.pipeline("carried", destination="duckdb", dataset_name="d")
    pipe.run([{"n": 0}], table_name="counter")
    state_file = Path(pipe.working_dir) / "state.json"
    before = state_file.read_text()
    pipe.extract(counter)
    state_file.write_text(before)  # as if the process died before saving the local state

    again = dlt.pipeline("carried", destination="duckdb", dataset_name="d")
    again.run()
    assert again.state["sources"]["carried"]["resources"]["counter"] == {"last": 3}
    assert rows("carried.duckdb", "SELECT n FROM d.counter ORDER BY n") == [(0,), (1,)]


def test_dataset_returns_timestamps_as_aware_datetimes() -> None:
    import datetime as dt

    pipe = dlt.pipeline("times", destination="duckdb", dataset_name="d")
    pipe.run([{"at": "2026-01-03T00:50:00Z"}], table_name="events")
    ((at, *_),) = pipe.dataset()["events"].fetchall()
    assert at == dt.datetime(2026, 1, 3, 0, 50, tzinfo=dt.timezone.utc)
    loads = pipe.dataset()["_dlt_loads"].arrow()
    assert loads.num_rows == 1


def test_import_schema_path_gives_the_types_of_a_schema_file(tmp_path: Path) -> None:
    from loadstone.schema import Schema
    from loadstone.schema.files import export_schema

    declared = Schema.from_dict(
        {
            "name": "imp",
            "tables": {
                "t": {
                    "name": "t",
                    "columns": {"code": {"name": "code", "data_type": "text", "nullable": True}},
                }
            },
        }
    )
    folder = tmp_path / "import"
    export_schema(declared, folder)
    pipe = dlt.pipeline("imp", destination="duckdb", dataset_name="d", import_schema_path=folder)
    pipe.run([{"code": 42}], table_name="t")
    assert pipe.default_schema.tables["t"].columns["code"].data_type == "text"
    assert rows("imp.duckdb", "SELECT code FROM d.t") == [("42",)]


def test_resource_max_table_nesting_keeps_deeper_lists_as_json() -> None:
    @dlt.resource(max_table_nesting=0)
    def users():
        yield {"id": 1, "pets": [{"name": "Fluffy"}]}

    pipe = dlt.pipeline("nesting", destination="duckdb", dataset_name="d")
    info = pipe.run(users)
    assert set(info.row_counts) == {"users"}
    assert pipe.default_schema.tables["users"].columns["pets"].data_type == "json"


def test_columns_hint_from_run_sets_the_column_type() -> None:
    pipe = dlt.pipeline("typed", destination="duckdb", dataset_name="d")
    pipe.run([{"my_column": 1}], table_name="t", columns={"my_column": {"data_type": "text"}})
    assert rows("typed.duckdb", "SELECT my_column FROM d.t") == [("1",)]


def test_destination_without_a_loader_fails_before_extracting() -> None:
    from loadstone.exceptions import DestinationNotSupported

    pipe = dlt.pipeline("profile_only", destination="snowflake", dataset_name="d")
    with pytest.raises(DestinationNotSupported, match="snowflake"):
        pipe.run([{"id": 1}], table_name="t")
    assert pipe.list_packages() == []


#: what dlt 1.31 stores for ``@dlt.source(root_key=True)`` with one ``users`` resource
#: (observed: a black-box run, ``default_schema.to_dict()["normalizers"]["json"]``)
DLT_ROOT_KEY_JSON_NORMALIZER = {
    "module": "dlt.common.normalizers.json.relational",
    "config": {
        "root_key_propagation": True,
        "propagation": {"tables": {"users": {"_dlt_id": "_dlt_root_id"}}},
    },
}


def test_source_root_key_gives_nested_tables_the_root_id_as_dlt_does() -> None:
    @dlt.source(root_key=True)
    def src():
        @dlt.resource
        def users():
            yield [{"id": 1, "pets": [{"name": "a", "toys": ["x"]}]}]

        return users

    pipe = dlt.pipeline("root_key", destination="duckdb", dataset_name="d")
    pipe.run(src())
    schema = pipe.default_schema.to_dict()
    assert schema["normalizers"]["json"] == DLT_ROOT_KEY_JSON_NORMALIZER
    assert list(schema["tables"]["users__pets__toys"]["columns"]) == [
        "value",
        "_dlt_root_id",
        "_dlt_parent_id",
        "_dlt_list_idx",
        "_dlt_id",
    ]
    sql = "SELECT count(*) FROM d.users__pets__toys t JOIN d.users u ON t._dlt_root_id = u._dlt_id"
    assert rows("root_key.duckdb", sql) == [(1,)]


def test_a_merge_table_records_its_root_key_propagation_in_the_schema() -> None:
    @dlt.resource(primary_key="id", write_disposition="merge")
    def users():
        yield [{"id": 1, "pets": [{"name": "a"}]}]

    pipe = dlt.pipeline("merge_propagation", destination="duckdb", dataset_name="d")
    pipe.run(users())
    config = pipe.default_schema.to_dict()["normalizers"]["json"]["config"]
    assert config == {"propagation": {"tables": {"users": {"_dlt_id": "_dlt_root_id"}}}}


def test_sql_client_resolves_unqualified_names_in_the_dataset() -> None:
    pipe = dlt.pipeline("sql_names", destination="duckdb", dataset_name="d")
    pipe.run([{"x": 1}, {"x": 2}], table_name="t")
    with pipe.sql_client() as client:
        assert client.execute_sql("SELECT sum(x) FROM t") == [(3,)]


def test_last_trace_reads_like_dlts() -> None:
    pipe = dlt.pipeline("traced", destination="duckdb", dataset_name="d")
    info = pipe.run([{"id": 1, "tags": ["a", "b"]}], table_name="items")
    trace = pipe.last_trace
    # the first run carries the pipeline state: one row of _dlt_pipeline_state, as in dlt
    counts = {"items": 1, "items__tags": 2, "_dlt_pipeline_state": 1}
    assert trace.last_normalize_info.row_counts == counts
    assert trace.last_load_info.loads_ids == info.loads_ids
    assert trace.error is None
    reopened = dlt.pipeline("traced", destination="duckdb", dataset_name="d")
    assert reopened.last_trace.last_normalize_info.row_counts == counts


@pytest.mark.parametrize(
    ("destination", "file_format"),
    [("duckdb", "csv"), ("duckdb", "typed-jsonl"), ("filesystem", "insert_values")],
)
def test_a_loader_file_format_the_destination_does_not_load_is_refused_before_any_work(
    tmp_path: Path, destination: str, file_format: str
) -> None:
    """dlt 1.31 raises DestinationIncompatibleLoaderFileFormatException at run; nothing
    waits afterwards (the filesystem refused insert_values at load, leaving a package)."""
    target = dlt.destinations.filesystem(str(tmp_path)) if destination == "filesystem" else "duckdb"
    pipe = dlt.pipeline("formats", destination=target, dataset_name="ds")
    with pytest.raises(DestinationIncompatibleLoaderFileFormatException) as refused:
        pipe.run([{"id": 1}], table_name="t", loader_file_format=file_format)
    assert isinstance(refused.value, LoaderFileFormatNotSupported)
    assert f"loader_file_format {file_format!r}" in str(refused.value)
    assert pipe.list_extracted_load_packages() == pipe.list_normalized_load_packages() == []
    assert pipe.run([{"id": 2}], table_name="t").loads_ids  # the next run loads as usual


def test_a_configured_duckdb_file_is_the_location_shown_and_is_made_only_by_a_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The location comes from the DuckDB loader's own reading of its credentials (here the
    environment), not from a guess of ``<pipeline>.duckdb``; checking a first run's
    destination for state does not create the file."""
    database = tmp_path / "sub" / "other.duckdb"
    monkeypatch.setenv("DESTINATION__DUCKDB__CREDENTIALS", str(database))
    pipe = dlt.pipeline("located", destination="duckdb", dataset_name="ds")
    with pytest.raises(Exception, match="cannot tell which table"):
        pipe.run([{"id": 1}])  # refused at extract: no table name
    assert not database.exists() and not Path("located.duckdb").exists()
    info = pipe.run([{"id": 1}], table_name="t")
    assert info.destination_location == str(database) and database.exists()


def test_pipeline_credentials_put_the_duckdb_file_in_the_pipelines_working_folder() -> None:
    """dlt's ``duckdb(":pipeline:")``: ``<working_dir>/<pipeline_name>.duckdb``, not a file
    named ``:pipeline:`` in the current directory."""
    pipe = dlt.pipeline("inside", destination=dlt.destinations.duckdb(":pipeline:"))
    info = pipe.run([{"id": 1}], table_name="t")
    database = Path(pipe.working_dir) / "inside.duckdb"
    assert database.exists() and not Path(":pipeline:").exists()
    assert info.destination_location == str(database)


def test_a_renamed_destination_keeps_its_type_and_comes_back_by_its_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``destination_name="warehouse"`` on DuckDB: the type stays duckdb (load info, state),
    the name reads the configuration, and the pipeline reopened by name gets both back."""
    monkeypatch.setenv("DESTINATION__WAREHOUSE__CREDENTIALS", str(Path("wh.duckdb").absolute()))
    target = dlt.destinations.duckdb(destination_name="warehouse")
    pipe = dlt.pipeline("renamed", destination=target, dataset_name="ds")
    info = pipe.run([{"id": 1}], table_name="t")
    assert (info.destination_name, info.destination_type) == (
        "warehouse",
        "loadstone.destinations.duckdb",
    )
    assert pipe.state["destination_type"].endswith(".duckdb")
    assert pipe.state["destination_name"] == "warehouse"
    again = dlt.pipeline("renamed", dataset_name="ds")
    assert (again.destination.destination_name, again.destination.kind) == ("warehouse", "duckdb")
    again.run([{"id": 2}], table_name="t")
    with duckdb.connect("wh.duckdb", read_only=True) as conn:
        assert conn.execute("SELECT id FROM ds.t ORDER BY id").fetchall() == [(1,), (2,)]


def test_a_failed_extract_leaves_no_state_of_the_source_it_added() -> None:
    """As dlt 1.31's: ``pipeline.state`` after a resource raised holds no source entry (was
    one with empty resource dicts); the next run starts from the initial values."""

    @dlt.source
    def shop(fail: bool) -> Any:
        @dlt.resource
        def orders(cursor: Any = dlt.sources.incremental("n", initial_value=0)) -> Any:
            yield [{"n": 1}, {"n": 2}]
            if fail:
                raise ValueError("boom")

        return orders

    pipe = dlt.pipeline("failing_state", destination="duckdb", dataset_name="d")
    with pytest.raises(Exception, match="boom"):
        pipe.run(shop(True))
    assert pipe.state.get("sources") is None and not pipe.has_pending_data
    pipe.run(shop(False))
    assert (
        pipe.state["sources"]["shop"]["resources"]["orders"]["incremental"]["n"]["last_value"] == 2
    )


def test_a_schema_changed_in_code_between_runs_is_kept() -> None:
    # dlt 1.31 (p1250): a description given through pipeline.default_schema.update_table
    # after a run is in the schema after the next run, and in an attached pipeline's
    pipe = dlt.pipeline("edited", destination="duckdb", dataset_name="d")
    pipe.run([{"id": 1, "name": "a"}], table_name="t")
    pipe.default_schema.update_table(
        {"name": "t", "columns": {"name": {"name": "name", "description": "given"}}}
    )
    pipe.run([{"id": 2, "name": "b"}], table_name="t")
    assert pipe.default_schema.tables["t"]["columns"]["name"]["description"] == "given"
    assert (
        dlt.attach("edited").default_schema.tables["t"]["columns"]["name"]["description"] == "given"
    )


def test_a_table_added_through_the_schema_waits_for_its_first_rows() -> None:
    # dlt 1.31 (p1251): a table update_table() adds is in the schema, not in the dataset,
    # until rows reach it
    pipe = dlt.pipeline("waiting_table", destination="duckdb", dataset_name="d")
    pipe.run([{"a": 1}], table_name="one")
    manual = {"name": "manual", "columns": {"q": {"name": "q", "data_type": "text"}}}
    pipe.default_schema.update_table(manual)
    pipe.run([{"a": 2}], table_name="one")
    assert "manual" in pipe.default_schema.tables
    sql = "SELECT table_name FROM information_schema.tables WHERE table_schema = 'd'"
    assert "manual" not in {name for (name,) in rows("waiting_table.duckdb", sql)}
    pipe.run([{"q": "x"}], table_name="manual")
    assert rows("waiting_table.duckdb", "SELECT q FROM d.manual") == [("x",)]
