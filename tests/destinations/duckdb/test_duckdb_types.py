"""DuckDB type mapping and identifier quoting: what the loader creates, and that it is lossless."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_duckdb_support import duckdb_destination, parquet, request, rows, schema, table

from loadstone.exceptions import UnsupportedType
from loadstone.plugins.destinations.duckdb.sql import duckdb_type, quote
from loadstone.schema import Column, InvalidSchemaError
from tests.destinations.schema_support import stored_schema


@pytest.mark.parametrize(
    ("column", "expected"),
    [
        ({"data_type": "text"}, "VARCHAR"),
        ({"data_type": "text", "precision": 10}, "VARCHAR"),
        ({"data_type": "double"}, "DOUBLE"),
        ({"data_type": "bool"}, "BOOLEAN"),
        ({"data_type": "timestamp"}, "TIMESTAMP WITH TIME ZONE"),
        ({"data_type": "timestamp", "timezone": False}, "TIMESTAMP"),
        ({"data_type": "timestamp", "timezone": False, "precision": 0}, "TIMESTAMP_S"),
        ({"data_type": "timestamp", "timezone": False, "precision": 3}, "TIMESTAMP_MS"),
        ({"data_type": "timestamp", "timezone": False, "precision": 6}, "TIMESTAMP"),
        ({"data_type": "timestamp", "timezone": False, "precision": 9}, "TIMESTAMP_NS"),
        ({"data_type": "date"}, "DATE"),
        ({"data_type": "time"}, "TIME"),
        ({"data_type": "bigint"}, "BIGINT"),
        ({"data_type": "bigint", "precision": 8}, "TINYINT"),
        ({"data_type": "bigint", "precision": 16}, "SMALLINT"),
        ({"data_type": "bigint", "precision": 32}, "INTEGER"),
        ({"data_type": "bigint", "precision": 64}, "BIGINT"),
        ({"data_type": "bigint", "precision": 128}, "HUGEINT"),
        ({"data_type": "binary"}, "BLOB"),
        ({"data_type": "json"}, "JSON"),
        ({"data_type": "decimal"}, "DECIMAL(38,9)"),
        ({"data_type": "decimal", "precision": 10, "scale": 2}, "DECIMAL(10,2)"),
        ({"data_type": "decimal", "precision": 76, "scale": 0}, "VARCHAR"),
        ({"data_type": "wei"}, "DECIMAL(38,0)"),
    ],
)
def test_schema_type_maps_to_duckdb_type(column: dict, expected: str) -> None:
    assert duckdb_type(Column.from_dict(column, "c")) == expected


def test_a_type_duckdb_cannot_hold_is_a_clear_error() -> None:
    with pytest.raises(UnsupportedType, match="'t' column 'c'"):
        duckdb_type(Column("c", data_type="decimal", precision=10, scale=12), "t")


def test_unknown_data_type_in_a_stored_schema_is_refused_before_loading(tmp_path: Path) -> None:
    stored = schema(t=table({"c": {"data_type": "complex"}}))
    with duckdb_destination(tmp_path / "db.duckdb").client(None, "ds") as client:
        with pytest.raises(InvalidSchemaError, match=r"'t'.*'c'.*complex"):
            client.update_stored_schema(stored_schema(stored))


@given(st.text())
def test_quoted_identifier_round_trips_in_duckdb_sql(name: str) -> None:
    import duckdb

    name = name.replace("\x00", "")
    if not name:
        return
    assert duckdb.sql(f"SELECT 1 AS {quote(name)}").columns == [name]


def _created_types(tmp_path: Path, columns: dict) -> dict[str, str]:
    stored = schema(t=table(columns))
    with duckdb_destination(tmp_path / "db.duckdb").client(stored_schema(stored), "ds") as client:
        client.update_stored_schema(stored_schema(stored))
        return dict(
            client.query(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_schema = 'ds' AND table_name = 't'"
            )
        )


def test_created_columns_have_the_mapped_types(tmp_path: Path) -> None:
    types = _created_types(
        tmp_path,
        {
            "s": {"data_type": "text"},
            "i": {"data_type": "bigint", "precision": 16},
            "ts": {"data_type": "timestamp"},
            "nts": {"data_type": "timestamp", "timezone": False, "precision": 3},
            "d": {"data_type": "decimal", "precision": 12, "scale": 4},
            "j": {"data_type": "json"},
            "w": {"data_type": "wei"},
        },
    )
    assert types["s"] == "VARCHAR"
    assert types["i"] == "SMALLINT"
    assert types["ts"] == "TIMESTAMP WITH TIME ZONE"
    assert types["nts"] == "TIMESTAMP_MS"
    assert types["d"] == "DECIMAL(12,4)"
    assert types["j"] == "JSON"
    assert types["w"] == "DECIMAL(38,0)"


def test_not_nullable_system_columns_are_not_null(tmp_path: Path) -> None:
    stored = schema(t=table({"a": {"data_type": "text"}}))
    with duckdb_destination(tmp_path / "db.duckdb").client(stored_schema(stored), "ds") as client:
        client.update_stored_schema(stored_schema(stored))
        nullable = dict(
            client.query(
                "SELECT column_name, is_nullable FROM information_schema.columns "
                "WHERE table_schema = 'ds' AND table_name = 't'"
            )
        )
    assert nullable == {"a": "YES", "_dlt_id": "NO", "_dlt_load_id": "NO"}


def test_column_that_only_saw_none_is_not_created(tmp_path: Path) -> None:
    types = _created_types(tmp_path, {"a": {"data_type": "text"}, "empty": {"nullable": True}})
    assert "empty" not in types


def test_every_type_loads_from_normalizer_parquet(tmp_path: Path) -> None:
    stored = schema(
        t=table(
            {
                "s": {"data_type": "text"},
                "i": {"data_type": "bigint"},
                "f": {"data_type": "double"},
                "b": {"data_type": "bool"},
                "ts": {"data_type": "timestamp"},
                "d": {"data_type": "date"},
                "tm": {"data_type": "time"},
                "dec": {"data_type": "decimal"},
                "j": {"data_type": "json"},
                "bin": {"data_type": "binary"},
            }
        )
    )
    at = dt.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=dt.timezone.utc)
    file = parquet(
        tmp_path / "t",
        [
            {
                "s": "x",
                "i": 2**62,
                "f": 1.5,
                "b": True,
                "ts": at,
                "d": dt.date(2024, 1, 2),
                "tm": dt.time(3, 4, 5, 6),
                "dec": decimal.Decimal("12345678901234567890.123456789"),
                "j": '{"a": [1, 2]}',
                "bin": b"\x00\x01",
                "_dlt_id": "r1",
                "_dlt_load_id": "1",
            }
        ],
        {
            "ts": pa.timestamp("us", tz="UTC"),
            "tm": pa.time64("us"),
            "dec": pa.decimal128(38, 9),
        },
    )
    with duckdb_destination(tmp_path / "db.duckdb").client(stored_schema(stored), "ds") as client:
        client.load_package(request(stored, {"t": [file]}))
        (row,) = rows(client, "t", columns="s, i, f, b, ts, d, tm, dec, j::VARCHAR, bin")
    assert row == (
        "x",
        2**62,
        1.5,
        True,
        at,
        dt.date(2024, 1, 2),
        dt.time(3, 4, 5, 6),
        decimal.Decimal("12345678901234567890.123456789"),
        '{"a": [1, 2]}',
        b"\x00\x01",
    )


@pytest.mark.parametrize(
    "arrow_type", [pa.string(), pa.decimal128(38, 0)], ids=["text", "decimal128"]
)
def test_wei_keeps_every_digit_of_38_digit_integers(
    tmp_path: Path, arrow_type: pa.DataType
) -> None:
    """A wei column is DECIMAL(38,0) as in dlt 1.31 (wider values never reach it: the
    normalizer puts them into the column's text variant)."""
    values = [10**38 - 1, -(2**120) - 7, 12, None]
    stored = schema(blocks=table({"difficulty": {"data_type": "wei"}}))
    file = parquet(
        tmp_path / "b",
        [
            {
                "difficulty": None
                if v is None
                else (str(v) if arrow_type == pa.string() else decimal.Decimal(v)),
                "_dlt_id": f"r{i}",
                "_dlt_load_id": "1",
            }
            for i, v in enumerate(values)
        ],
        {"difficulty": arrow_type},
    )
    with duckdb_destination(tmp_path / "db.duckdb").client(stored_schema(stored), "ds") as client:
        client.load_package(request(stored, {"blocks": [file]}))
        loaded = [r[0] for r in rows(client, "blocks", "_dlt_id", "difficulty")]
    assert loaded == [None if v is None else decimal.Decimal(v) for v in values]


HOSTILE = '"; DROP TABLE users; --'


def test_hostile_identifiers_are_just_names(tmp_path: Path) -> None:
    stored = schema(
        users=table({"id": {"data_type": "bigint"}}),
        **{HOSTILE: table({HOSTILE: {"data_type": "text"}, "it's": {"data_type": "text"}})},
    )
    users = parquet(tmp_path / "u", [{"id": 1, "_dlt_id": "u1", "_dlt_load_id": "1"}])
    evil = parquet(
        tmp_path / "e", [{HOSTILE: "v", "it's": "w", "_dlt_id": "e1", "_dlt_load_id": "1"}]
    )
    with duckdb_destination(tmp_path / "db.duckdb").client(
        stored_schema(stored), HOSTILE
    ) as client:
        client.load_package(request(stored, {"users": [users], HOSTILE: [evil]}))
        assert rows(client, "users", columns="id") == [(1,)]
        assert rows(client, HOSTILE, columns=f'{quote(HOSTILE)}, "it\'s"') == [("v", "w")]
        assert set(client.table_names()) >= {"users", HOSTILE}
