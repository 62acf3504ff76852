"""A blank source key names columns ``_empty`` but adds nothing to a nested list's table name
(dlt 1.31's names; end to end in the compat scenario ``blank_nested_keys_name_child_tables``)."""

from __future__ import annotations

from normalizer_support import snake_case

from loadstone.plugins.normalizers.relational.names import ColumnNames, list_table_parts


def test_a_list_under_a_blank_key_of_a_nested_object_takes_its_parents_name() -> None:
    names = ColumnNames(snake_case(), use_break_path=True)
    parts = (names.norm_key("nested"), names.norm_key(" "))
    assert names.col_name(parts) == "nested___empty"
    assert list_table_parts(parts) == ("nested",)


def test_a_key_spelled_empty_keeps_its_part() -> None:
    names = ColumnNames(snake_case(), use_break_path=True)
    parts = (names.norm_key("nested"), names.norm_key("_empty"))
    assert list_table_parts(parts) == parts


def test_a_blank_key_at_the_root_keeps_its_part_and_names_a_plain_column() -> None:
    names = ColumnNames(snake_case(), use_break_path=True)
    parts = (names.norm_key(""),)
    assert list_table_parts(parts) == parts
    assert type(names.col_name(parts)) is str
