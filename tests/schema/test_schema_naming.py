"""Specification of naming inside the schema: case collisions and naming changes."""

from __future__ import annotations

import pickle

import pytest

from loadstone.exceptions import IdentifierCollisionError, NamingChangeError
from loadstone.plugin_manager import naming_convention
from loadstone.schema import Column, Schema, Table
from loadstone.schema.collisions import (
    check_batch_collisions,
    check_case_collisions,
    find_identifier_collisions,
)
from loadstone.schema.naming_change import (
    apply_naming_change,
    check_naming_change,
    renamed_identifiers,
)


def cs_schema() -> Schema:
    schema = Schema("s", naming="sql_cs_v1")
    schema.update_table(
        Table(
            "Events",
            columns=[Column("CreatedAt", data_type="timestamp"), Column("id", data_type="text")],
        )
    )
    schema.update_table(Table("New", columns=[Column("Value", data_type="text")]))
    return schema


# ------------------------------------------------------------------------ case collisions


def test_columns_differing_only_by_case_stop_a_case_insensitive_load() -> None:
    schema = cs_schema()
    schema.update_table(Table("Events", columns=[Column("Id", data_type="text")]))
    with pytest.raises(IdentifierCollisionError) as info:
        check_case_collisions(schema, has_case_sensitive_identifiers=False)
    message = str(info.value)
    assert "'id'" in message and "'Id'" in message and "'Events'" in message


def test_tables_differing_only_by_case_collide() -> None:
    schema = cs_schema()
    schema.update_table(Table("events", columns=[Column("x", data_type="text")]))
    with pytest.raises(IdentifierCollisionError, match="'Events' and 'events'"):
        check_case_collisions(schema, has_case_sensitive_identifiers=False)


def test_case_sensitive_destination_accepts_case_variants() -> None:
    schema = cs_schema()
    schema.update_table(Table("Events", columns=[Column("Id", data_type="text")]))
    check_case_collisions(schema, has_case_sensitive_identifiers=True)


def test_schema_without_case_variants_passes() -> None:
    check_case_collisions(cs_schema(), has_case_sensitive_identifiers=False)


def test_collision_error_shows_source_identifiers() -> None:
    schema = cs_schema()
    schema.update_table(Table("Events", columns=[Column("Id", data_type="text")]))
    with pytest.raises(IdentifierCollisionError, match="'user-id' \\(as 'Id'\\)"):
        check_case_collisions(schema, False, source_identifiers={"Id": "user-id"})


def test_batch_collisions_between_normalized_identifiers() -> None:
    found = find_identifier_collisions([("Name", "Name"), ("name", "name"), ("x", "x")], table="t")
    assert [(c.folded, c.identifiers, c.table) for c in found] == [
        ("name", (("Name", "Name"), ("name", "name")), "t")
    ]


def test_same_normalized_identifier_from_two_sources_is_not_a_collision() -> None:
    assert find_identifier_collisions([("a_b", "a-b"), ("a_b", "a b")]) == []


def test_batch_column_colliding_with_a_column_already_in_the_schema() -> None:
    with pytest.raises(IdentifierCollisionError, match=r"'CreatedAt' and 'CREATEDAT'"):
        check_batch_collisions(cs_schema(), False, columns={"Events": {"CREATEDAT": "CREATEDAT"}})


def test_batch_table_colliding_with_a_known_table() -> None:
    with pytest.raises(IdentifierCollisionError, match="'events'"):
        check_batch_collisions(cs_schema(), False, tables={"events": "events"})


def test_batch_without_case_variants_passes() -> None:
    check_batch_collisions(
        cs_schema(), False, tables={"Other": "Other"}, columns={"Events": {"x": "x"}}
    )
    check_batch_collisions(None, True, columns={"t": {"A": "A", "a": "a"}})


def test_collision_error_is_picklable() -> None:
    error = IdentifierCollisionError(find_identifier_collisions({"A": "A", "a": "a"}), "s")
    assert str(pickle.loads(pickle.dumps(error))) == str(error)


# ------------------------------------------------------------------------ naming changes


def test_naming_change_lists_identifiers_that_would_change() -> None:
    changes = renamed_identifiers(cs_schema(), naming_convention("snake_case"))
    assert changes["Events"] == {"Events": "events", "CreatedAt": "created_at"}
    assert "_dlt_loads" not in changes


def test_naming_change_fails_for_tables_holding_data() -> None:
    with pytest.raises(NamingChangeError) as info:
        check_naming_change(cs_schema(), naming_convention("snake_case"), {"Events"})
    assert list(info.value.tables) == ["Events"]
    assert "'Events'" in str(info.value) and "'New'" not in str(info.value)


def test_naming_change_is_fine_for_tables_without_data() -> None:
    check_naming_change(cs_schema(), naming_convention("snake_case"), tables_with_data=set())


def test_naming_change_is_fine_when_identifiers_stay_the_same() -> None:
    schema = Schema("s")
    schema.update_table(Table("events", columns=[Column("created_at", data_type="text")]))
    check_naming_change(schema, naming_convention("sql_ci_v1"), {"events"})


def test_schema_may_allow_identifier_change_on_tables_with_data() -> None:
    schema = Schema.from_dict(
        {
            **cs_schema().to_dict(),
            "normalizers": {
                "names": "sql_cs_v1",
                "allow_identifier_change_on_table_with_data": True,
            },
        }
    )
    check_naming_change(schema, naming_convention("snake_case"), {"Events"})


def test_applying_a_naming_change_renormalizes_and_records_it() -> None:
    schema = cs_schema()
    apply_naming_change(schema, naming_convention("snake_case"))
    assert schema.naming_name == "snake_case"
    assert schema.get_table("events").column_names() == ["created_at", "id"]
    assert schema.to_dict()["normalizers"]["names"] == "snake_case"
