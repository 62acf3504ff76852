"""Spark DataFrames as extract inputs: written as JSON lines by Spark itself
(``df.write.json``, or the executors onto the package's object store), never collected to
the driver; the rows written are counted and checked against the DataFrame's.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Final

from loadstone.exceptions import ExtractError
from loadstone.extract.file_inputs import count_lines
from loadstone.extract.resource_hints import StoredHint, StoredHints
from loadstone.extract.typed_json import MARK
from loadstone.extract.writers import PackageWriter
from loadstone.storage.load_package import ExtractedFile
from loadstone.typing import TDataItem

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import DataType

    from loadstone.storage.package_storage import RemoteData


#: the marks of :mod:`loadstone.extract.typed_json`, as Spark writes them in front of a value
_DECIMAL_MARK: Final = MARK + "d"
_DATE_MARK: Final = MARK + "D"
_BINARY_MARK: Final = MARK + "b"


def is_spark_dataframe(value: TDataItem) -> bool:
    """A PySpark DataFrame (told by its class: pyspark is imported only when used)."""
    cls = type(value)
    return cls.__module__.startswith("pyspark.") and cls.__name__ == "DataFrame"


def _json_ready(df: DataFrame) -> DataFrame:
    """``df`` as Spark's JSON writer must see it to keep every value's meaning, at every
    depth (structs, arrays, maps).

    * NaN and infinities become null: Python objects store them as null (as dlt 1.31 does),
      and Spark would write them as the strings "NaN"/"Infinity".
    * Decimals, dates and binaries become the marked strings extract writes for Python's
      ``Decimal``, ``date`` and ``bytes`` (:mod:`loadstone.extract.typed_json`): as JSON they
      would be a float (digits lost), a date's text and base64 text, typed ``double`` and
      ``text``.
    """
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    def ready(column: Column, data_type: DataType) -> Column:
        if isinstance(data_type, (T.DoubleType, T.FloatType)):
            bad = F.isnan(column) | column.isin(float("inf"), float("-inf"))
            return F.when(bad, F.lit(None)).otherwise(column)
        if isinstance(data_type, T.DecimalType):
            return F.concat(F.lit(_DECIMAL_MARK), column.cast("string"))
        if isinstance(data_type, T.DateType):
            return F.concat(F.lit(_DATE_MARK), F.date_format(column, "yyyy-MM-dd"))
        if isinstance(data_type, T.BinaryType):
            return F.concat(F.lit(_BINARY_MARK), F.base64(column))
        if isinstance(data_type, T.StructType):
            fields = [ready(column[f.name], f.dataType).alias(f.name) for f in data_type.fields]
            return F.when(column.isNull(), F.lit(None)).otherwise(F.struct(*fields))
        if isinstance(data_type, T.ArrayType):
            return F.transform(column, lambda x: ready(x, data_type.elementType))
        if isinstance(data_type, T.MapType):
            return F.transform_values(column, lambda _k, v: ready(v, data_type.valueType))
        return column

    def changes(data_type: DataType) -> bool:
        return any(_rewritten(t) for t in _types_in(data_type))

    fields = df.schema.fields
    if not any(changes(f.dataType) for f in fields):
        return df
    return df.select(
        *[
            ready(F.col(f"`{f.name}`"), f.dataType).alias(f.name)
            if changes(f.dataType)
            else F.col(f"`{f.name}`")
            for f in fields
        ]
    )


def dataframe_hints(df: DataFrame) -> StoredHints:
    """The hints a DataFrame's own types give its tables, in the DataFrame's order: a
    decimal keeps its precision and scale (``decimal(38,18)`` loads as one, not as the
    default ``decimal(38,9)`` of a Python ``Decimal``), a date is a ``date``, a binary
    ``binary``, a string ``text`` (even when it reads like a timestamp). Struct fields are
    their table's columns (``address__zip``); a list is a nested table whose columns get
    their types the same way (``nested_hints`` by the list's path: a list of decimals is a
    ``value`` column of the list's precision); a map's keys become columns typed from their
    values, as for Python items."""
    nested: list[StoredHints] = []
    columns = _table_columns(df.schema, [], nested)
    hints: StoredHints = {"columns": columns} if columns else {}
    if nested:
        hints["x-nested-hints"] = nested
    return hints


def _table_columns(
    row_type: DataType, path: list[str], nested: list[StoredHints]
) -> dict[str, StoredHint]:
    """The typed columns of one table whose rows are ``row_type``; the nested tables of its
    lists go to ``nested`` (``path``: the fields from the root table to this one)."""
    from pyspark.sql import types as T

    columns: dict[str, StoredHint] = {}

    def visit(name: str, data_type: DataType) -> None:
        if isinstance(data_type, T.StructType):
            for field in data_type.fields:
                visit(f"{name}__{field.name}" if name else field.name, field.dataType)
        elif isinstance(data_type, T.ArrayType):
            element = data_type.elementType
            inner = [*path, name]
            if isinstance(element, T.StructType):
                found = _table_columns(element, inner, nested)
            elif isinstance(element, (T.ArrayType, T.MapType)):
                found = {}  # a list of lists or maps: typed from its values
            else:
                value = T.StructType([T.StructField("value", element)])
                found = _table_columns(value, inner, nested)
            if found:
                nested.append({"path": inner, "columns": found})
        else:
            column = _column_of(data_type)
            if column is not None:
                columns[name] = {"name": name, **column}

    visit("", row_type)
    return columns


def _column_of(data_type: DataType) -> StoredHint | None:
    """The column hints of a Spark type that is one column; None for lists, maps and types
    typed from their values."""
    from pyspark.sql import types as T

    if isinstance(data_type, T.DecimalType):
        return {"data_type": "decimal", "precision": data_type.precision, "scale": data_type.scale}
    kinds: list[tuple[type, str]] = [
        (T.BooleanType, "bool"),
        (T.IntegralType, "bigint"),
        (T.FractionalType, "double"),
        (T.StringType, "text"),
        (T.DateType, "date"),
        (T.BinaryType, "binary"),
        (T.TimestampType, "timestamp"),
        (T.TimestampNTZType, "timestamp"),  # written as UTC, as a naive datetime loads
    ]
    for kind, name in kinds:
        if isinstance(data_type, kind):
            return {"data_type": name}
    return None


def _rewritten(data_type: DataType) -> bool:
    """A type :func:`_json_ready` rewrites: floats, decimals, dates and binaries."""
    from pyspark.sql import types as T

    kinds = (T.DoubleType, T.FloatType, T.DecimalType, T.DateType, T.BinaryType)
    return isinstance(data_type, kinds)


def _types_in(data_type: DataType) -> list[DataType]:
    """``data_type`` and every type nested in it."""
    from pyspark.sql import types as T

    found = [data_type]
    if isinstance(data_type, T.StructType):
        for field in data_type.fields:
            found += _types_in(field.dataType)
    elif isinstance(data_type, T.ArrayType):
        found += _types_in(data_type.elementType)
    elif isinstance(data_type, T.MapType):
        found += _types_in(data_type.valueType)
    return found


def extract_dataframe(writer: PackageWriter, df: DataFrame, table_name: str) -> None:
    """Write a Spark DataFrame as JSON lines into the package with Spark (no collect).

    The executors write the files into the package's data folder, so on a cluster that
    folder must be storage they share with the driver (``packages.storage_url``). The rows
    read are counted and checked against the lines the driver then sees in the files: a
    non-empty DataFrame whose files the driver cannot see (each executor wrote to its own
    disk) is an error naming the folder, never an empty load.
    """
    package = writer.package
    index = writer.file_index(2000, with_copies=False)
    target = package.extracted_dir / f"spark{index:04d}"
    if target.exists():
        shutil.rmtree(target)
    expected = int(df.count())
    remote = package.remote
    if remote is not None:
        files = _dataframe_to_store(df, remote, target, table_name)
        written = sum(f.items or 0 for f in files)
        if written != expected:
            raise ExtractError(
                f"the DataFrame for table {table_name!r} has {expected} rows but {written} "
                f"reached {remote.where(target)}"
            )
        writer.add_files(files)
        return
    (
        _json_ready(df)
        .write.mode("overwrite")
        .option("timestampFormat", SPARK_TIMESTAMP_FORMAT)
        .option("ignoreNullFields", "false")
        .json(str(target))
    )
    parts = sorted(target.glob("part-*")) if target.is_dir() else []
    files = []
    for part in parts:
        if part.name.endswith(".crc") or part.stat().st_size == 0:
            continue
        lines: list[int] = []
        count_lines(part, lines)
        files.append(
            ExtractedFile(part, table_name, source=None, items=lines[0], size=part.stat().st_size)
        )
    written = sum(f.items or 0 for f in files)
    if written != expected:
        raise ExtractError(
            f"the DataFrame for table {table_name!r} has {expected} rows but {written} reached "
            f"{target} as the driver sees it: on a cluster, packages.storage_url must be "
            "storage the driver and every executor share"
        )
    writer.add_files(files)


#: the timestamp text Spark writes (ISO 8601 with microseconds and offset)
SPARK_TIMESTAMP_FORMAT = "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX"


def _dataframe_to_store(
    df: DataFrame, remote: RemoteData, target: Path, table_name: str
) -> list[ExtractedFile]:
    """A DataFrame as JSON lines on the object store holding the package, written by the
    executors (``mapInArrow``: no Hadoop connector needed), one object per partition.

    Attempt-safe: each task attempt names its own object and reports it; Spark returns the
    report of one successful attempt per partition, and every other object is deleted. The
    objects are the package's extracted files, so an interrupted run resumes from them.
    """
    from pyspark.sql import functions as F

    options = {"timestampFormat": SPARK_TIMESTAMP_FORMAT, "ignoreNullFields": "false"}
    lines = _json_ready(df).select(F.to_json(F.struct("*"), options).alias("line"))
    run = uuid.uuid4().hex[:8]
    reports = lines.mapInArrow(
        _partition_writer(remote, str(target), run), "path string, items long, size long"
    )
    try:
        rows = reports.collect()
    except Exception as exc:
        last = [line for line in str(exc).splitlines() if line.strip()][-1:] or [repr(exc)]
        raise ExtractError(
            f"writing the DataFrame for table {table_name!r} to {remote.where(target)} "
            f"failed: {last[0].strip()}"
        ) from exc
    kept = {row["path"] for row in rows if row["items"]}
    remote.remove([p for p in remote.list_files(target) if p not in kept])
    return [
        ExtractedFile(Path(row["path"]), table_name, items=int(row["items"]), size=int(row["size"]))
        for row in sorted(rows, key=lambda r: r["path"])
        if row["items"]
    ]


def _partition_writer(
    remote: RemoteData, target: str, run: str
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The task function of :func:`_dataframe_to_store`: lines in, one report row out."""

    def write(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import tempfile

        import pyarrow as pa
        from pyspark import TaskContext

        context = TaskContext.get()
        part, attempt = (context.partitionId(), context.taskAttemptId()) if context else (0, 0)
        path = os.path.join(target, f"part-{part:05d}-{run}-t{attempt}.jsonl")
        items = 0
        with tempfile.NamedTemporaryFile(prefix="loadstone-part-", suffix=".jsonl") as handle:
            for batch in batches:
                values = batch.column(0).to_pylist()
                if values:
                    handle.write(("\n".join(values) + "\n").encode("utf-8"))
                    items += len(values)
            handle.flush()
            size = handle.tell()
            if items:
                remote.upload(handle.name, path)
        yield pa.RecordBatch.from_pydict(
            {"path": [path], "items": [items], "size": [size]},
            schema=pa.schema([("path", pa.string()), ("items", pa.int64()), ("size", pa.int64())]),
        )

    return write
