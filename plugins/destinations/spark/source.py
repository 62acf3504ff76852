"""A package's Parquet files of one table, as a Spark DataFrame shaped like the catalog table.

Spark reads the files itself (executors, not the driver's Python), ``mergeSchema`` because
files of one table may hold different column sets, and every schema column is selected with an
ANSI ``CAST`` to its table type (a column no file has is a typed NULL), so a value that does
not fit its column fails the load instead of turning NULL.

Two Parquet types the normalizer writes cannot be read by Spark: decimals wider than 38
digits (``wei`` is ``decimal256(76, 0)``) and ``time64``. Files holding them are first
rewritten by the executors (pyarrow, one task per file) with those columns as exact text,
next to the originals in a hidden folder of the package; Spark then casts the text.
Only the files' footers are read on the driver, to learn their columns; Spark is given the
columns they make (``_file_columns``), so it does not run a job of its own to merge the
footers' schemas (a job per table and load, for what the driver already knows). A column of a
type whose Spark reading is not spelled out here leaves that to Spark, as before.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from loadstone.destinations.contract import load_files
from loadstone.plugins.destinations.spark.types import MAX_DECIMAL_PRECISION, quote

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: hidden folder (inside a table's package folder) of the files rewritten as text
AS_TEXT = "_loadstone_as_text"


def list_files(spec: Sequence[str | Path] | str | Path) -> list[Path]:
    """The Parquet files of a load request's table entry (the contract's one rule)."""
    return load_files(spec)


def unreadable(field_type: pa.DataType) -> bool:
    """Types Spark's Parquet reader refuses: wide decimals and times of day."""
    if pa.types.is_decimal(field_type):
        return bool(field_type.precision > MAX_DECIMAL_PRECISION)
    return bool(pa.types.is_time(field_type))


def rewrite_as_text(paths: tuple[str, str]) -> str:
    """Copy one file with its unreadable columns as text; returns the copy."""
    source, target = paths
    table = pq.read_table(source)
    for index, field in enumerate(table.schema):
        if unreadable(field.type):
            table = table.set_column(index, field.name, table.column(index).cast(pa.string()))
    Path(target).parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, target)
    return target


def rewrite_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Executor task (``mapInArrow``, so the same on classic Spark and Spark Connect): rewrite
    the files of ``(source, target)`` rows, one row a file."""
    for batch in batches:
        pairs = zip(batch.column(0).to_pylist(), batch.column(1).to_pylist(), strict=True)
        done = [rewrite_as_text((str(source), str(target))) for source, target in pairs]
        yield pa.RecordBatch.from_pydict({"target": done})


#: how Spark reads a Parquet column written from these Arrow types (as its schema inference)
_SPARK_READS: dict[pa.DataType, str] = {
    pa.string(): "STRING",
    pa.large_string(): "STRING",
    pa.bool_(): "BOOLEAN",
    pa.int8(): "TINYINT",
    pa.int16(): "SMALLINT",
    pa.int32(): "INT",
    pa.int64(): "BIGINT",
    pa.float32(): "FLOAT",
    pa.float64(): "DOUBLE",
    pa.date32(): "DATE",
    pa.binary(): "BINARY",
    pa.large_binary(): "BINARY",
}


def _read_as(field_type: pa.DataType) -> str | None:
    """The Spark type a Parquet column of ``field_type`` is read as; None: not spelled out."""
    if unreadable(field_type):
        return "STRING"  # the text copy's column
    if pa.types.is_timestamp(field_type):
        return "TIMESTAMP" if field_type.tz and field_type.unit in ("ms", "us") else None
    if pa.types.is_decimal(field_type):
        return f"DECIMAL({field_type.precision},{field_type.scale})"
    return _SPARK_READS.get(field_type)


def _file_columns(schemas: list[pa.Schema]) -> str | None:
    """The files' columns as a Spark DDL schema, or None where Spark is to infer them."""
    columns: dict[str, tuple[str, str]] = {}
    for schema in schemas:
        for field in schema:
            spark_type = _read_as(field.type)
            known = columns.setdefault(field.name.lower(), (field.name, spark_type or ""))
            if spark_type is None or known[1] != spark_type:
                return None
    return ", ".join(f"{quote(name)} {spark_type}" for name, spark_type in columns.values())


def _readable_files(session: SparkSession, files: list[Path]) -> tuple[list[str], str | None]:
    """The files Spark reads (unreadable ones replaced by text copies made by executors) and
    their columns (:func:`_file_columns`)."""
    jobs: list[tuple[str, str]] = []
    out: list[str] = []
    schemas = [pq.read_schema(file) for file in files]
    for index, (file, schema) in enumerate(zip(files, schemas, strict=True)):
        if any(unreadable(field.type) for field in schema):
            target = file.parent / AS_TEXT / f"{index:05d}-{file.name}"
            jobs.append((str(file), str(target)))
            out.append(str(target))
        else:
            out.append(str(file))
    if jobs:
        frame = session.createDataFrame(jobs, "source STRING, target STRING")
        # one task a file: the rewrites run side by side on the executors
        frame.repartition(len(jobs)).mapInArrow(rewrite_batches, "target STRING").collect()
    return out, _file_columns(schemas)


def table_frame(
    session: SparkSession, files: list[Path], columns: Sequence[tuple[str, str]]
) -> DataFrame:
    """The rows of ``files`` as ``columns`` (name, Spark type), in that order.

    One ``selectExpr`` of SQL casts, not a ``Column`` per name: each ``Column`` method is a
    round trip to the JVM, and a package of wide tables made tens of thousands of them."""
    readable, file_columns = _readable_files(session, files)
    reader = session.read.option("mergeSchema", "true")
    frame = (reader.schema(file_columns) if file_columns else reader).parquet(*readable)
    present = {name.lower() for name in frame.columns}
    return frame.selectExpr(*(_cast(name, spark_type, present) for name, spark_type in columns))


def _cast(name: str, spark_type: str, present: set[str]) -> str:
    """``CAST(`name` AS type) AS `name```; a column no file has is a typed NULL."""
    value = quote(name) if name.lower() in present else "NULL"
    return f"CAST({value} AS {spark_type}) AS {quote(name)}"
