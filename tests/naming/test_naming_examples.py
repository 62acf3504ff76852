"""The examples of the naming spec (shared/spec ``naming.md``) and the seed page, as a table per rule."""

from __future__ import annotations

import pytest

from loadstone.exceptions import InvalidIdentifierError, InvalidMaxLengthError, LoadstoneError
from loadstone.naming import NamingConvention, compute_tag, tag_length
from loadstone.plugins.naming import direct, duck_case, s3_tables, snake_case, sql_ci_v1, sql_cs_v1

ALL = [snake_case, sql_ci_v1, sql_cs_v1, direct, duck_case, s3_tables]


def make(module: object, max_length: int | None = None) -> NamingConvention:
    return module.NamingConvention(max_length)  # type: ignore[attr-defined]


# --- snake_case ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("DealFlow", "deal_flow"),
        ("createdAt", "created_at"),
        ("HTTPResponse", "http_response"),
        ("2fa", "_2fa"),
        ("a+b", "axb"),
        ("a*b", "axb"),
        ("a-b", "a_b"),
        ("user@host", "userahost"),
        ("a|b", "alb"),
        ("trailing__", "trailingxx"),
        ("a__", "axx"),
        ("a__b", "a_b"),
        ("  spaced out  ", "spaced_out"),
        ("Zürich", "z_rich"),
        ("💥", "x"),
        ("a▶b", "a_b"),
        ("٣abc", "_٣abc"),
    ],
)
def test_snake_case_normalizes_identifiers_as_the_spec_shows(source: str, expected: str) -> None:
    assert make(snake_case).normalize_identifier(source) == expected


def test_snake_case_keeps_double_underscore_of_a_path_but_not_of_an_identifier() -> None:
    naming = make(snake_case)
    assert naming.normalize_path("column__value") == "column__value"
    assert naming.normalize_identifier("column__value") == "column_value"


def test_snake_case_is_case_insensitive_with_separator_double_underscore() -> None:
    naming = make(snake_case)
    assert naming.is_case_sensitive is False
    assert naming.PATH_SEPARATOR == "__"


# --- sql_cs_v1 / sql_ci_v1 ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "cs", "ci"),
    [
        ("DealFlow", "DealFlow", "dealflow"),
        ("a b-c", "a_b_c", "a_b_c"),
        ("1st", "_1st", "_1st"),
        ("name_", "name", "name"),
        ("_", "_", "_"),
        ("__", "", ""),
        ("a__b", "a_b", "a_b"),
        ("Zürich", "Z_rich", "z_rich"),
    ],
)
def test_sql_conventions_are_sql_safe_and_differ_only_in_case(
    source: str, cs: str, ci: str
) -> None:
    assert make(sql_cs_v1).normalize_identifier(source) == cs
    assert make(sql_ci_v1).normalize_identifier(source) == ci


def test_sql_ci_v1_lowercases_after_shortening() -> None:
    source = "ABCDEFGHIJKLMNOPQRSTUV"
    shortened_cs = make(sql_cs_v1, 10).normalize_identifier(source)
    assert shortened_cs == "AB" + compute_tag(source) + "UV"
    assert make(sql_ci_v1, 10).normalize_identifier(source) == shortened_cs.lower()


# --- direct / duck_case ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("Deal Flow", "Deal Flow"),
        ("a\nb\rc", "a_b_c"),
        ("'q'", "_q_"),
        ('"q"', "_q_"),
        ("a▶b", "a_b"),
        ("a__b", "a__b"),
        ("💥", "💥"),
    ],
)
def test_direct_changes_only_characters_that_break_quoting(source: str, expected: str) -> None:
    assert make(direct).normalize_identifier(source) == expected


def test_direct_separates_paths_with_a_triangle() -> None:
    naming = make(direct)
    assert naming.PATH_SEPARATOR == "▶"
    assert naming.make_path("a__b", "c") == "a__b▶c"
    assert naming.break_path("a▶▶b") == ["a", "b"]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("Deal Flow💥", "Deal Flow💥"),
        ("a\nb", "a_b"),
        ('"q"', "_q_"),
        ("a____b", "a_b"),
        ("'q'", "'q'"),
        ("a▶b", "a▶b"),
    ],
)
def test_duck_case_keeps_unicode_and_collapses_underscores(source: str, expected: str) -> None:
    assert make(duck_case).normalize_identifier(source) == expected


# --- s3_tables -------------------------------------------------------------------------------------


def test_s3_tables_defaults_to_255_characters() -> None:
    assert make(s3_tables).max_length == 255
    assert str(make(s3_tables)) == "s3_tables_ci_255"


def test_s3_tables_refuses_a_longer_max_length_with_a_clear_error() -> None:
    with pytest.raises(InvalidMaxLengthError, match="255"):
        make(s3_tables, 256)


@pytest.mark.parametrize(
    ("source", "expected"),
    [("_dlt_loads", "dlt_loads"), ("_dlt_version", "dlt_version"), ("1abc", "1abc"), ("__x", "x")],
)
def test_s3_tables_removes_leading_underscores_from_table_names(source: str, expected: str) -> None:
    naming = make(s3_tables)
    assert naming.normalize_table_identifier(source) == expected
    assert naming.normalize_tables_path(source) == expected


def test_s3_tables_keeps_leading_underscores_in_column_names() -> None:
    assert make(s3_tables).normalize_identifier("_dlt_id") == "_dlt_id"


# --- common rules ------------------------------------------------------------------------------------


@pytest.mark.parametrize("module", ALL, ids=lambda module: module.__name__.rsplit(".", 1)[-1])
@pytest.mark.parametrize("blank", [None, "", "   ", "\t\n"])
def test_none_and_blank_identifiers_are_value_errors(module: object, blank: str | None) -> None:
    with pytest.raises(InvalidIdentifierError) as raised:
        make(module).normalize_identifier(blank)  # type: ignore[arg-type]
    assert isinstance(raised.value, ValueError)
    assert isinstance(raised.value, LoadstoneError)


def test_tag_is_six_characters_of_a_four_byte_shake_128_digest() -> None:
    assert tag_length() == 4
    assert compute_tag("abcdefghijklmnop") == "hqkbwa"
    assert len(compute_tag("x" * 1000)) == 6


def test_shortening_keeps_head_tag_and_tail_and_is_exactly_max_length() -> None:
    naming = make(snake_case, 10)
    assert naming.normalize_identifier("abcdefghijklmnop") == "ab" + "hqkbwa" + "op"
    assert make(snake_case, 11).normalize_identifier("abcdefghijklmnop") == "abc" + "hqkbwa" + "op"


def test_tag_comes_from_the_source_identifier_not_the_normalized_one() -> None:
    naming = make(snake_case, 10)
    upper, lower = "ABCDEFGHIJKLMNOP", "abcdefghijklmnop"
    assert naming.normalize_identifier(upper) != naming.normalize_identifier(lower)


def test_short_identifiers_are_not_shortened() -> None:
    assert make(snake_case, 10).normalize_identifier("abcdefghij") == "abcdefghij"


def test_max_length_below_the_tag_length_is_an_error_when_shortening() -> None:
    with pytest.raises(InvalidMaxLengthError):
        NamingConvention.shorten_identifier("abcdefghij", "abcdefghij", 5)


def test_negative_max_length_is_refused() -> None:
    with pytest.raises(InvalidMaxLengthError):
        make(snake_case, -1)


def test_make_path_skips_blank_parts_and_break_path_drops_them() -> None:
    naming = make(snake_case)
    assert naming.make_path("a", "", " ", "b") == "a__b"
    assert naming.break_path("a____b__ __c") == ["a", "b", "c"]


def test_normalize_path_shortens_the_whole_tagged_by_the_original_path() -> None:
    naming = make(snake_case, 20)
    path = " a__Bcdefghijklmnopqrstuvwxyz "
    assert naming.normalize_path(path) == "a__bcde" + compute_tag(path) + "tuvwxyz"


def test_normalize_path_of_only_separators_is_empty() -> None:
    assert make(snake_case).normalize_path("__") == ""


def test_shorten_fragments_names_nested_tables_and_flattened_columns() -> None:
    naming = make(snake_case)
    assert naming.shorten_fragments("users", "pets") == "users__pets"
    assert naming.shorten_fragments("column", "value") == "column__value"


def test_shorten_fragments_tags_by_the_joined_string() -> None:
    joined = "abcdefgh__ijklmn"
    assert make(snake_case, 10).shorten_fragments("abcdefgh", "ijklmn") == (
        "ab" + compute_tag(joined) + "mn"
    )


@pytest.mark.parametrize(
    ("module", "max_length", "text"),
    [
        (snake_case, 63, "snake_case_ci_63"),
        (snake_case, None, "snake_case_ci"),
        (sql_cs_v1, 127, "sql_cs_v1_cs_127"),
        (sql_ci_v1, None, "sql_ci_v1_ci"),
        (direct, 10, "direct_cs_10"),
        (duck_case, None, "duck_case_cs"),
        (s3_tables, 63, "s3_tables_ci_63"),
    ],
)
def test_str_is_name_case_sensitivity_and_max_length(
    module: object, max_length: int | None, text: str
) -> None:
    assert str(make(module, max_length)) == text


def test_built_in_conventions_are_named_by_their_short_name() -> None:
    assert [module.NamingConvention.name() for module in ALL] == [
        "snake_case",
        "sql_ci_v1",
        "sql_cs_v1",
        "direct",
        "duck_case",
        "s3_tables",
    ]


def test_a_third_party_convention_is_named_by_its_module() -> None:
    class Upper(snake_case.NamingConvention):
        def normalize_identifier(self, identifier: str) -> str:
            return super().normalize_identifier(identifier).upper()

    assert Upper.name() == __name__
    assert str(Upper(10)) == f"{__name__}_ci_10"
