"""Specification of schema versions and version hashes."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from loadstone.schema import MAX_PREVIOUS_HASHES, Column, Schema, Table, content_hash
from loadstone.schema.data_types import DATA_TYPES

identifiers = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12)
columns = st.builds(
    lambda name, data_type, nullable, pk: Column(
        name, data_type=data_type, nullable=nullable, primary_key=pk
    ),
    identifiers,
    st.sampled_from(DATA_TYPES),
    st.none() | st.booleans(),
    st.none() | st.just(True),
)
tables = st.builds(
    lambda name, cols, wd: Table(name, columns=cols, write_disposition=wd),
    identifiers.map(lambda n: "t_" + n),
    st.lists(columns, max_size=6, unique_by=lambda c: c.name),
    st.none() | st.sampled_from(["append", "replace", "merge"]),
)


def schema_of(table_list: list[Table]) -> Schema:
    schema = Schema("s")
    for table in table_list:
        schema.update_table(table)
    return schema


@settings(max_examples=60, deadline=None)
@given(st.lists(tables, max_size=4, unique_by=lambda t: t.name))
def test_from_dict_to_dict_keeps_version_hash(table_list: list[Table]) -> None:
    schema = schema_of(table_list)
    stored = schema.to_dict()
    loaded = Schema.from_dict(stored)
    assert loaded.version_hash == schema.version_hash == stored["version_hash"]
    assert loaded.version == stored["version"] and not loaded.was_modified_on_load
    assert loaded.to_dict(bump_version=False) == stored


@settings(max_examples=60, deadline=None)
@given(
    st.lists(tables, min_size=1, max_size=4, unique_by=lambda t: t.name).filter(
        lambda ts: any(t.columns for t in ts)
    ),
    st.data(),
)
def test_editing_one_column_changes_the_hash(table_list: list[Table], data: st.DataObject) -> None:
    schema = schema_of(table_list)
    before = schema.version_hash
    table = data.draw(st.sampled_from([t for t in table_list if t.columns]))
    column = data.draw(st.sampled_from(list(table.columns.values())))
    new_type = data.draw(st.sampled_from([t for t in DATA_TYPES if t != column.data_type]))
    schema.update_table(Table(table.name, columns=[Column(column.name, data_type=new_type)]))
    assert schema.version_hash != before


def test_hash_ignores_key_order() -> None:
    stored = Schema("s").to_dict()
    reordered = copy.deepcopy(stored)
    column = reordered["tables"]["_dlt_loads"]["columns"]["load_id"]
    reordered["tables"]["_dlt_loads"]["columns"]["load_id"] = dict(reversed(list(column.items())))
    reordered["tables"] = dict(reversed(list(reordered["tables"].items())))
    assert content_hash(reordered) == content_hash(stored)


def test_hash_notices_column_order() -> None:
    stored = Schema("s").to_dict()
    reordered = copy.deepcopy(stored)
    cols = reordered["tables"]["_dlt_loads"]["columns"]
    reordered["tables"]["_dlt_loads"]["columns"] = dict(reversed(list(cols.items())))
    assert content_hash(reordered) != content_hash(stored)


def test_hash_ignores_version_fields() -> None:
    stored = Schema("s").to_dict()
    changed = {**stored, "version": 99, "previous_hashes": ["x"], "version_hash": "y"}
    assert content_hash(changed) == content_hash(stored)


def test_version_grows_by_one_per_saved_change() -> None:
    schema = Schema("s")
    assert schema.to_dict()["version"] == 1
    schema.update_table(Table("t", columns=[Column("a", data_type="text")]))
    schema.update_table(Table("t", columns=[Column("b", data_type="text")]))
    assert schema.to_dict()["version"] == 2
    assert schema.to_dict()["version"] == 2  # no change, no new version


def test_previous_hashes_are_newest_first_and_bounded() -> None:
    schema = Schema("s")
    hashes = [schema.to_dict()["version_hash"]]
    for i in range(MAX_PREVIOUS_HASHES + 3):
        schema.update_table(Table("t", columns=[Column(f"c{i}", data_type="text")]))
        hashes.append(schema.to_dict()["version_hash"])
    stored = schema.to_dict()
    assert stored["previous_hashes"] == list(reversed(hashes[:-1]))[:MAX_PREVIOUS_HASHES]


def test_a_hash_seen_before_keeps_its_place_in_previous_hashes() -> None:
    # dlt 1.31, a schema going back and forth between two contents (H2 -> H0 -> H2 -> H0):
    # previous_hashes ['H2'], ['H0', 'H2'], ['H0', 'H2']: a hash already there is not moved
    schema = Schema("s")
    first = schema.to_dict()["version_hash"]
    schema.update_table(Table("t", columns=[Column("a", data_type="bigint")]))
    second = schema.to_dict()["version_hash"]
    schema.drop_tables(["t"])
    assert schema.to_dict()["previous_hashes"] == [second, first]
    schema.update_table(Table("t", columns=[Column("a", data_type="bigint")]))
    assert schema.to_dict()["previous_hashes"] == [second, first]
    schema.drop_tables(["t"])
    stored = schema.to_dict()
    assert (stored["version_hash"], stored["version"]) == (first, 5)
    assert stored["previous_hashes"] == [second, first]


def test_is_modified_after_a_change_until_saved() -> None:
    schema = Schema("s")
    schema.to_dict()
    assert not schema.is_modified
    schema.add_type_detection("iso_date")
    assert schema.is_modified
    schema.to_dict()
    assert not schema.is_modified


def test_hand_edited_document_is_accepted_as_a_new_version() -> None:
    stored = Schema("s").to_dict()
    stored["tables"]["_dlt_loads"]["columns"]["status"]["description"] = "edited by hand"
    loaded = Schema.from_dict(stored)
    assert loaded.was_modified_on_load
    assert loaded.version == stored["version"] + 1
    assert loaded.previous_hashes[0] == stored["version_hash"] == loaded.loaded_version_hash
    assert loaded.get_table("_dlt_loads").columns["status"].description == "edited by hand"
    assert not loaded.is_modified  # the edit is now the saved state


def test_document_without_hash_is_taken_as_is() -> None:
    stored = Schema("s").to_dict()
    del stored["version_hash"]
    loaded = Schema.from_dict(stored)
    assert loaded.version == 1 and not loaded.was_modified_on_load


def _stored_with_users() -> Schema:
    stored = Schema("src")
    stored.update_table(Table("users", columns={"id": Column("id", data_type="bigint")}))
    stored.bump_version()
    return stored


def test_code_declarations_add_the_tables_the_stored_schema_lacks_and_keep_its_own() -> None:
    stored = _stored_with_users()
    code = Schema("src")
    code.update_table(Table("users", columns={"name": Column("name", data_type="text")}))
    code.update_table(Table("orders", columns={"n": Column("n", data_type="bigint")}))
    merged = stored.with_code_declarations(code)
    assert list(merged.tables["users"].columns) == ["id"]
    assert "orders" in merged.tables and "orders" not in stored.tables
    assert (merged.version, merged.previous_hashes) == (2, [stored.version_hash])
    assert merged.was_modified_on_load


def test_code_declarations_that_change_nothing_keep_the_version() -> None:
    stored = _stored_with_users()
    merged = stored.with_code_declarations(Schema("src"))
    assert merged == stored
    assert (merged.version, merged.version_hash) == (stored.version, stored.version_hash)
    assert not merged.was_modified_on_load
