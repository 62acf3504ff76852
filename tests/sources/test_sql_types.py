"""PostgreSQL's awkward types read by ``sql_table`` as dlt 1.31 reads them.

The programs are tests/sources/sql_types_cases.py (arrays, json/jsonb, uuid, bytea, money, an
enum, inet, numerics with and without scale, time with time zone; every reflection level and
backend; the adapters); dlt's outcomes, recorded by record_sql_types.py, are in
tests/fixtures/sources/sql_types.json: the schema's column hints in order, the DuckDB columns
and the rows as DuckDB prints them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

import loadstone
from loadstone.sources.sql_database import sql_table
from tests.sources.sql_types_cases import CASES, create_tables, drop_tables, run_case

DLT = json.loads(
    (Path(__file__).resolve().parents[1] / "fixtures/sources/sql_types.json").read_text()
)
#: cases dlt fails (its error recorded) and loadstone loads
DLT_FAILS = [case for case in CASES if "error" in DLT[case]]
#: numerics a type adapter turns into floats
NUMERICS = ("num_free", "num_scaled", "num_whole")


@pytest.fixture(scope="module")
def types_schema(postgres_url: str) -> Iterator[str]:
    create_tables(postgres_url, "ls_types")
    yield "ls_types"
    drop_tables(postgres_url, "ls_types")


def _expected(case: str) -> Any:
    """dlt's outcome, less one difference left to the decimal work (issue 39): the Arrow
    backends hint a ``numeric`` without precision as ``decimal(38, 9)``, loadstone as
    ``decimal`` (the destination column is DECIMAL(38,9) under both)."""
    expected = json.loads(json.dumps(DLT[case]))
    if CASES[case].get("backend") in ("pyarrow", "pandas"):
        for column in expected["schema"]["kinds"]:
            if column["name"] == "num_free" and column.get("precision") == 38:
                del column["precision"], column["scale"]
    return expected


@pytest.mark.oracle
@pytest.mark.parametrize(
    "case",
    [c for c in CASES if c not in DLT_FAILS and c not in ("type_adapter_double", "pandas_minimal")],
)
def test_types_load_as_under_dlt(
    case: str, postgres_url: str, types_schema: str, tmp_path: Path
) -> None:
    assert run_case(loadstone, sql_table, postgres_url, types_schema, case, tmp_path) == (
        _expected(case)
    )


@pytest.mark.oracle
def test_a_type_adapter_returning_float_numerics_makes_double_columns(
    postgres_url: str, types_schema: str, tmp_path: Path
) -> None:
    """dlt's other change with an adapter (its json/array columns lose their type and are
    unnested into child tables) is not copied: they stay ``json``."""
    got = run_case(
        loadstone, sql_table, postgres_url, types_schema, "type_adapter_double", tmp_path
    )
    expected = DLT["type_adapter_double"]
    for name in NUMERICS:
        hint = next(c for c in got["schema"]["kinds"] if c["name"] == name)
        assert hint == next(c for c in expected["schema"]["kinds"] if c["name"] == name)
        assert [name, "DOUBLE", "YES"] in got["destination"]["kinds"]["columns"]
    values = sorted(str(row[8:11]) for row in got["rows"]["kinds"])
    assert values == sorted(str(row[0:3]) for row in expected["rows"]["kinds"])


@pytest.mark.oracle
def test_pandas_without_reflected_types_loads_the_columns_dlt_loads(
    postgres_url: str, types_schema: str, tmp_path: Path
) -> None:
    """dlt's pandas backend at ``minimal`` writes arrays and documents as Python reprs
    (``['a', 'b']``) and numerics as doubles; loadstone keeps JSON and decimals."""
    got = run_case(loadstone, sql_table, postgres_url, types_schema, "pandas_minimal", tmp_path)
    expected = DLT["pandas_minimal"]["destination"]["kinds"]
    assert [c[0] for c in got["destination"]["kinds"]["columns"]] == [
        c[0] for c in expected["columns"]
    ]
    assert got["destination"]["kinds"]["rows"] == expected["rows"]


#: dlt fails on intervals too; loadstone refuses them naming the column (below)
INTERVALS = [case for case in DLT_FAILS if case.startswith("interval_")]


@pytest.mark.parametrize("case", [case for case in DLT_FAILS if case not in INTERVALS])
def test_tables_dlt_cannot_load_are_loaded(
    case: str, postgres_url: str, types_schema: str, tmp_path: Path
) -> None:
    """dlt fails on these (its error in the fixture): bytea through pandas, documents of
    mixed shapes without reflected types. loadstone loads every row; documents are JSON."""
    got = run_case(loadstone, sql_table, postgres_url, types_schema, case, tmp_path)
    (table,) = got["destination"]
    assert got["destination"][table]["rows"] == 3
    assert got["rows"][table][2][3] == '[1,"a"]'


@pytest.mark.parametrize("case", INTERVALS)
def test_an_interval_column_is_refused_naming_it_and_what_to_do(
    case: str, postgres_url: str, types_schema: str, tmp_path: Path
) -> None:
    """An interval has no data type, and its printed text (``1 day, 2:03:04``) is no value:
    the extract fails, as under dlt 1.31, saying which column and how to read it, and
    nothing is loaded."""
    assert "error" in DLT[case]
    with pytest.raises(loadstone.exceptions.PipelineStepFailed) as failed:
        run_case(loadstone, sql_table, postgres_url, types_schema, case, tmp_path)
    message = str(failed.value)
    assert "table 'spans', column 'span': an interval has no data type" in message
    assert "query_adapter_callback" in message and "\n" not in message.split("failed: ")[-1]
    assert failed.value.step == "extract"
    assert not (tmp_path / "types.duckdb").exists()


def _loaded_from_postgres(
    postgres_url: str, tmp_path: Path, sql: str, schema: str, table: str, backend: str
) -> Any:
    """The pipeline that loaded ``schema.table`` (made by ``sql`` in a fresh ``schema``) from
    PostgreSQL into DuckDB with ``backend``."""
    engine = sa.create_engine(postgres_url)
    with engine.begin() as conn:
        conn.exec_driver_sql(
            f"DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema};{sql}"
        )
    engine.dispose()
    pipeline = loadstone.pipeline(
        schema,
        destination=loadstone.destinations.duckdb(str(tmp_path / f"{schema}.duckdb")),
        dataset_name="d",
        pipelines_dir=str(tmp_path / "pipelines"),
    )
    pipeline.run(sql_table(postgres_url, table=table, schema=schema, backend=backend))
    return pipeline


@pytest.mark.oracle
@pytest.mark.parametrize("backend", ["pyarrow", "pandas"])
def test_json_scalars_after_a_document_load_as_json(
    postgres_url: str, tmp_path: Path, backend: str
) -> None:
    """A jsonb column read row by row (an array column keeps it off COPY) whose first value
    is a document: its scalars are written as JSON too (dlt 1.31's outcome with pyarrow:
    ``"str"``, ``5``, ``true``, NULL for a JSON null), not as bare text the load refuses."""
    sql = (
        "CREATE TABLE ls_json_scalars.docs (id int primary key, jb jsonb, arr int[]);"
        "INSERT INTO ls_json_scalars.docs VALUES (0, '[1]', '{1}'), (1, '\"str\"', NULL),"
        " (2, '5', NULL), (3, 'true', NULL), (4, 'null', NULL), (5, NULL, NULL),"
        " (6, '1.5', NULL), (7, '{\"k\": \"v\"}', NULL)"
    )
    pipeline = _loaded_from_postgres(
        postgres_url, tmp_path, sql, "ls_json_scalars", "docs", backend
    )
    with pipeline.sql_client() as client:
        rows = client.execute_sql("select id, jb from docs order by id")
    # dlt 1.31's outcome (pyarrow backend)
    assert rows == [
        (0, "[1]"),
        (1, '"str"'),
        (2, "5"),
        (3, "true"),
        (4, None),
        (5, None),
        (6, "1.5"),
        (7, '{"k":"v"}'),
    ]


@pytest.mark.oracle
@pytest.mark.parametrize("backend", ["pyarrow", "pandas"])
def test_a_float_nan_loads_as_null_with_pandas(
    postgres_url: str, tmp_path: Path, backend: str
) -> None:
    """dlt 1.31's ``pandas`` frame takes a ``NaN`` for a missing value: it loads NULL there,
    while its ``pyarrow`` backend keeps NaN; infinities stay with both (dlt's outcomes)."""
    sql = (
        "CREATE TABLE ls_float_nan.f (id int primary key, x float8, y real);"
        "INSERT INTO ls_float_nan.f VALUES (1, 'NaN', 1.5), (2, 'Infinity', 'NaN'),"
        " (3, '-Infinity', NULL)"
    )
    pipeline = _loaded_from_postgres(postgres_url, tmp_path, sql, "ls_float_nan", "f", backend)
    with pipeline.sql_client() as client:
        rows = client.execute_sql("select id, cast(x as varchar), cast(y as varchar) from f")
    nan = None if backend == "pandas" else "nan"
    assert sorted(rows) == [(1, nan, "1.5"), (2, "inf", nan), (3, "-inf", None)]


#: dlt 1.31's outcome for PostgreSQL ranges: pyarrow loads the JSON of the parts (its Arrow
#: struct as DuckDB writes it), pandas the text PostgreSQL prints
RANGES = {
    "pyarrow": [
        (
            1,
            '{"lower":1,"upper":10,"bounds":"[)","empty":false}',
            '{"lower":1.5,"upper":2.25,"bounds":"(]","empty":false}',
            '{"lower":"2023-12-31 22:00:00+00","upper":null,"bounds":"()","empty":false}',
        ),
        (
            2,
            '{"lower":null,"upper":null,"bounds":"[)","empty":true}',
            '{"lower":2.0,"upper":3.0,"bounds":"[]","empty":false}',
            '{"lower":null,"upper":"2024-01-01 10:00:00.5+00","bounds":"()","empty":false}',
        ),
        (3, None, None, None),
    ],
    "pandas": [
        (1, "[1,10)", "(1.5,2.25]", "(2023-12-31 22:00:00+00:00,)"),
        (2, "empty", "[2,3.0]", "(,2024-01-01 10:00:00.500000+00:00)"),
        (3, None, None, None),
    ],
}


@pytest.mark.oracle
@pytest.mark.parametrize("backend", ["pyarrow", "pandas"])
def test_range_columns_load_as_under_dlt(postgres_url: str, tmp_path: Path, backend: str) -> None:
    """A PostgreSQL range column fails neither backend (it failed converting to Arrow)."""
    sql = (
        "CREATE TABLE ls_ranges.r (id int primary key, ir int4range, nr numrange, tr tstzrange);"
        "INSERT INTO ls_ranges.r VALUES (1, '[1,10)', '(1.5,2.25]',"
        " '(2024-01-01 00:00+02,)'), (2, 'empty', '[2,3.0]', '(,2024-01-01 10:00:00.5+00)'),"
        " (3, NULL, NULL, NULL)"
    )
    pipeline = _loaded_from_postgres(postgres_url, tmp_path, sql, "ls_ranges", "r", backend)
    kinds = {"pyarrow": "json", "pandas": "text"}[backend]
    columns = pipeline.default_schema.get_table("r")["columns"]
    assert [columns[c]["data_type"] for c in ("ir", "nr", "tr")] == [kinds] * 3
    with pipeline.sql_client() as client:
        rows = client.execute_sql("select id, ir, nr, tr from r order by id")
    assert rows == RANGES[backend]
