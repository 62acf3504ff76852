"""Specification of the type rules (loadstone.schema.data_types).

The coercion table is checked against dlt 1.31's observed behaviour
(tests/fixtures/schemas/coercion_dlt.json), and properties hold for any value (hypothesis).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
import pickle
from decimal import Decimal
from typing import Any

import locations
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from loadstone.exceptions import (
    CoercionError,
    InvalidPrecisionError,
    LoadstoneError,
    UnsupportedValueError,
)
from loadstone.plugin_manager import naming_convention
from loadstone.schema.data_types import (
    BIGINT_MAX,
    BIGINT_MIN,
    DATA_TYPES,
    WEI_MAX_ABS,
    can_coerce,
    coerce_value,
    default_precision_scale,
    py_type_to_data_type,
    validate_precision,
    variant_column_name,
)

FIXTURE = locations.FIXTURES / "schemas" / "coercion_dlt.json"
UTC = dt.timezone.utc


def decode(encoded: dict[str, Any]) -> Any:
    kind, value = encoded["type"], encoded["value"]
    if kind == "timestamp":
        return dt.datetime.fromisoformat(value)
    if kind == "date":
        return dt.date.fromisoformat(value)
    if kind == "time":
        return dt.time.fromisoformat(value)
    if kind == "decimal":
        return Decimal(value)
    if kind == "binary":
        return bytes.fromhex(value)
    return value


def same_value(ours: Any, theirs: Any) -> bool:
    if isinstance(theirs, dt.datetime) and isinstance(ours, dt.datetime):
        ours = ours if ours.tzinfo else ours.replace(tzinfo=UTC)
        theirs = theirs if theirs.tzinfo else theirs.replace(tzinfo=UTC)
        return ours == theirs
    if isinstance(theirs, (Decimal, float)) and isinstance(ours, (Decimal, float, int)):
        return Decimal(str(ours)) == Decimal(str(theirs))
    return type(ours) is type(theirs) and ours == theirs


DLT_CASES = json.loads(FIXTURE.read_text())["cases"]
HINTED_CASES = json.loads(
    (FIXTURE.parent / "coercion_hinted_dlt.json").read_text(encoding="utf-8")
)["cases"]


def case_id(case: dict[str, Any]) -> str:
    return f"{case['column_type']}<-{case['second']['type']}:{case['second']['value']!r}"


# ------------------------------------------------------------------------ the value -> type map


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        ("x", "text"),
        (True, "bool"),
        (False, "bool"),
        (0, "bigint"),
        (BIGINT_MAX, "bigint"),
        (BIGINT_MIN, "bigint"),
        (1.5, "double"),
        (float("nan"), "double"),
        (dt.datetime(2023, 1, 1), "timestamp"),
        (dt.datetime(2023, 1, 1, tzinfo=UTC), "timestamp"),
        (dt.date(2023, 1, 1), "date"),
        (dt.time(1, 2, 3), "time"),
        (Decimal("4.56"), "decimal"),
        (b"\x00", "binary"),
        (bytearray(b"\x00"), "binary"),
        ({"a": 1}, "json"),
        ([1, 2], "json"),
    ],
)
def test_python_values_map_to_data_types(value: Any, expected: str | None) -> None:
    assert py_type_to_data_type(value) == expected


def test_integers_beyond_64_bits_are_wei_so_they_load_without_loss() -> None:
    assert py_type_to_data_type(BIGINT_MAX + 1) == "wei"
    assert py_type_to_data_type(BIGINT_MIN - 1) == "wei"
    assert py_type_to_data_type(2**200) == "wei"


def test_integers_too_large_for_any_decimal_are_text_so_digits_are_kept() -> None:
    assert py_type_to_data_type(WEI_MAX_ABS) == "text"
    assert coerce_value("text", "wei", WEI_MAX_ABS) == str(WEI_MAX_ABS)


def test_objects_without_a_data_type_raise_a_clear_error() -> None:
    with pytest.raises(UnsupportedValueError, match="object"):
        py_type_to_data_type(object())


def test_bool_subclass_of_int_is_still_bool() -> None:
    assert py_type_to_data_type(True) == "bool"


def test_every_inferred_type_is_a_known_data_type() -> None:
    for value in ["a", 1, 2**70, 1.0, True, dt.date.today(), b"", {}, Decimal(1)]:
        assert py_type_to_data_type(value) in DATA_TYPES


# ------------------------------------------------------------------------ coercion vs dlt


@pytest.mark.oracle
@pytest.mark.parametrize("case", DLT_CASES, ids=[case_id(c) for c in DLT_CASES])
def test_coercion_matches_dlt(case: dict[str, Any]) -> None:
    value = decode(case["second"])
    from_type = py_type_to_data_type(value)
    if "coerced" in case:
        assert same_value(
            coerce_value(case["column_type"], from_type, value), decode(case["coerced"])
        )
    else:
        with pytest.raises(CoercionError):
            coerce_value(case["column_type"], from_type, value)
        assert case["variant"]["name"] == f"c__v_{from_type}"


@pytest.mark.oracle
@pytest.mark.parametrize(
    "case",
    HINTED_CASES,
    ids=[f"{c['column_type']}<-{c['value']['type']}:{c['value']['value']!r}" for c in HINTED_CASES],
)
def test_coercion_into_hinted_columns_matches_dlt(case: dict[str, Any]) -> None:
    value = decode(case["value"])
    from_type = py_type_to_data_type(value)
    if "coerced" in case:
        assert same_value(
            coerce_value(case["column_type"], from_type, value), decode(case["coerced"])
        )
    else:
        with pytest.raises(CoercionError):
            coerce_value(case["column_type"], from_type, value)


def test_text_column_takes_every_scalar() -> None:
    assert coerce_value("text", "bool", True) == "True"
    assert coerce_value("text", "bigint", 5) == "5"
    assert coerce_value("text", "double", 2.0) == "2.0"
    assert coerce_value("text", "binary", b"\x00\x01") == "AAE="
    assert coerce_value("text", "timestamp", dt.datetime(2023, 1, 1, tzinfo=UTC)) == (
        "2023-01-01T00:00:00+00:00"
    )


def test_text_digits_coerce_to_bigint_but_fractions_do_not() -> None:
    assert coerce_value("bigint", "text", "123") == 123
    assert coerce_value("bigint", "text", "0xff") == 255
    with pytest.raises(CoercionError):
        coerce_value("bigint", "text", "1.5")


def test_bigint_coercion_rejects_values_outside_64_bits() -> None:
    with pytest.raises(CoercionError, match="64-bit"):
        coerce_value("bigint", "text", str(BIGINT_MAX + 1))


def test_whole_doubles_coerce_to_bigint_fractional_do_not() -> None:
    assert coerce_value("bigint", "double", 2.0) == 2
    assert not can_coerce("bigint", "double", 2.5)
    assert not can_coerce("bigint", "double", float("inf"))


def test_numbers_coerce_to_timestamp_as_unix_seconds() -> None:
    assert coerce_value("timestamp", "bigint", 5) == dt.datetime(1970, 1, 1, 0, 0, 5, tzinfo=UTC)


def test_iso_text_coerces_to_timestamp_in_utc() -> None:
    assert coerce_value("timestamp", "text", "2023-07-26T14:45:00+02:00") == dt.datetime(
        2023, 7, 26, 12, 45, tzinfo=UTC
    )


def test_naive_timestamps_are_utc() -> None:
    assert coerce_value("timestamp", "timestamp", dt.datetime(2023, 1, 1)).tzinfo is UTC


def test_time_text_coerces_to_time_without_zone() -> None:
    assert coerce_value("time", "text", "14:01:02+02:00") == dt.time(14, 1, 2)


def test_bool_column_takes_true_false_text_and_numbers() -> None:
    assert coerce_value("bool", "text", "false") is False
    assert coerce_value("bool", "text", "YES") is True
    assert coerce_value("bool", "bigint", 0) is False
    with pytest.raises(CoercionError):
        coerce_value("bool", "text", " true")


def test_wei_column_takes_integers_and_integral_decimals() -> None:
    assert coerce_value("wei", "bigint", 5) == 5
    assert coerce_value("wei", "decimal", Decimal("10")) == 10
    assert not can_coerce("wei", "decimal", Decimal("1.5"))


def test_json_column_takes_only_documents() -> None:
    assert coerce_value("json", "json", {"a": 1}) == {"a": 1}
    assert not can_coerce("json", "bigint", 5)
    assert not can_coerce("json", "text", "x")


def test_binary_from_integers_is_little_endian() -> None:
    assert coerce_value("binary", "bigint", 256) == b"\x00\x01"
    assert coerce_value("binary", "bigint", 0) == b""


def test_coercion_error_names_both_types_and_the_value() -> None:
    with pytest.raises(CoercionError) as info:
        coerce_value("bigint", "text", "abc")
    assert isinstance(info.value, (LoadstoneError, ValueError))
    assert "'abc'" in str(info.value) and "bigint" in str(info.value) and "text" in str(info.value)


def test_unknown_target_type_is_an_error() -> None:
    with pytest.raises(CoercionError, match="unknown data type"):
        coerce_value("varchar", "text", "x")


def test_rules_are_picklable_for_spark_workers() -> None:
    assert pickle.loads(pickle.dumps(coerce_value))("bigint", "text", "1") == 1
    error = pickle.loads(pickle.dumps(CoercionError("bigint", "text", "x")))
    assert isinstance(error, CoercionError)


# ------------------------------------------------------------------------ properties

scalars = st.one_of(
    st.text(),
    st.integers(min_value=BIGINT_MIN, max_value=BIGINT_MAX),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.decimals(allow_nan=False, allow_infinity=False),
    st.dates(),
    st.datetimes(timezones=st.just(UTC)),
    st.times(),
    st.binary(),
)


@settings(deadline=None)
@given(scalars)
def test_every_scalar_coerces_to_text(value: Any) -> None:
    assert isinstance(coerce_value("text", py_type_to_data_type(value), value), str)


@settings(deadline=None)
@given(scalars)
def test_coercion_to_own_type_is_identity(value: Any) -> None:
    data_type = py_type_to_data_type(value)
    assert coerce_value(data_type, data_type, value) == value


@settings(deadline=None)
@given(st.integers(min_value=BIGINT_MIN, max_value=BIGINT_MAX))
def test_bigint_text_round_trip(value: int) -> None:
    assert coerce_value("bigint", "text", coerce_value("text", "bigint", value)) == value


@settings(deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_double_text_round_trip(value: float) -> None:
    assert coerce_value("double", "text", coerce_value("text", "double", value)) == value


@settings(deadline=None)
@given(st.integers(min_value=-(2**53), max_value=2**53))
def test_bigint_to_double_is_exact_within_53_bits(value: int) -> None:
    assert coerce_value("double", "bigint", value) == value


@settings(deadline=None)
@given(st.integers(min_value=-(10**75), max_value=10**75))
def test_big_integers_are_lossless_through_wei(value: int) -> None:
    data_type = py_type_to_data_type(value)
    assert data_type in ("bigint", "wei")
    assert coerce_value("wei", data_type, value) == value
    assert Decimal(coerce_value("text", data_type, value)) == value


@settings(deadline=None)
@given(st.binary())
def test_binary_text_round_trip_is_base64(value: bytes) -> None:
    # base64 text that starts with ``0x`` reads as a hex literal, as in dlt (b"\xd3\x10\x00")
    assume(not base64.b64encode(value).startswith(b"0x"))
    assert coerce_value("binary", "text", coerce_value("text", "binary", value)) == value


@settings(deadline=None)
@given(st.datetimes(timezones=st.just(UTC)))
def test_timestamp_text_round_trip(value: dt.datetime) -> None:
    assert coerce_value("timestamp", "text", coerce_value("text", "timestamp", value)) == value


@settings(deadline=None)
@given(scalars, st.sampled_from(DATA_TYPES))
def test_coercion_returns_or_raises_coercion_error_only(value: Any, to_type: str) -> None:
    try:
        result = coerce_value(to_type, py_type_to_data_type(value), value)
    except CoercionError:
        return
    if to_type == "double":
        assert isinstance(result, float) and (math.isfinite(result) or True)


# ------------------------------------------------------------------------ variants & precision


def test_variant_column_name_appends_v_type() -> None:
    naming = naming_convention("snake_case")
    assert variant_column_name("id", "text", naming) == "id__v_text"


def test_variant_column_name_is_shortened_like_any_identifier() -> None:
    naming = naming_convention("snake_case", 20)
    name = variant_column_name("a_very_long_column_name_here", "bigint", naming)
    assert len(name) == 20


def test_direct_naming_uses_its_own_separator_for_variants() -> None:
    assert variant_column_name("Id", "text", naming_convention("direct")) == "Id▶v_text"


def test_default_precision_of_decimal_and_wei() -> None:
    assert default_precision_scale("decimal") == (38, 9)
    assert default_precision_scale("wei") == (76, 0)
    assert default_precision_scale("text") == (None, None)


@pytest.mark.parametrize(
    ("data_type", "precision", "scale"),
    [
        ("timestamp", 10, None),
        ("bigint", 65, None),
        ("decimal", 10, 11),
        ("decimal", 80, None),
        ("text", -1, None),
        ("double", 1.5, None),
    ],
)
def test_invalid_precision_and_scale_are_rejected(
    data_type: str, precision: int | None, scale: int | None
) -> None:
    with pytest.raises(InvalidPrecisionError):
        validate_precision(data_type, precision, scale)


@pytest.mark.parametrize(
    ("data_type", "precision", "scale"),
    [
        ("text", 64, None),
        ("timestamp", 3, None),
        ("bigint", 32, None),
        ("decimal", 10, 2),
        ("decimal", None, 5),
        ("double", 10, 2),
    ],
)
def test_valid_or_ignored_precision_and_scale_pass(
    data_type: str, precision: int | None, scale: int | None
) -> None:
    validate_precision(data_type, precision, scale)
