"""Arrow tables, pandas frames, Parquet and CSV files as inputs; and what is refused.

dlt 1.31's outcomes for the same programs are compared in ``tests/compat/arrow_scenarios.py``;
this module holds what the compat harness does not show: file inputs through the CLI, the
refusal of objects that have no table form, other destinations, and values of any shape
round-tripping.
"""

from __future__ import annotations

import datetime as dt
import gzip
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_support import cli
from hypothesis import given, settings
from hypothesis import strategies as st

import loadstone
from loadstone.exceptions import PipelineStepFailed


def _pipeline(tmp_path: Path, name: str = "arrow") -> Any:
    return loadstone.pipeline(
        name,
        destination=loadstone.destinations.duckdb(str(tmp_path / f"{name}.duckdb")),
        dataset_name="d",
        pipelines_dir=str(tmp_path / "pipelines"),
    )


def _rows(tmp_path: Path, sql: str, name: str = "arrow") -> list[tuple[Any, ...]]:
    with duckdb.connect(str(tmp_path / f"{name}.duckdb"), read_only=True) as conn:
        return conn.execute(sql).fetchall()


def _tables(tmp_path: Path, name: str = "arrow") -> list[str]:
    sql = "SELECT table_name FROM information_schema.tables WHERE table_schema = 'd' ORDER BY 1"
    return [r[0] for r in _rows(tmp_path, sql, name) if not r[0].startswith("_dlt")]


# -- never stored as printed text -----------------------------------------------------------
class Opaque:
    """A user object with no table form."""


@pytest.mark.parametrize(
    ("item", "type_name"),
    [
        (Opaque(), "test_arrow_inputs.Opaque"),
        ({"id": 1, "payload": Opaque()}, "test_arrow_inputs.Opaque"),
        ({"id": 1, "matrix": np.zeros((2, 2))}, "numpy.ndarray"),
        # a duration: pandas' Timedelta has an ISO text ('P0DT1H0M0S'), still not a value
        ({"id": 1, "took": pd.Timedelta(hours=1)}, "pandas._libs.tslibs.timedeltas.Timedelta"),
        ({"id": 1, "took": dt.timedelta(hours=1)}, "datetime.timedelta"),
    ],
)
def test_an_object_without_a_table_form_is_refused_in_one_line_and_nothing_loads(
    tmp_path: Path, item: Any, type_name: str
) -> None:
    @loadstone.resource(table_name="things")
    def gadgets() -> Any:
        yield {"id": 0}
        yield item

    pipe = _pipeline(tmp_path)
    with pytest.raises(PipelineStepFailed) as failure:
        pipe.run(gadgets())
    message = str(failure.value)
    assert type_name in message and "'gadgets'" in message and "'things'" in message
    assert "yield dicts" in message or ".tolist()" in message or ".total_seconds()" in message
    assert not (tmp_path / "arrow.duckdb").exists() or _tables(tmp_path) == []


def test_a_duration_column_is_refused_by_name_and_nothing_loads(tmp_path: Path) -> None:
    """A timedelta column's text would be a count of nanoseconds; dlt 1.31 refuses the
    Arrow type too (UnsupportedArrowTypeException)."""
    frame = pd.DataFrame({"id": [1, 2], "took": pd.to_timedelta(["1h", None])})
    pipe = _pipeline(tmp_path)
    with pytest.raises(PipelineStepFailed) as failure:
        pipe.run(frame, table_name="runs")
    assert "column 'took' has the Arrow type duration[ns]" in str(failure.value)
    assert "dt.total_seconds()" in str(failure.value)
    assert pipe.list_extracted_load_packages() == []
    assert not (tmp_path / "arrow.duckdb").exists() or _tables(tmp_path) == []


def test_numpy_scalars_and_named_tuples_load_as_their_values(tmp_path: Path) -> None:
    from collections import namedtuple

    Point = namedtuple("Point", "x y")
    pipe = _pipeline(tmp_path)
    pipe.run(
        [{"n": np.int64(7), "f": np.float32(1.5), "ok": np.bool_(True), "p": Point(1, 2)}],
        table_name="values",
    )
    assert _rows(tmp_path, "SELECT n, f, ok, p__x, p__y FROM d.values") == [(7, 1.5, True, 1, 2)]


def test_a_table_passed_without_table_name_is_refused(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="needs table_name"):
        _pipeline(tmp_path).run(pa.table({"a": [1]}))


# -- Parquet and CSV files --------------------------------------------------------------------
def _run(tmp_path: Path, path: Path, table: str) -> int:
    return cli(
        "run",
        str(path),
        "--table",
        table,
        "--pipeline",
        "files",
        "--dataset",
        "d",
        "--pipelines-dir",
        str(tmp_path / "pipes"),
        "--destination",
        "duckdb",
        "-q",
    )


def _files_db(tmp_path: Path) -> duckdb.DuckDBPyConnection:
    found = sorted(tmp_path.rglob("files.duckdb")) + sorted(Path.cwd().glob("files.duckdb"))
    return duckdb.connect(str(found[0]), read_only=True)


def test_a_parquet_file_whose_columns_change_between_runs_loads_through_the_cli(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "events.parquet"
    stamps = pa.array([0, 1_000], pa.timestamp("ms"))
    pq.write_table(pa.table({"id": [1, 2], "Kind": ["a", "b"], "at": stamps}), path)
    assert _run(tmp_path, path, "events") == 0
    pq.write_table(pa.table({"id": [3], "amount": pa.array([1.5], pa.float32())}), path)
    assert _run(tmp_path, path, "events") == 0
    with _files_db(tmp_path) as conn:
        rows = conn.execute('SELECT id, kind, amount, "at" FROM d.events ORDER BY id').fetchall()
        types = dict(
            conn.execute(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_schema = 'd' AND table_name = 'events'"
            ).fetchall()
        )
    assert [r[:3] for r in rows] == [(1, "a", None), (2, "b", None), (3, None, 1.5)]
    assert rows[1][3] == dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=dt.timezone.utc)
    assert types["at"] == "TIMESTAMP WITH TIME ZONE" and types["amount"] == "DOUBLE"


def test_csv_files_plain_gzipped_and_header_only_load_with_inferred_types(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    plain = tmp_path / "sales.csv"
    plain.write_text("id,amount,Region Name,day\n1,2.5,north,2024-01-02\n2,,south,\n")
    zipped = tmp_path / "more.csv.gz"
    with gzip.open(zipped, "wt") as handle:
        handle.write("id,amount,Region Name,extra\n3,4.5,east,x\n")
    header_only = tmp_path / "none.csv"
    header_only.write_text("id,amount\n")
    for path in (plain, zipped, header_only):
        assert _run(tmp_path, path, "sales") == 0
    with _files_db(tmp_path) as conn:
        rows = conn.execute(
            "SELECT id, amount, region_name, day, extra FROM d.sales ORDER BY id"
        ).fetchall()
        day_type = conn.execute(
            "SELECT data_type FROM information_schema.columns WHERE table_name = 'sales' "
            "AND column_name = 'day'"
        ).fetchone()
    assert rows == [
        (1, 2.5, "north", dt.date(2024, 1, 2), None),
        (2, None, "south", None, None),
        (3, 4.5, "east", None, "x"),
    ]
    assert day_type == ("DATE",)


def test_a_broken_csv_line_fails_naming_the_file_and_loads_nothing(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "bad.csv"
    path.write_text("a,b\n1,2\n3,4,5\n")
    with pytest.raises(PipelineStepFailed, match=r"bad\.csv cannot be read as CSV.*3,4,5"):
        _run(tmp_path, path, "bad")
    for found in tmp_path.glob("files.duckdb"):
        with duckdb.connect(str(found), read_only=True) as conn:
            sql = "SELECT count(*) FROM information_schema.tables WHERE table_name = 'bad'"
            assert conn.execute(sql).fetchone() == (0,)


def test_pipeline_run_takes_a_parquet_path(tmp_path: Path) -> None:
    path = tmp_path / "numbers.parquet"
    pq.write_table(pa.table({"n": [1, 2, 3]}), path)
    _pipeline(tmp_path).run(str(path))
    assert _rows(tmp_path, "SELECT sum(n) FROM d.numbers") == [(6,)]


def test_hints_given_later_apply_to_the_columns_an_arrow_table_already_has(
    tmp_path: Path,
) -> None:
    """As with rows (dlt 1.31, p481): the second run's cursor marks its column, a new schema
    version records it, and the column keeps its type."""
    pipeline = _pipeline(tmp_path)
    pipeline.run(loadstone.resource(pa.table({"id": [1, 2], "v": ["a", "b"]}), name="r"))
    first = pipeline.default_schema.version
    again = loadstone.resource(pa.table({"id": [3], "v": ["c"]}), name="r")
    again.apply_hints(incremental=loadstone.sources.incremental("id"))
    pipeline.run(again)
    columns = pipeline.default_schema.get_table("r")["columns"]
    assert columns["id"]["incremental"] is True
    assert columns["id"]["data_type"] == "bigint"
    assert pipeline.default_schema.version == first + 1
    assert _rows(tmp_path, "SELECT id FROM d.r ORDER BY id") == [(1,), (2,), (3,)]


# -- other destinations -------------------------------------------------------------------------
@pytest.mark.parametrize("table_format", ["delta", "iceberg"])
def test_arrow_data_becomes_a_table_format_read_back_by_its_library(
    tmp_path: Path, table_format: str
) -> None:
    bucket = tmp_path / "bucket"
    pipe = loadstone.pipeline(
        f"fs_{table_format}",
        destination=loadstone.destinations.filesystem(bucket_url=str(bucket)),
        dataset_name="fsdata",
        pipelines_dir=str(tmp_path / "pipelines"),
    )
    frame = pd.DataFrame({"id": [1, 2], "at": pd.to_datetime(["2024-01-01", "2024-01-02"])})
    hints = {"table_format": table_format, "write_disposition": "merge", "primary_key": "id"}
    pipe.run(frame, table_name="events", **hints)
    pipe.run(pa.table({"id": [2, 3], "at": [None, None]}), table_name="events", **hints)
    if table_format == "delta":
        from deltalake import DeltaTable

        table = DeltaTable(str(bucket / "fsdata" / "events")).to_pyarrow_table()
    else:
        from pyiceberg.catalog.sql import SqlCatalog

        folder = bucket / "fsdata" / "events" / "metadata"
        newest = max(folder.glob("*.metadata.json"), key=lambda p: int(p.name.split("-")[0]))
        catalog = SqlCatalog("check", uri=f"sqlite:///{tmp_path / 'check.db'}")
        catalog.create_namespace_if_not_exists("check")
        registered = catalog.register_table(("check", "events"), f"file://{newest}")
        table = registered.scan().to_arrow()
    got = sorted((r["id"], r["at"] is None) for r in table.to_pylist())
    assert got == [(1, False), (2, True), (3, True)]


# -- values of any shape ------------------------------------------------------------------------
_values = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
    st.booleans(),
)


@settings(max_examples=15, deadline=None)
@given(
    columns=st.dictionaries(
        st.text(alphabet="abcXYZ_ 9", min_size=1, max_size=6).filter(str.strip),
        _values,
        min_size=1,
        max_size=4,
    ),
    rows=st.integers(min_value=1, max_value=4),
)
def test_any_flat_table_round_trips_its_values(
    tmp_path_factory: Any, columns: dict[str, Any], rows: int
) -> None:
    naming = loadstone.naming_convention()
    if len({naming.normalize_identifier(c) for c in columns}) < len(columns):
        return  # collisions are refused (tested in the compat scenarios)
    table = pa.table({name: [value] * rows + [None] for name, value in columns.items()})
    folder = tmp_path_factory.mktemp("any")
    _pipeline(folder).run(table, table_name="t")
    names = [naming.normalize_identifier(c) for c in columns]
    quoted = ", ".join(f'"{n}"' for n in names)
    got = _rows(folder, f"SELECT {quoted} FROM d.t")
    expected = [tuple(columns.values())] * rows + [(None,) * len(columns)]
    assert sorted(got, key=repr) == sorted(expected, key=repr)


def test_arrow_values_the_column_cannot_hold_set_the_package_aside_and_the_next_run_goes_on(
    tmp_path: Path,
) -> None:
    pipe = _pipeline(tmp_path)
    pipe.run(pa.table({"x": [1, 2]}), table_name="t")
    with pytest.raises(PipelineStepFailed, match=r"table 't' column 'x': string values"):
        pipe.run(pa.table({"x": ["a", "3"]}), table_name="t")
    pipe.run(pa.table({"x": [4]}), table_name="t")
    assert sorted(_rows(tmp_path, "SELECT x FROM d.t")) == [(1,), (2,), (4,)]
    assert pipe.list_pending_packages() == []


# cheap examples (one small table in memory): twice the profile's budget
@settings(max_examples=2 * settings.default.max_examples, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.none(),
            st.decimals(allow_nan=False, allow_infinity=False),
            st.decimals(min_value=-(10**12), max_value=10**12, allow_nan=False, places=3),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_decimal_columns_of_a_frame_get_arrows_own_type_and_values(values: list[Any]) -> None:
    """The fast conversion of a pandas column of Decimals equals ``pyarrow.array``'s."""
    from loadstone.extract.arrow_items import decimals_as_arrow

    fast = decimals_as_arrow(values)
    if fast is None:
        return  # exponents or over 38 digits: Arrow's own conversion runs
    slow = pa.array(values)
    assert fast.type == slow.type
    assert fast.to_pylist() == slow.to_pylist()
