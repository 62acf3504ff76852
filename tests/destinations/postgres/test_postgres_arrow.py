"""Arrow data into PostgreSQL: dlt 1.31's column types and rows, every write disposition.

The types are compared with what dlt 1.31 made of the same table on the same server
(``tests/fixtures/arrow/postgres_every_type.json``, recorded by ``tests/fixtures/arrow/record.py``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from postgres_support import connection, drop_datasets, pipeline, rows, unique_dataset

from tests.compat.arrow_scenarios import POSTGRES_TYPES_SQL, every_arrow_type
from tests.compat.harness import plain

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "arrow" / "postgres_every_type.json"


@pytest.fixture
def dataset(postgres_url: str) -> Iterator[str]:
    name = unique_dataset("arrow")
    yield name
    drop_datasets(postgres_url, name)


def _types(url: str, dataset: str, table: str) -> list[list[Any]]:
    with connection(url) as conn:
        return [list(r) for r in conn.execute(POSTGRES_TYPES_SQL, (dataset, table)).fetchall()]


def test_every_arrow_type_gets_dlts_postgres_type_and_values(
    postgres_url: str, dataset: str, tmp_path: Path
) -> None:
    expected = json.loads(FIXTURE.read_text(encoding="utf-8"))
    pipeline(postgres_url, dataset, tmp_path).run(
        every_arrow_type(nested=False), table_name="Readings"
    )
    assert _types(postgres_url, dataset, "readings") == expected["types"]
    names = ", ".join(f'"{n}"' for n, _, _ in expected["types"])
    loaded = rows(postgres_url, f'SELECT {names} FROM "{dataset}"."readings"')
    assert sorted((plain(list(r)) for r in loaded), key=json.dumps) == expected["rows"]


def test_struct_list_and_map_columns_load_as_jsonb(
    postgres_url: str, dataset: str, tmp_path: Path
) -> None:
    """dlt 1.31 cannot load these into PostgreSQL at all (its CSV writer refuses them)."""
    pipeline(postgres_url, dataset, tmp_path).run(every_arrow_type(), table_name="readings")
    types = dict((n, t) for n, t, _ in _types(postgres_url, dataset, "readings"))
    assert [types[c] for c in ("point", "tags", "attrs")] == ["jsonb"] * 3
    got = rows(postgres_url, f'SELECT point, tags, attrs FROM "{dataset}"."readings" ORDER BY i8')
    assert got == [
        (None, [], None),
        ({"a": 1, "b": "x"}, [1, 2], {"k": 1}),
        ({"a": 2, "b": None}, None, {}),
    ]


def test_pandas_merge_then_upsert_keep_one_row_per_key(
    postgres_url: str, dataset: str, tmp_path: Path
) -> None:
    pipe = pipeline(postgres_url, dataset, tmp_path)
    merge = {"write_disposition": "merge", "primary_key": "station"}
    pipe.run(pd.DataFrame({"station": ["a", "b", "a"], "v": [1, 2, 3]}), table_name="s", **merge)
    pipe.run(pd.DataFrame({"station": ["b", "c"], "v": [20, 30]}), table_name="s", **merge)
    assert sorted(rows(postgres_url, f'SELECT station, v FROM "{dataset}"."s"')) == [
        ("a", 1),
        ("b", 20),
        ("c", 30),
    ]
    upsert = {"write_disposition": {"disposition": "merge", "strategy": "upsert"}}
    pipe.run(pa.table({"station": ["c", "d"], "v": [300, 4]}), table_name="s", **upsert)
    assert sorted(rows(postgres_url, f'SELECT station, v FROM "{dataset}"."s"')) == [
        ("a", 1),
        ("b", 20),
        ("c", 300),
        ("d", 4),
    ]


def test_the_dataset_reads_columns_in_the_types_dlt_reads_them(
    postgres_url: str, dataset: str, tmp_path: Path
) -> None:
    """``pipeline.dataset()`` Arrow from PostgreSQL in dlt 1.31's types (differential
    programs p1124-p1126): a declared decimal keeps its shape, a bare one is 38,9, a
    timestamp of precision 3 is in ms, a column of nulls keeps its type; loadstone took the
    types the values showed (``decimal128(8, 3)``, ``null`` ...). A ``wei`` is read whole:
    dlt 1.31 reads 2**100 as 0 (pyarrow cuts a decimal wider than its type to 0)."""
    import datetime as dt
    from decimal import Decimal

    import loadstone

    row = {
        "d": Decimal("12345.678"),
        "dd": Decimal("1.5"),
        "w": Decimal(2**100),
        "ts": dt.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=dt.timezone.utc),
        "n": None,
        "u": "x",
    }
    columns: Any = {
        "d": {"data_type": "decimal", "precision": 10, "scale": 3},
        "w": {"data_type": "wei"},
        "ts": {"data_type": "timestamp", "precision": 3},
        "n": {"data_type": "bigint"},
    }
    p = pipeline(postgres_url, dataset, tmp_path)
    p.run(loadstone.resource([row], name="t", columns=columns))
    table = p.dataset()["t"].select("d", "dd", "w", "ts", "n").arrow()
    # dlt 1.31's types (its wei value aside)
    assert [str(f.type) for f in table.schema] == [
        "decimal128(10, 3)",
        "decimal128(38, 9)",
        "decimal128(38, 0)",
        "timestamp[ms, tz=UTC]",
        "int64",
    ]
    assert table.column("w").to_pylist() == [Decimal(2**100)]
    uuid = p.dataset().query("SELECT gen_random_uuid() AS u, CAST(1 AS numeric(5, 2)) AS c")
    assert [str(f.type) for f in uuid.arrow().schema] == ["string", "decimal128(5, 2)"]
    with p.sql_client() as client, client.execute_query("SELECT u, n FROM t") as cursor:
        assert [d[1] for d in cursor.description] == [1043, 20]  # PostgreSQL's type OIDs
    # a cursor's Arrow has the types its values show, as dlt 1.31's (p1153)
    with p.sql_client() as client, client.execute_query("SELECT d, dd FROM t") as cursor:
        assert [str(f.type) for f in cursor.arrow().schema] == [
            "decimal128(8, 3)",
            "decimal128(10, 9)",
        ]


def test_bytea_reads_as_memoryview_and_a_time_keeps_its_unit(
    postgres_url: str, dataset: str, tmp_path: Path
) -> None:
    """dlt 1.31's rows from PostgreSQL hold bytea as memoryview (psycopg2's) and its Arrow
    has a time of precision 3 as time32[ms]; loadstone gave bytes and time64[us]
    (differential program p1138)."""
    import datetime as dt

    import loadstone

    columns: Any = {"tm": {"data_type": "time", "precision": 3}}
    p = pipeline(postgres_url, dataset, tmp_path)
    rows_ = [{"b": b"\x00x", "tm": dt.time(1, 2, 3, 456789)}]
    p.run(loadstone.resource(rows_, name="t", columns=columns))
    with p.sql_client() as client:
        ((value,),) = client.execute_sql("SELECT b FROM t")
    assert isinstance(value, memoryview) and value.tobytes() == b"\x00x"
    table = p.dataset()["t"].select("b", "tm").arrow()
    assert [str(f.type) for f in table.schema] == ["binary", "time32[ms]"]
    assert table.to_pylist() == [{"b": b"\x00x", "tm": dt.time(1, 2, 3, 457000)}]
