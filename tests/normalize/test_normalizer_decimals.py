"""The normalizer writes each decimal column in its own precision and scale (issue 39), on the
C and the Python path alike, and refuses a value its column cannot hold exactly, naming table,
column, value, file and line; never rounded to ``decimal(38,9)``."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from normalizer_support import StandInPackage, snake_case
from schema_documents import schema_of

import loadstone
from loadstone.exceptions import PipelineStepFailed, ValueDoesNotFit
from loadstone.extract.item_json import encode_item
from loadstone.normalizers.contract import NormalizeContext
from loadstone.plugins.normalizers.relational import RelationalNormalizer
from loadstone.schema import Column, Schema, Table

HINT_38_10 = {"data_type": "decimal", "precision": 38, "scale": 10}
VALUES = ["1234567890123.0123456789", "-1E-10", "99999999999999999999999999.9999999999"]


def normalize(
    tmp_path: Path,
    values: list[Any],
    native: bool,
    hints: dict[str, Any] | None = None,
    schema: Schema | None = None,
) -> Any:
    package = StandInPackage(tmp_path / f"package_{native}")
    records = [json.loads(encode_item({"id": i, "x": v})) for i, v in enumerate(values)]
    package.add_jsonl("items", records)
    if hints:
        package.table_hints["items"] = {"columns": hints}
    normalizer = RelationalNormalizer(native=native, workers=1)
    context = NormalizeContext(spark=None, naming=snake_case())
    return normalizer.normalize(package, schema or schema_of(), context)


def column_of(result: Any, name: str = "x") -> pa.ChunkedArray:
    files = sorted(result.tables["items"].files)
    return pa.concat_tables([pq.read_table(f) for f in files]).column(name)


@pytest.mark.parametrize("native", [True, False])
def test_a_hinted_decimal_is_written_in_its_precision_and_scale(
    tmp_path: Path, native: bool
) -> None:
    result = normalize(tmp_path, [Decimal(v) for v in VALUES], native, {"x": HINT_38_10})
    column = column_of(result)
    assert column.type == pa.decimal128(38, 10)
    assert column.to_pylist() == [Decimal(v) for v in VALUES]


@pytest.mark.parametrize("native", [True, False])
def test_an_undeclared_decimal_is_decimal_38_9(tmp_path: Path, native: bool) -> None:
    result = normalize(tmp_path, [Decimal("4.56")], native)
    assert column_of(result).type == pa.decimal128(38, 9)


@pytest.mark.parametrize("native", [True, False])
def test_a_value_beyond_the_column_is_refused_naming_table_column_value_and_line(
    tmp_path: Path, native: bool
) -> None:
    with pytest.raises(ValueDoesNotFit) as refused:
        normalize(tmp_path, [Decimal("1.5"), Decimal("1E+40")], native, {"x": HINT_38_10})
    error = refused.value
    assert (error.table, error.column, error.value) == ("items", "x", "1E+40")
    assert error.column_type == "decimal(38,10)"
    assert "line 2" in str(error)


def test_text_and_doubles_coerced_into_a_decimal_column_are_held_to_it_too(
    tmp_path: Path,
) -> None:
    normalize(tmp_path, ["1.25", 2.5], True, {"x": {**HINT_38_10, "scale": 2}})
    with pytest.raises(ValueDoesNotFit, match=r"value 0\.125 does not fit decimal\(38,2\)"):
        normalize(tmp_path / "again", ["1.25", 0.125], True, {"x": {**HINT_38_10, "scale": 2}})


def test_a_decimal_variant_column_is_held_to_decimal_38_9(tmp_path: Path) -> None:
    with pytest.raises(ValueDoesNotFit) as refused:
        normalize(tmp_path, [7, Decimal("-1E-10")], True)
    assert refused.value.column == "x__v_decimal"


def test_a_typed_column_keeps_its_shape_when_a_hint_asks_another(tmp_path: Path) -> None:
    """Its table holds that shape: arrays of another would be rounded by the destination."""
    schema = schema_of()
    column = Column("x", data_type="decimal", precision=38, scale=9, nullable=True)
    schema.update_table(Table("items", columns=[Column("id", data_type="bigint"), column]))
    result = normalize(tmp_path, [Decimal("1.5")], True, {"x": HINT_38_10}, schema)
    assert column_of(result).type == pa.decimal128(38, 9)
    assert result.schema.tables["items"].columns["x"].scale == 9


def test_arrow_data_beyond_its_column_names_the_first_value_refused(tmp_path: Path) -> None:
    data = pa.table(
        {
            "id": pa.array([1, 2, 3], pa.int64()),
            "x": pa.array([Decimal(v) for v in ("1.5", "-1E-10", "2")], pa.decimal128(38, 10)),
        }
    )
    pipe = loadstone.pipeline(
        "arrow_dec",
        destination=loadstone.destinations.duckdb(str(tmp_path / "db.duckdb")),
        pipelines_dir=str(tmp_path / "pipelines"),
    )
    with pytest.raises(PipelineStepFailed) as failed:
        pipe.run(data, table_name="t", columns={"x": {"data_type": "decimal", "precision": 38}})
    error = failed.value.__cause__
    assert isinstance(error, ValueDoesNotFit)
    assert (error.column, error.value, error.column_type) == ("x", "1.5000000000", "decimal(38,0)")
