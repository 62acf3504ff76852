"""Load packages on disk: states switch atomically, files and hints are recorded."""

from __future__ import annotations

import datetime as dt
import enum
import gzip
import json
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from loadstone.exceptions import LoadPackageError
from loadstone.extract.decorators import resource
from loadstone.extract.extractor import extract
from loadstone.extract.file_inputs import extract_file
from loadstone.extract.item_json import ItemError, encode_item
from loadstone.extract.writers import PackageWriter
from loadstone.schema import Column, Schema, Table
from loadstone.storage.load_package import (
    EXTRACTED,
    EXTRACTING,
    LOADED,
    NORMALIZED,
    LoadPackage,
    iter_pending,
    list_packages,
    new_load_id,
)


def test_load_id_is_unix_time_as_decimal_string() -> None:
    load_id = new_load_id()
    assert float(load_id) > 1_600_000_000
    assert load_id == repr(float(load_id))


def test_load_ids_strictly_increase_within_a_process() -> None:
    ids = [new_load_id() for _ in range(1000)]
    assert [float(i) for i in ids] == sorted({float(i) for i in ids})


def test_new_package_starts_extracting_with_package_json(tmp_path: Path) -> None:
    package = LoadPackage.create(tmp_path, "shop")
    meta = json.loads((package.root / "package.json").read_text())
    assert meta["state"] == EXTRACTING
    assert meta["schema_name"] == "shop"
    assert meta["load_id"] == package.root.name
    assert package.extracted_dir.is_dir()


def test_a_packages_schema_is_kept_as_the_stored_document_and_read_back_as_a_schema(
    tmp_path: Path,
) -> None:
    package = LoadPackage.create(tmp_path, "shop")
    assert package.read_schema() is None
    schema = Schema("shop")
    schema.update_table(Table("users", columns={"id": Column("id", data_type="bigint")}))
    package.write_schema(schema)
    assert json.loads(package.schema_path.read_text()) == schema.to_dict()
    read = LoadPackage(package.root).read_schema()
    assert read == schema
    assert (read.version, read.version_hash) == (schema.version, schema.version_hash)


def test_state_switch_is_persisted_and_leaves_no_temp_files(tmp_path: Path) -> None:
    package = LoadPackage.create(tmp_path, "shop")
    for state in (EXTRACTED, NORMALIZED, LOADED):
        package.set_state(state)
        assert LoadPackage(package.root).state == state
    assert sorted(p.name for p in package.root.iterdir() if p.is_file()) == ["package.json"]


def test_unknown_state_is_refused(tmp_path: Path) -> None:
    package = LoadPackage.create(tmp_path, "shop")
    with pytest.raises(LoadPackageError, match="unknown package state"):
        package.set_state("done")


def test_pending_packages_are_extracted_or_normalized_oldest_first(tmp_path: Path) -> None:
    a = LoadPackage.create(tmp_path, "s")
    b = LoadPackage.create(tmp_path, "s")
    c = LoadPackage.create(tmp_path, "s")
    a.set_state(NORMALIZED)
    b.set_state(LOADED)
    c.set_state(EXTRACTED)
    assert [p.load_id for p in iter_pending(tmp_path)] == [a.load_id, c.load_id]
    assert [p.load_id for p in list_packages(tmp_path)] == [a.load_id, b.load_id, c.load_id]


def test_extracted_files_name_their_source_table(tmp_path: Path) -> None:
    package = LoadPackage.create(tmp_path, "s")
    result = extract(package, [{"id": 1}, {"id": 2}], table_name="Users")
    files = package.extracted_files()
    assert [f.table_name for f in files] == ["Users"]
    assert files[0].path.read_text().splitlines() == ['{"id":1}', '{"id":2}']
    assert result.tables["Users"].items == 2


def test_items_are_chunked_into_bounded_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("loadstone.extract.writers.CHUNK_ITEMS", 10)
    package = LoadPackage.create(tmp_path, "s")
    extract(package, ({"i": i} for i in range(35)), table_name="t")
    files = package.extracted_files()
    assert [f.items for f in files] == [10, 10, 10, 5]
    lines = [line for f in files for line in f.path.read_bytes().splitlines()]
    assert [orjson.loads(line)["i"] for line in lines] == list(range(35))


def test_resource_hints_are_stored_per_source_table(tmp_path: Path) -> None:
    @resource(primary_key="id", write_disposition={"disposition": "merge", "strategy": "upsert"})
    def users():
        yield [{"id": 1}]

    package = LoadPackage.create(tmp_path, "s")
    extract(package, users)
    hints = package.table_hints()
    assert hints["users"]["primary_key"] == ["id"]
    assert hints["users"]["write_disposition"] == "merge"
    assert hints["users"]["x-merge-strategy"] == "upsert"


def test_dynamic_table_name_sends_items_to_their_tables(tmp_path: Path) -> None:
    items = [{"kind": "a", "v": 1}, {"kind": "b", "v": 2}, {"kind": "a", "v": 3}]
    package = LoadPackage.create(tmp_path, "s")
    extract(package, resource(items, name="events", table_name=lambda item: item["kind"]))
    assert sorted(package.extracted_tables()) == ["a", "b"]


def test_plain_jsonl_file_is_copied_whole_with_its_line_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EXTRACT__COPY_INPUTS", "true")
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"n": i}) + "\n" for i in range(100)))
    package = LoadPackage.create(tmp_path / "packages", "s")
    writer = PackageWriter(package)
    extract_file(writer, source, "t", chunk_bytes=1000)
    tables = writer.close()
    [copied] = package.extracted_files()
    assert copied.path.read_bytes() == source.read_bytes()
    assert (copied.first_line, copied.items, copied.source) == (1, 100, str(source))
    assert tables["t"].items == 100


def test_copied_file_without_final_newline_gets_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EXTRACT__COPY_INPUTS", "true")
    source = tmp_path / "in.jsonl"
    source.write_bytes(b'{"n": 1}\n{"n": 2}')
    package = LoadPackage.create(tmp_path / "packages", "s")
    writer = PackageWriter(package)
    extract_file(writer, source, "t")
    writer.close()
    [copied] = package.extracted_files()
    assert copied.path.read_bytes() == b'{"n": 1}\n{"n": 2}\n'
    assert copied.items == 2


def test_files_of_one_table_never_overwrite_each_other(tmp_path: Path) -> None:
    sources = []
    for i in range(3):
        source = tmp_path / f"in{i}.jsonl"
        source.write_text(json.dumps({"file": i}) + "\n")
        sources.append(source)
    package = LoadPackage.create(tmp_path / "packages", "s")
    extract(package, sources, table_name="t")
    found = sorted(
        orjson.loads(line)["file"]
        for f in package.extracted_files()
        for line in f.path.read_bytes().splitlines()
    )
    assert found == [0, 1, 2]


def test_gzipped_jsonl_is_rechunked_by_whole_lines_with_line_numbers(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl.gz"
    with gzip.open(source, "wt") as handle:
        handle.write("".join(json.dumps({"n": i, "pad": "x" * 50}) + "\n" for i in range(100)))
    package = LoadPackage.create(tmp_path / "packages", "s")
    writer = PackageWriter(package)
    extract_file(writer, source, "t", chunk_bytes=1000)
    writer.close()
    files = package.extracted_files()
    assert len(files) > 5
    numbers = []
    for f in files:
        lines = f.path.read_text().splitlines()
        assert orjson.loads(lines[0])["n"] == f.first_line - 1
        numbers += [orjson.loads(line)["n"] for line in lines]
        assert f.source == str(source)
    assert numbers == list(range(100))


def test_gzipped_jsonl_and_json_array_files_are_read(tmp_path: Path) -> None:
    gz = tmp_path / "a.jsonl.gz"
    with gzip.open(gz, "wt") as handle:
        handle.write('{"id": 1}\n{"id": 2}\n')
    array = tmp_path / "b.json"
    array.write_text(json.dumps([{"id": 3}, {"id": 4}], indent=2))
    package = LoadPackage.create(tmp_path / "p", "s")
    extract(package, [gz, array], table_name="t")
    ids = [
        orjson.loads(line)["id"]
        for f in package.extracted_files()
        for line in f.path.read_bytes().splitlines()
    ]
    assert sorted(ids) == [1, 2, 3, 4]


def test_big_integers_and_typed_values_keep_every_digit_and_their_type() -> None:
    import datetime as dt
    from decimal import Decimal

    from loadstone.extract.typed_json import decode_item

    item = {
        "big": 2**80,
        "dec": Decimal("12345678901234567890.123456789"),
        "day": dt.date(2024, 2, 29),
        "at": dt.time(1, 2, 3),
        "blob": b"\x00\xff",
        "stamp": dt.datetime(2024, 1, 1, 12, 0, tzinfo=dt.timezone.utc),
    }
    line = encode_item(item)
    assert line.startswith(b'{"big":1208925819614629174706176,')
    assert decode_item(json.loads(line)) == {**item, "stamp": "2024-01-01T12:00:00+00:00"}
    assert decode_item(orjson.loads(encode_item({**item, "big": 1}))) == {
        **item,
        "big": 1,
        "stamp": "2024-01-01T12:00:00+00:00",
    }


class _Color(enum.Enum):
    RED = "red"


def test_an_enum_is_its_value_on_both_encoders() -> None:
    """orjson writes an Enum as its value; so must the stdlib path a big integer takes, and a
    refused value is named, not the Enum beside it."""
    assert orjson.loads(encode_item({"c": _Color.RED, "big": 1})) == {"c": "red", "big": 1}
    assert json.loads(encode_item({"c": _Color.RED, "big": 2**70})) == {"c": "red", "big": 2**70}
    with pytest.raises(ItemError, match=r"datetime\.timedelta"):
        encode_item({"c": _Color.RED, "took": dt.timedelta(seconds=3)})


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**100), max_value=2**100)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@given(st.dictionaries(st.text(max_size=8), json_values, max_size=6))
def test_every_json_item_survives_extraction_unchanged(item: dict) -> None:
    assert json.loads(encode_item(item)) == item
    assert b"\n" not in encode_item(item)


def test_a_package_under_a_relative_folder_finds_its_files() -> None:
    package = LoadPackage.create(Path("relative_packages"), "s")
    extract(package, [{"id": 1}], table_name="t")
    (file,) = LoadPackage(Path("relative_packages") / package.load_id).extracted_files()
    assert file.path.read_text() == '{"id":1}\n'
