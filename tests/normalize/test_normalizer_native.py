"""The engine's C hot path (``_speedups``) gives exactly what the Python reference gives.

The engine (``rows.py``, ``row_typing.py``, ``table_buffers.py``, ``json_lines.py``) keeps
the pure-Python loops as the specification; the C module replaces the two loops that touch
every value and the building of text columns. Every case here runs
both ways, with the root row ids made deterministic, and compares the whole output: schema
(column order and types), every row of every table, and the bookkeeping facts.
"""

from __future__ import annotations

import datetime
import itertools
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from normalizer_support import StandInPackage, read_table, schema_tables, snake_case
from schema_documents import schema_of

from loadstone.normalizers.contract import NormalizeContext
from loadstone.plugins.normalizers.relational import (
    RelationalNormalizer,
    json_lines,
    native,
    row_keys,
)


@pytest.fixture(autouse=True)
def _counted_root_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    """Root ids are random by design; count them instead so two runs can be compared."""
    monkeypatch.setattr(row_keys, "new_random_id", _counter())
    # this file compares the Python engine's C loops with its reference loops (the native core's own: test_native_core.py)
    monkeypatch.setenv("NORMALIZE__ENGINE_CORE", "python")


def _counter() -> Any:
    counter = itertools.count()
    return lambda: f"root{next(counter)}"


def _run(
    records: list[Any],
    native: bool,
    *,
    hints: dict[str, Any] | None = None,
    chunk_bytes: int = 1 << 30,
    flush_rows: int = 20000,
) -> dict[str, Any]:
    row_keys.new_random_id = _counter()
    package = StandInPackage(Path(tempfile.mkdtemp(prefix="native_")))
    package.add_jsonl("items", records)
    if hints:
        package.table_hints["items"] = hints
    # one process: the counted root ids above are per process
    normalizer = RelationalNormalizer(
        chunk_bytes=chunk_bytes, flush_rows=flush_rows, native=native, workers=1
    )
    result = normalizer.normalize(
        package, schema_of(), NormalizeContext(spark=None, naming=snake_case())
    )
    tables = schema_tables(result)
    return {
        "schema": json.loads(json.dumps(tables, default=str)),
        "rows": {name: read_table(result, name) for name in result.tables},
        "counts": {name: output.row_count for name, output in result.tables.items()},
        "new_columns": result.new_columns,
        "bad": result.bad_records,
    }


def _both(records: list[Any], **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    return _run(records, True, **kwargs), _run(records, False, **kwargs)


def test_the_c_hot_path_is_built() -> None:
    assert native.NATIVE_AVAILABLE, (
        "loadstone.plugins.normalizers.relational._speedups is missing: install with a C "
        "compiler (pip install -e .), or the normalizer runs its slow Python reference"
    )


@pytest.mark.parametrize(
    "case", ["github_events.json", "github_issues.json", "weird_rows.json", "ethereum_blocks.json"]
)
def test_shared_cases_normalize_the_same_in_c_and_in_python(cases_dir: Path, case: str) -> None:
    records = json.loads((cases_dir / case).read_text(encoding="utf-8"))
    native, reference = _both(records)
    assert native == reference


def test_small_flushes_give_the_same_files_content(cases_dir: Path) -> None:
    records = json.loads((cases_dir / "github_events.json").read_text(encoding="utf-8"))
    native, reference = _both(records, flush_rows=7)
    assert native == reference


def test_hints_that_change_flattening_act_the_same(cases_dir: Path) -> None:
    records = json.loads((cases_dir / "github_issues.json").read_text(encoding="utf-8"))
    hints = {
        "max_nesting": 1,
        "columns": {"labels": {"data_type": "json"}, "user": {"data_type": "json"}},
    }
    native, reference = _both(records, hints=hints)
    assert native == reference
    assert native["schema"]["items"]["columns"]["user"]["data_type"] == "json"


def test_upsert_keys_and_scd2_hashes_are_the_same() -> None:
    records = [{"id": i, "name": f"n{i}", "tags": [str(i), None, i]} for i in range(30)]
    upsert = {"write_disposition": {"disposition": "merge", "strategy": "upsert"}}
    assert _run(records, True, hints={**upsert, "primary_key": "id"}) == _run(
        records, False, hints={**upsert, "primary_key": "id"}
    )
    scd2 = {"write_disposition": {"disposition": "merge", "strategy": "scd2"}}
    assert _run(records, True, hints=scd2) == _run(records, False, hints=scd2)


def test_values_json_has_no_type_for_are_typed_the_same() -> None:
    """Decimal, date, time and bytes reach the engine as extract writes them (marked
    strings) and come out typed decimal, date, time and binary on both paths; later values
    of another type are coerced or go to variants alike."""
    import datetime as dt
    import decimal

    from loadstone.extract.item_json import encode_item

    typed = {
        "amount": decimal.Decimal("12.345678901"),
        "day": dt.date(2024, 2, 29),
        "at": dt.time(13, 45, 1, 250),
        "blob": b"\x00\xff",
        "nested": {"price": decimal.Decimal("-1.5"), "days": [dt.date(2020, 1, 1)]},
    }
    mixed = {"amount": 7, "day": "2024-03-01", "at": "x", "blob": "text", "nested": {"price": 2}}
    records = [json.loads(encode_item(item)) for item in (typed, mixed)]
    native, reference = _both(records)
    assert native == reference
    columns = native["schema"]["items"]["columns"]
    assert {name: columns[name]["data_type"] for name in ("amount", "day", "at", "blob")} == {
        "amount": "decimal",
        "day": "date",
        "at": "time",
        "blob": "binary",
    }
    assert columns["nested__price"]["data_type"] == "decimal"


# -- hostile data -------------------------------------------------------------------------
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.integers(min_value=-(2**63) - 2, max_value=-(2**63) + 2),
    st.integers(min_value=2**63 - 2, max_value=2**63 + 2),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=6),
    st.sampled_from(["2023-04-08T05:14:40Z", "2021-01-01", "12", "1.5", "true", "", "😀"]),
)
#: keys that collide after normalization, Unicode, empty and system-looking keys
KEYS = st.sampled_from(
    ["a", "A", "a b", "a_b", "aB", "a__b", "ключ", "😀", "", " ", "_dlt_id", "value", "list", "x"]
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=12,
)
RECORDS = st.lists(
    st.one_of(st.dictionaries(KEYS, VALUES, max_size=5), SCALARS), min_size=1, max_size=30
)


# each example normalizes a package twice (C and Python): half the profile's budget
@settings(
    max_examples=settings.default.max_examples // 2,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    records=RECORDS,
    chunk_bytes=st.sampled_from([1 << 30, 64]),
    nesting=st.sampled_from([1000, 1, 2]),
)
def test_hostile_nested_data_normalizes_the_same_in_c_and_in_python(
    records: list[Any], chunk_bytes: int, nesting: int
) -> None:
    hints = {"max_nesting": nesting} if nesting != 1000 else None
    native, reference = _both(records, chunk_bytes=chunk_bytes, hints=hints, flush_rows=5)
    assert _nan_named(native) == _nan_named(reference)


def _nan_named(value: Any) -> Any:
    """``value`` with each float NaN as the text "NaN": a NaN equals no NaN, not even its own
    (the text "NAN" in a double column is one)."""
    if isinstance(value, float) and value != value:
        return "NaN"
    if isinstance(value, dict):
        return {k: _nan_named(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_nan_named(v) for v in value]
    return value


# -- the C functions on their own ----------------------------------------------------------
def _sparse(cells: list[str | None]) -> Iterator[tuple[list[int], list[str]]]:
    rows = [i for i, v in enumerate(cells) if v is not None]
    yield rows, [cells[i] for i in rows]


def _text_array(rows: list[int] | None, values: list[Any], n: int) -> pa.Array | None:
    from loadstone.plugins.normalizers.relational import _speedups

    buffers = _speedups.text_buffers(rows, values, n)
    if buffers is None:
        return None
    validity, offsets, data = buffers
    return pa.Array.from_buffers(
        pa.string(),
        n,
        [
            None if validity is None else pa.py_buffer(validity),
            pa.py_buffer(offsets),
            pa.py_buffer(data),
        ],
    )


# long strings outgrow the data buffer's first size (16 bytes a value), which then doubles
@given(
    cells=st.lists(
        st.none() | st.text(max_size=8) | st.text(min_size=40, max_size=300), max_size=40
    )
)
def test_text_buffers_build_the_array_pyarrow_would(cells: list[str | None]) -> None:
    rows = [i for i, v in enumerate(cells) if v is not None]
    built = _text_array(rows, [cells[i] for i in rows], len(cells))
    assert built is not None
    built.validate(full=True)
    assert built.equals(pa.array(cells, type=pa.string()))


# cheap examples (a line scan of a few bytes): four times the profile's budget
@settings(max_examples=4 * settings.default.max_examples, deadline=None)
@given(
    raw=st.binary(max_size=80)
    | st.text(alphabet='0123456789[{}]":, a-', max_size=80)
    | st.from_regex(r'[a":-]{0,40}\d{15,45}[a":\d-]{0,40}', fullmatch=True)
    | st.text(alphabet='\uf8e0\uf8e1\u00ef\u00a3"a', max_size=40)
    | st.lists(st.sampled_from([b"\xef", b"\xa3", b"\xa0", b"a"]), max_size=30).map(b"".join)
    # past 255 blocks of 16 bytes, where the C scan's byte-wide counters are summed
    | st.tuples(st.text(alphabet='[{":a', min_size=1, max_size=24), st.integers(1, 700)).map(
        lambda part: part[0] * part[1]
    )
)
def test_the_line_scan_finds_in_c_what_python_counts(raw: bytes | str) -> None:
    from loadstone.plugins.normalizers.relational import _speedups

    line = raw.encode() if isinstance(raw, str) else raw
    assert _speedups.scan_line(line) == json_lines.scan_line(line)


def test_a_released_cell_is_empty_and_its_values_freed_unless_held_elsewhere() -> None:
    import weakref

    from loadstone.plugins.normalizers.relational import _speedups

    class Value:
        pass

    dropped, held = Value(), Value()
    gone, kept = weakref.ref(dropped), weakref.ref(held)
    columns: dict[str, Any] = {"a": ([0, 1], [dropped, held]), "b": ([], [])}
    del dropped
    _speedups.release_cells(columns)
    assert columns == {"a": ([], []), "b": ([], [])}
    assert gone() is None and kept() is held


@given(width=st.integers(-1, 600), keys=st.integers(0, 700))
def test_a_presized_row_is_an_empty_dict_that_keeps_insertion_order(width: int, keys: int) -> None:
    from loadstone.plugins.normalizers.relational import _speedups

    row = _speedups.new_row(width)
    assert row == {}
    row.update((f"c{i}", i) for i in reversed(range(keys)))
    assert list(row) == [f"c{i}" for i in reversed(range(keys))]


def test_text_buffers_of_a_dense_column_have_no_validity_bitmap() -> None:
    built = _text_array(None, ["a", "", "ключ"], 3)
    assert built is not None and built.to_pylist() == ["a", "", "ключ"]
    assert built.buffers()[0] is None


def test_text_buffers_leave_a_non_string_to_pyarrow() -> None:
    assert _text_array(None, ["a", 1], 2) is None


def test_text_buffers_leave_a_lone_surrogate_to_pyarrow() -> None:
    assert _text_array(None, ["\ud800"], 1) is None


def test_text_buffers_reject_rows_out_of_order() -> None:
    with pytest.raises(ValueError, match="ascend"):
        _text_array([1, 0], ["a", "b"], 2)


def test_fill_hands_back_the_first_value_it_cannot_place() -> None:
    from loadstone.plugins.normalizers.relational import _speedups

    columns: dict[str, Any] = {}
    raw = {"a": "x", "b": None, "c": 2**63, "d": 5}
    step = _speedups.fill(raw, {"a": str, "c": int, "d": int}, columns, 0, 0, 10)
    assert isinstance(step, tuple)
    pos, column, value, seq = step
    assert (column, value, seq) == ("c", 2**63, 13)
    assert columns == {"a": ([0], ["x"])}
    assert _speedups.fill(raw, {"a": str, "c": int, "d": int}, columns, 0, pos, seq) == 14
    assert columns == {"a": ([0], ["x"]), "d": ([0], [5])}


def test_c_functions_refuse_wrong_arguments_with_type_errors() -> None:
    from loadstone.plugins.normalizers.relational import _speedups

    with pytest.raises(TypeError):
        _speedups.fill([], {}, {}, 0, 0, 0)
    with pytest.raises(TypeError):
        _speedups.flatten({}, None, [], (), 0, 10, {}, None, [])
    with pytest.raises(TypeError):
        _speedups.scatter([0], [], 1)


ISO_LIKE = st.from_regex(
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d{1,7})?(Z|[+-]\d{2}:\d{2})?", fullmatch=True
)


@given(text=ISO_LIKE)
def test_iso_text_the_c_path_places_is_the_timestamp_python_coerces_it_to(text: str) -> None:
    from loadstone.exceptions import CoercionError
    from loadstone.plugins.normalizers.relational import _speedups
    from loadstone.schema.data_types import coerce_value

    columns: dict[str, Any] = {}
    step = _speedups.fill({"at": text}, {"at": _speedups.ISO_TIMESTAMP_TEXT}, columns, 0, 0, 0)
    if step == 1:  # placed by C: Python must agree, value and time zone
        placed = columns["at"][1][0]
        expected = coerce_value("timestamp", "text", text)
        assert placed == expected and placed.tzinfo == expected.tzinfo
    else:  # handed back: Python decides (it may still parse it, or make a variant)
        assert columns == {}
        try:
            coerce_value("timestamp", "text", text)
        except CoercionError:
            pass


def test_a_timestamp_column_takes_iso_text_in_c_and_other_text_in_python() -> None:
    records = [
        {"at": "2023-04-08T05:14:40Z"},
        {"at": "2023-04-08T05:14:40+02:00"},
        {"at": "2023-04-08 05:14:40.123"},
        {"at": "not a time"},
        {"at": "1700000000"},
    ]
    native, reference = _both(records)
    assert native == reference
    assert [c for c in native["schema"]["items"]["columns"] if c.startswith("at")] == [
        "at",
        "at__v_text",
    ]


_FIXED = {
    0: (pa.int64(), st.integers(min_value=-(2**63), max_value=2**63 - 1)),
    1: (pa.float64(), st.floats(allow_nan=False)),
    2: (pa.bool_(), st.booleans()),
    3: (
        pa.timestamp("us", tz="UTC"),
        st.datetimes(timezones=st.just(datetime.timezone.utc)),
    ),
}


# cheap examples (one small array): three times the profile's budget
@settings(max_examples=3 * settings.default.max_examples, deadline=None)
@given(data=st.data(), kind=st.sampled_from(sorted(_FIXED)))
def test_fixed_buffers_build_the_array_pyarrow_would(data: st.DataObject, kind: int) -> None:
    from loadstone.plugins.normalizers.relational import _speedups

    arrow_type, values = _FIXED[kind]
    cells = data.draw(st.lists(st.none() | values, max_size=40))
    rows = [i for i, cell in enumerate(cells) if cell is not None]
    dense = len(rows) == len(cells)
    built = _speedups.fixed_buffers(
        None if dense else rows, [cells[i] for i in rows], len(cells), kind
    )
    assert built is not None
    validity, buffer = built
    array = pa.Array.from_buffers(
        arrow_type,
        len(cells),
        [None if validity is None else pa.py_buffer(validity), pa.py_buffer(buffer)],
    )
    array.validate(full=True)
    assert array.equals(pa.array(cells, type=arrow_type))


@pytest.mark.parametrize(
    ("kind", "odd"),
    [
        (0, 2**63),  # beyond 64 bits: pyarrow reports it
        (0, True),  # a bool is an int to Python, not to the column
        (0, 1.5),
        (1, 1),
        (2, 1),
        (3, datetime.datetime(2024, 1, 1)),  # naive
        (3, datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=2)))),
    ],
)
def test_fixed_buffers_leave_other_values_to_pyarrow(kind: int, odd: object) -> None:
    from loadstone.plugins.normalizers.relational import _speedups

    assert _speedups.fixed_buffers(None, [odd], 1, kind) is None


def test_nested_rows_with_their_own_or_a_null_key_are_the_same() -> None:
    """A list element that brings ``_dlt_id`` keeps it; a null one gets dlt's digest."""
    records = [
        {"id": 1, "items": [{"_dlt_id": "mine", "v": 1}, {"_dlt_id": None, "v": 2}, 3, [4]]},
        {"id": 2, "items": ["a", {"v": "text now"}, None, {"v": 5, "sub": [{"w": 1}]}]},
    ]
    native, reference = _both(records, flush_rows=2)
    assert native == reference
    keys = [row["_dlt_id"] for row in native["rows"]["items__items"]]
    assert keys[0] == "mine" and keys[1] not in ("mine", None)
